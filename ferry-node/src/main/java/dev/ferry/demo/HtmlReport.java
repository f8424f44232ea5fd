package dev.ferry.demo;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * The main job's HTML report: one self-contained file (no network, no other file) with the table
 * and, for each run, throughput, batch size and busy and quiet latency over time, drawn by uPlot
 * (a charting library, from its WebJar on the class path, inlined into the page).
 *
 * <p>The page's script draws the charts from the job's data (a JSON block in the page) and then
 * writes what each chart holds, series names and points, into the element {@code #chart-data}:
 * a headless browser's dump of the page shows what was actually drawn ({@code
 * HtmlReportChromiumTest}).
 */
final class HtmlReport {
  private static final String WEBJAR = "META-INF/resources/webjars/uplot/";
  private static final String WEBJAR_POM = "META-INF/maven/org.webjars.npm/uplot/pom.properties";

  private HtmlReport() {}

  /** The job's data as the page reads it: options, the table's figures and each run's timeline. */
  static JsonObject data(JobOptions options, String database, List<RunReport> warmups, List<RunReport> runs) {
    JsonArray all = new JsonArray();
    for (RunReport r : runs) {
      all.add(run(r));
    }
    JsonArray warm = new JsonArray();
    for (RunReport r : warmups) {
      warm.add(run(r));
    }
    return new JsonObject()
        .put("title", String.format(Locale.ROOT, "Ferry main job: %,d hot accounts at %,d deposits/s, %,d quiet accounts at %,d operations/s",
            options.hot(), options.rate(), options.quiet(), options.quietRate()))
        .put("database", database)
        .put("stepMs", Timeline.STEP_MS)
        .put("warmups", warm)
        .put("runs", all);
  }

  private static JsonObject run(RunReport r) {
    return new JsonObject()
        .put("label", r.label())
        .put("throughput", Math.round(r.inputsPerSecond()))
        .put("busyP50", finite(r.busyP50Ms()))
        .put("busyP99", finite(r.busyP99Ms()))
        .put("quietP50", finite(r.quietP50Ms()))
        .put("quietP99", finite(r.quietP99Ms()))
        .put("calls", r.calls())
        .put("inputs", r.inputs())
        .put("timeline", r.timeline());
  }

  private static Double finite(double v) {
    return Double.isFinite(v) ? Math.round(v * 100) / 100.0 : null;
  }

  /** Writes the report to {@code file} (creating its folder) and returns the path. */
  static Path write(Path file, JobOptions options, String database, List<RunReport> warmups, List<RunReport> runs) {
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(file, page(data(options, database, warmups, runs)), StandardCharsets.UTF_8);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the HTML report " + file, e);
    }
  }

  /** The page for {@code data}. */
  static String page(JsonObject data) {
    String dir = WEBJAR + uplotVersion() + "/";
    // No "<" at all in the JSON block inside <script>: "</" would close the element early, and
    // "<!--" followed by "<script" puts the parser in a state where the block's own </script> no
    // longer closes it, and the rest of the page (the drawing script too) became data. JSON reads
    // the escape back as the same character.
    String json = data.encode().replace("<", "\\u003c");
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        + "<title>" + escape(data.getString("title")) + "</title>\n"
        + "<!-- charts drawn with uPlot " + uplotVersion() + ", inlined; its licence:\n"
        + resource(dir + "LICENSE").replace("--", "- -") + "\n-->\n"
        + "<style>\n" + resource(dir + "dist/uPlot.min.css") + "\n" + CSS + "</style>\n"
        + "<script>\n" + resource(dir + "dist/uPlot.iife.min.js").replace("</script", "<\\/script") + "\n</script>\n"
        + "</head><body>\n"
        + "<h1>" + escape(data.getString("title")) + "</h1>\n"
        + "<p>" + escape(data.getString("database")) + "</p>\n"
        + "<div id=\"summary\"></div>\n<div id=\"charts\"></div>\n"
        + "<h2>What the charts hold</h2>\n<pre id=\"chart-data\">not drawn</pre>\n"
        + "<script type=\"application/json\" id=\"job-data\">" + json + "</script>\n"
        + "<script>\n" + SCRIPT + "</script>\n"
        + "</body></html>\n";
  }

  private static String uplotVersion() {
    Properties p = new Properties();
    try (InputStream in = open(WEBJAR_POM)) {
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p.getProperty("version");
  }

  private static String resource(String name) {
    try (InputStream in = open(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static InputStream open(String name) throws IOException {
    InputStream in = HtmlReport.class.getClassLoader().getResourceAsStream(name);
    if (in == null) {
      throw new IOException(name + " is not on the class path (the uPlot WebJar, org.webjars.npm:uplot)");
    }
    return in;
  }

  private static String escape(String s) {
    return s == null ? "" : s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  private static final String CSS = String.join("\n",
      "body { font-family: sans-serif; margin: 1.5em; color: #222; }",
      "table { border-collapse: collapse; margin: 1em 0; }",
      "td, th { padding: 0.2em 0.8em; text-align: right; border-bottom: 1px solid #ddd; }",
      "td:first-child, th:first-child { text-align: left; }",
      ".chart { margin: 1.5em 0; }",
      "pre#chart-data { font-size: 0.7em; max-height: 12em; overflow: auto; background: #f6f6f6; }",
      "");

  /**
   * Draws one chart per figure, each with every run's series on one time axis (seconds since the
   * run started), then writes what every chart holds into #chart-data.
   */
  private static final String SCRIPT = String.join("\n",
      "(function () {",
      "  var data = JSON.parse(document.getElementById('job-data').textContent);",
      "  var colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];",
      "  var runs = data.runs;",
      "  var rows = [['', 'inputs/s', 'busy p50 ms', 'busy p99 ms', 'quiet p50 ms', 'quiet p99 ms', 'calls', 'inputs']];",
      "  runs.forEach(function (r) { rows.push([r.label, r.throughput, r.busyP50, r.busyP99, r.quietP50, r.quietP99, r.calls, r.inputs]); });",
      "  var table = document.createElement('table');",
      "  rows.forEach(function (row, i) {",
      "    var tr = document.createElement('tr');",
      "    row.forEach(function (v) { var c = document.createElement(i === 0 ? 'th' : 'td'); c.textContent = v === null ? '-' : v.toLocaleString('en'); tr.appendChild(c); });",
      "    table.appendChild(tr);",
      "  });",
      "  document.getElementById('summary').appendChild(table);",
      "  data.warmups.forEach(function (warm) {",
      "    var w = document.createElement('p');",
      "    w.textContent = 'Warm-up (not in the table), ' + warm.label.replace(/^warm-up, /, '') + ': ' + warm.inputs.toLocaleString('en')",
      "      + ' inputs, ' + warm.throughput.toLocaleString('en') + ' inputs/s, quiet p99 ' + (warm.quietP99 === null ? '-' : warm.quietP99) + ' ms.';",
      "    document.getElementById('summary').appendChild(w);",
      "  });",
      "  var charts = [",
      "    {id: 'throughput', title: 'Throughput (inputs answered per second)', unit: 'inputs/s', log: false, series: [['throughput', '']]},",
      "    {id: 'batch', title: 'Mean batch (inputs per call to the store)', unit: 'inputs', log: false, series: [['busyBatch', ' busy'], ['quietBatch', ' quiet']]},",
      "    {id: 'quiet', title: 'Quiet keys: latency (ms, log scale)', unit: 'ms', log: true, series: [['quietP50', ' p50'], ['quietP99', ' p99']]},",
      "    {id: 'busy', title: 'Busy keys: latency (ms, log scale)', unit: 'ms', log: true, series: [['busyP50', ' p50'], ['busyP99', ' p99']]}",
      "  ];",
      "  var width = Math.max(600, Math.min(1100, (window.innerWidth || 1000) - 60));",
      "  var drawn = [];",
      "  // every run is sampled every stepMs from its start: step i is at (i + 1) * stepMs, whatever the run",
      "  var steps = Math.max.apply(null, runs.map(function (r) { return r.timeline.seconds.length; }));",
      "  var xs = [];",
      "  for (var i = 0; i < steps; i++) { xs.push((i + 1) * data.stepMs / 1000); }",
      "  charts.forEach(function (c) {",
      "    var aligned = [xs], series = [{label: 's'}];",
      "    runs.forEach(function (r, ri) {",
      "      c.series.forEach(function (s, si) {",
      "        var ys = [];",
      "        for (var i = 0; i < steps; i++) {",
      "          var v = i < r.timeline[s[0]].length ? r.timeline[s[0]][i] : null;",
      "          ys.push(c.log && v !== null && v <= 0 ? null : v);",
      "        }",
      "        aligned.push(ys);",
      "        series.push({label: r.label + s[1], stroke: colors[ri % colors.length], width: 2, dash: si === 0 ? undefined : [6, 4]});",
      "      });",
      "    });",
      "    var div = document.createElement('div');",
      "    div.className = 'chart';",
      "    div.id = 'chart-' + c.id;",
      "    document.getElementById('charts').appendChild(div);",
      "    var opts = {title: c.title, width: width, height: 260, series: series,",
      "      scales: {x: {time: false}, y: c.log ? {distr: 3} : {}},",
      "      axes: [{label: 'seconds into the run'}, {label: c.unit}]};",
      "    var u = new uPlot(opts, aligned, div);",
      "    drawn.push({id: c.id, title: c.title, canvases: div.getElementsByTagName('canvas').length,",
      "      series: u.series.slice(1).map(function (s) { return s.label; }), data: u.data});",
      "  });",
      "  document.getElementById('chart-data').textContent = JSON.stringify({charts: drawn});",
      "})();",
      "");
}
