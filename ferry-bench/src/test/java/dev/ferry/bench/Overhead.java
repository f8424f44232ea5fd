package dev.ferry.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jfree.data.category.DefaultCategoryDataset;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Scenario 4: CPU per input on the event loop, measured by JMH in one run with short iterations so
 * the whole harness stays within minutes: the Java API against a bare promise ({@link SubmitCost}),
 * and {@code ferry.submit} on the local event bus against a bare event-bus request/echo ({@link
 * EventBusCost}). Target: {@code ferry.submit} within {@value #EVENT_BUS_TARGET}× the bare echo.
 */
final class Overhead implements Scenario {
  static final double EVENT_BUS_TARGET = 1.5;
  static final int EVENT_BUS_WARMUP_ITERATIONS = 7;

  @Override
  public String id() {
    return "s4";
  }

  @Override
  public String title() {
    return "Overhead: event-loop CPU per input (JMH)";
  }

  @Override
  public Outcome run(BenchEnv env) throws Exception {
    boolean fork = exposeClassPath();
    // One harness run, two JMH passes: the event-bus path needs a longer warm-up. On the loaded
    // two-core machine the forked JVM took 5 to 7 s before ferry.submit settled (50 us/input in
    // the first second, under 2 us from the seventh); 3 s left it half compiled. Both sides of the
    // event-bus comparison get the same settings.
    List<RunResult> results = new ArrayList<>();
    results.addAll(jmh(env, fork, SubmitCost.class, 3));
    results.addAll(jmh(env, fork, EventBusCost.class, EVENT_BUS_WARMUP_ITERATIONS));
    Map<String, Double> score = new HashMap<>();
    JsonArray raw = new JsonArray();
    for (RunResult r : results) {
      String method = r.getParams().getBenchmark().replaceAll(".*\\.", "");
      String keys = r.getParams().getParam("keys");
      double ns = r.getPrimaryResult().getScore();
      score.put(method + "/" + keys, ns);
      raw.add(new JsonObject().put("benchmark", method).put("keys", Integer.parseInt(keys)).put("nsPerInput", ns)
          .put("error", r.getPrimaryResult().getScoreError()));
    }
    List<Row> rows = new ArrayList<>();
    DefaultCategoryDataset chart = new DefaultCategoryDataset();
    for (String keys : List.of("1", String.valueOf(SubmitCost.N))) {
      String label = keys.equals("1") ? "one hot key (batched)" : "idle keys (direct calls)";
      double ferry = score.getOrDefault("ferry/" + keys, Double.NaN);
      double bare = score.getOrDefault("barePromise/" + keys, Double.NaN);
      rows.add(new Row(id(), "CPU per input, " + label,
          String.format("ferry %.0f ns vs bare promise %.0f ns (+%.0f ns)", ferry, bare, ferry - bare),
          "-", "-", "-"));
      chart.addValue(ferry, "Ferry.perKey", label);
      chart.addValue(bare, "bare promise per input", label);
    }
    Charts.bars(env.out().resolve("s4-cpu-per-input.png"), "Event-loop CPU per input", "", "ns / input", chart,
        Double.NaN, null);
    rows.addAll(eventBusRows(score, env));
    return new Outcome(new JsonObject().put("forked", fork && !env.quick()).put("eventBusTarget", EVENT_BUS_TARGET)
        .put("results", raw), rows);
  }

  /** One JMH pass over {@code benchmark}: {@code warmups} × 1 s warm-up, 3 × 1 s measured, one fork. */
  private static Collection<RunResult> jmh(BenchEnv env, boolean fork, Class<?> benchmark, int warmups)
      throws Exception {
    Options options = new OptionsBuilder()
        .include(benchmark.getName())
        .warmupIterations(env.pick(warmups, 1)).warmupTime(env.pick(TimeValue.seconds(1), TimeValue.milliseconds(200)))
        .measurementIterations(env.pick(3, 1)).measurementTime(env.pick(TimeValue.seconds(1), TimeValue.milliseconds(200)))
        .forks(fork && !env.quick() ? 1 : 0)
        .shouldFailOnError(true)
        .build();
    return new Runner(options).run();
  }

  /**
   * The event-bus path. The target is judged on the hot key, where inputs leave in batches: that is
   * the path the ferry exists for. With idle keys every input is a direct call, i.e. a request to
   * the ferry plus its own downstream request, so its floor is two bare echoes; that row shows the
   * ratio against one echo and the two-echo floor beside it, without a verdict.
   */
  private List<Row> eventBusRows(Map<String, Double> score, BenchEnv env) throws java.io.IOException {
    List<Row> rows = new ArrayList<>();
    DefaultCategoryDataset chart = new DefaultCategoryDataset();
    for (String keys : List.of("1", String.valueOf(EventBusCost.N))) {
      boolean hot = keys.equals("1");
      String label = hot ? "one hot key (batched)" : "idle keys (direct calls)";
      double ferry = score.getOrDefault("ferrySubmit/" + keys, Double.NaN);
      double echo = score.getOrDefault("bareEcho/" + keys, Double.NaN);
      double ratio = ferry / echo;
      rows.add(new Row(id(), "ferry.submit per input, " + label,
          String.format("%.0f ns vs bare echo %.0f ns = %.2fx", ferry, echo, ratio),
          hot ? String.format("<= %.1fx bare echo", EVENT_BUS_TARGET) : "-",
          hot ? String.format("bare echo %.0f ns", echo) : String.format("two echoes %.0f ns (%.2fx of that)", 2 * echo, ferry / (2 * echo)),
          hot ? Row.verdict(ratio <= EVENT_BUS_TARGET) : "-"));
      chart.addValue(ferry, "ferry.submit (FerryVerticle + echo downstream)", label);
      chart.addValue(echo, "bare event-bus request/echo", label);
    }
    Charts.bars(env.out().resolve("s4-eventbus-per-input.png"), "Event-loop CPU per input, local event bus", "",
        "ns / input", chart, Double.NaN, null);
    return rows;
  }

  /**
   * A forked JMH JVM takes its class path from {@code java.class.path}. Under {@code exec:java}
   * that property names Maven's launcher, not the project, so it is rebuilt from the class loader
   * that loaded the harness. Returns false (run JMH in this JVM) when that is not possible.
   */
  private static boolean exposeClassPath() {
    if (!(Overhead.class.getClassLoader() instanceof URLClassLoader loader)) {
      return false;
    }
    String path = Arrays.stream(loader.getURLs()).map(Overhead::file).collect(Collectors.joining(File.pathSeparator));
    if (!path.contains("test-classes")) {
      return false;
    }
    System.setProperty("java.class.path", path);
    return true;
  }

  private static String file(URL url) {
    try {
      return new File(url.toURI()).getPath();
    } catch (Exception e) {
      return url.getPath();
    }
  }
}
