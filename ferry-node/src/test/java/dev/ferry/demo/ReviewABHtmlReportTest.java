package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Review AB: the HTML report with text that needs escaping, and with a run that has no figure. */
class ReviewABHtmlReportTest {

  /**
   * The job's data sits in a {@code <script type="application/json">} block, where only "</" was
   * escaped. A text holding {@code <!--<script>} sends the HTML parser into the script's "double
   * escaped" state, where the block's own {@code </script>} no longer closes it: the rest of the
   * page, the drawing script included, became part of the data block and nothing was drawn.
   * Every "<" in the data is now written as {@code \u003c}, which JSON reads back the same.
   */
  @Test
  void markupInTheDataCannotSwallowThePage(@TempDir Path dir) throws Exception {
    String label = "Ferry <!--<script>";
    Path file = HtmlReport.write(dir.resolve("report.html"), JobOptions.parse("--no-progress"),
        "a test database", List.of(run("warm-up, Ferry", Double.NaN)), List.of(run(label, 2.5)));
    String dom = HtmlReportChromiumTest.dumpDom(file, dir);
    Matcher m = Pattern.compile("<pre id=\"chart-data\">(.*?)</pre>", Pattern.DOTALL).matcher(dom);
    assertTrue(m.find(), "no #chart-data in the page");
    String drawn = HtmlReportChromiumTest.unescape(m.group(1));
    assertFalse(drawn.equals("not drawn"), "the page's script never ran: the data block swallowed it");
    JsonArray series = new JsonObject(drawn).getJsonArray("charts").getJsonObject(0).getJsonArray("series");
    assertTrue(series.getString(0).startsWith(label), "the label came back as " + series);
  }

  /**
   * A warm-up without quiet traffic ({@code --quiet 0}) has no quiet p99: the table shows "-" for
   * such a figure, but the warm-up line said "quiet p99 null ms".
   */
  @Test
  void aWarmupWithoutAFigureSaysDashNotNull(@TempDir Path dir) throws Exception {
    Path file = HtmlReport.write(dir.resolve("report.html"), JobOptions.parse("--no-progress"),
        "a test database", List.of(run("warm-up, Ferry", Double.NaN)), List.of(run("Ferry", 2.5)));
    String dom = HtmlReportChromiumTest.dumpDom(file, dir);
    assertTrue(dom.contains("quiet p99 - ms"), "warm-up line: " + warmupLine(dom));
    assertFalse(dom.contains("null ms"), "warm-up line: " + warmupLine(dom));
  }

  private static String warmupLine(String dom) {
    int at = dom.indexOf("Warm-up (not in the table)");
    return at < 0 ? "(none)" : dom.substring(at, Math.min(dom.length(), at + 200));
  }

  private static RunReport run(String label, double quietP99) {
    JsonObject timeline = new JsonObject().put("seconds", new JsonArray().add(0.25).add(0.5));
    for (String name : new String[] {"throughput", "busyBatch", "quietBatch", "busyP50", "busyP99", "quietP50", "quietP99"}) {
      timeline.put(name, new JsonArray().add(1.0).add(2.0));
    }
    return new RunReport(label, 1000, 100, 1090, 10, 0, 0, 0, 0, 120, 20, 1000, 100, 100,
        3.5, 20.25, 1.5, quietP99, 1.25, 2.5, 40, 0.5, 1100, 10, 0, List.of(), 1.0, 0.5, 0.1, timeline);
  }
}
