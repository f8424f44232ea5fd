package dev.ferry.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeriesCollection;

/** The few chart shapes the harness needs, rendered headless to small PNGs. */
final class Charts {
  private static final int WIDTH = 760;
  private static final int HEIGHT = 440;

  private Charts() {}

  /** Grouped bars, with an optional horizontal reference line (a target or a limit); NaN for none. */
  static void bars(Path file, String title, String xLabel, String yLabel, DefaultCategoryDataset data,
      double marker, String markerLabel) throws IOException {
    JFreeChart chart = ChartFactory.createBarChart(title, xLabel, yLabel, data, PlotOrientation.VERTICAL, true, false, false);
    CategoryPlot plot = chart.getCategoryPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    if (!Double.isNaN(marker)) {
      ValueMarker m = new ValueMarker(marker, Color.RED, new BasicStroke(1.5f));
      m.setLabel(markerLabel);
      plot.addRangeMarker(m);
    }
    ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
  }

  /** Lines with points; a logarithmic y axis when latencies span orders of magnitude. */
  static void lines(Path file, String title, String xLabel, String yLabel, XYSeriesCollection data, boolean logY)
      throws IOException {
    JFreeChart chart = ChartFactory.createXYLineChart(title, xLabel, yLabel, data, PlotOrientation.VERTICAL, true, false, false);
    XYPlot plot = chart.getXYPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    plot.setRenderer(new XYLineAndShapeRenderer(true, true));
    if (logY) {
      LogAxis axis = new LogAxis(yLabel);
      axis.setSmallestValue(0.1);
      plot.setRangeAxis(axis);
    }
    ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
  }
}
