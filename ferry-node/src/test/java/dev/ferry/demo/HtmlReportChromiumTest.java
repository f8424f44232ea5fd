package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The main job's HTML report renders in a real browser: headless Chromium loads the file (no
 * network: everything is inlined), its script draws the charts with uPlot and writes what each
 * chart holds into {@code #chart-data}; the test reads that back from the dumped DOM and compares
 * it with the runs it wrote. Chromium comes from {@code browser/setup} (README's test command runs
 * it) or {@code FERRY_CHROMIUM}.
 */
class HtmlReportChromiumTest {
  private static final String[] FIGURES = {"throughput", "batch", "quiet", "busy"};

  @Test
  void theReportDrawsEveryRunsTimelineInChromium(@TempDir Path dir) throws Exception {
    long seed = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    String context = "seed " + seed;
    JobOptions options = JobOptions.parse("--no-progress");
    List<RunReport> warmups = List.of(run("warm-up, fixed slots", 8, random), run("warm-up, Ferry", 8, random));
    List<RunReport> runs = List.of(run("Ferry", 40, random), run("fixed slots", 42, random), run("unbatched", 44, random));
    Path file = HtmlReport.write(dir.resolve("report.html"), options, "a test database", warmups, runs);

    String dom = dumpDom(file, dir);
    Matcher m = Pattern.compile("<pre id=\"chart-data\">(.*?)</pre>", Pattern.DOTALL).matcher(dom);
    assertTrue(m.find(), context + ": no #chart-data in the dumped page:\n" + tail(dom));
    String text = unescape(m.group(1));
    assertFalse(text.equals("not drawn"), context + ": the page's script did not run");
    JsonArray charts = new JsonObject(text).getJsonArray("charts");
    assertEquals(FIGURES.length, charts.size(), context);

    for (int c = 0; c < FIGURES.length; c++) {
      JsonObject chart = charts.getJsonObject(c);
      assertEquals(FIGURES[c], chart.getString("id"), context);
      assertTrue(chart.getInteger("canvases") >= 1, context + ": chart " + FIGURES[c] + " has no canvas");
      JsonArray series = chart.getJsonArray("series");
      JsonArray data = chart.getJsonArray("data");
      assertEquals(series.size() + 1, data.size(), context + ": an x axis and one column per series");
      // every run is there, in order, with the job's own numbers
      String[] fields = fields(FIGURES[c]);
      int column = 1;
      for (RunReport run : runs) {
        for (String field : fields) {
          String label = series.getString(column - 1);
          assertTrue(label.startsWith(run.label()), context + ": series " + label + " for run " + run.label());
          JsonArray expected = run.timeline().getJsonArray(field);
          JsonArray drawn = data.getJsonArray(column);
          for (int i = 0; i < expected.size(); i++) {
            Object want = expected.getValue(i);
            Object got = drawn.getValue(i);
            if (want == null) {
              assertEquals(null, got, context + ": " + label + " step " + i);
            } else {
              assertNotNull(got, context + ": " + label + " step " + i);
              assertEquals(((Number) want).doubleValue(), ((Number) got).doubleValue(), 1e-9, context + ": " + label + " step " + i);
            }
          }
          for (int i = expected.size(); i < drawn.size(); i++) {
            assertEquals(null, drawn.getValue(i), context + ": " + label + " past its run's end");
          }
          column++;
        }
      }
    }
    assertTrue(dom.contains("unbatched") && dom.contains("Warm-up (not in the table), fixed slots:")
        && dom.contains("Warm-up (not in the table), Ferry:"), context + ": the summary table and a warm-up line per mode");
  }

  private static String[] fields(String figure) {
    return switch (figure) {
      case "throughput" -> new String[] {"throughput"};
      case "batch" -> new String[] {"busyBatch", "quietBatch"};
      case "quiet" -> new String[] {"quietP50", "quietP99"};
      default -> new String[] {"busyP50", "busyP99"};
    };
  }

  /** A run with a made-up timeline of {@code steps} samples, some of them gaps. */
  private static RunReport run(String label, int steps, SplittableRandom random) {
    String[] names = {"throughput", "busyBatch", "quietBatch", "busyP50", "busyP99", "quietP50", "quietP99"};
    JsonObject timeline = new JsonObject();
    JsonArray seconds = new JsonArray();
    for (int i = 0; i < steps; i++) {
      seconds.add((i + 1) * Timeline.STEP_MS / 1000.0);
    }
    timeline.put("seconds", seconds);
    for (String name : names) {
      JsonArray values = new JsonArray();
      for (int i = 0; i < steps; i++) {
        values.add(random.nextInt(10) == 0 ? null : 1 + random.nextInt(100_000) / 1000.0);
      }
      timeline.put(name, values);
    }
    return new RunReport(label, 1000, 100, 1090, 10, 0, 0, 0, 0, 120, 20, 1000, 100, 100,
        3.5, 20.25, 1.5, 4.75, 1.25, 2.5, 40, steps * Timeline.STEP_MS / 1000.0, 1100, 10, 0, List.of(), 1.0, 0.5, 0.1, timeline);
  }

  /** Loads {@code file} in headless Chromium and returns the DOM after its scripts ran. */
  static String dumpDom(Path file, Path dir) throws IOException, InterruptedException {
    String chromium = chromium();
    Path profile = Files.createDirectory(dir.resolve("chromium-profile"));
    Path out = dir.resolve("dom.html");
    Path err = dir.resolve("chromium.log");
    List<String> command = new ArrayList<>(List.of(chromium,
        "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-extensions", "--mute-audio",
        "--user-data-dir=" + profile.toAbsolutePath(),
        // let the page's script finish before the DOM is dumped, however slow the machine
        "--virtual-time-budget=10000", "--window-size=1200,1600",
        "--dump-dom", file.toUri().toString()));
    Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    // generous: a loaded 2-core CI machine starts Chromium in seconds, rarely in a minute
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      fail("Chromium did not finish within 180 s; its log:\n" + tail(Files.readString(err)));
    }
    String dom = Files.readString(out, StandardCharsets.UTF_8);
    if (p.exitValue() != 0 || dom.isBlank()) {
      fail("Chromium exited " + p.exitValue() + " with " + dom.length() + " characters of DOM; its log:\n"
          + tail(Files.readString(err)));
    }
    try (Stream<Path> files = Files.walk(profile)) {
      files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    }
    return dom;
  }

  private static String chromium() {
    String configured = System.getenv("FERRY_CHROMIUM");
    if (configured != null && !configured.isBlank()) {
      return configured;
    }
    for (String name : new String[] {"chromium", "chromium-browser", "google-chrome"}) {
      for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
        if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
          return Path.of(dir, name).toString();
        }
      }
    }
    fail("no Chromium on the PATH: run browser/setup first (README's test command does), or set FERRY_CHROMIUM");
    return null;
  }

  static String unescape(String html) {
    return html.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&");
  }

  private static String tail(String s) {
    return s.length() <= 3000 ? s : s.substring(s.length() - 3000);
  }
}
