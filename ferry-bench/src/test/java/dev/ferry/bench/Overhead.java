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
 * EventBusCost}). Target: {@code ferry.submit} within {@value #EVENT_BUS_TARGET}× the bare echo for a
 * hot key, and within {@value #EVENT_BUS_TARGET}× its floor of 1 + 1/(mean batch) echoes, judged on
 * the ratio of medians over {@value #EVENT_BUS_FORKS} forks × {@value #EVENT_BUS_ITERATIONS}
 * iterations (the idle-keys row, with no verdict, gets one fork of 3). With the hot key, {@code
 * EventBusCost.downstreamShare} also measures what the downstream alone costs per input, so the
 * table can split the ferry's CPU into the echo, the downstream's share and the ferry's own; the
 * same pair with a downstream that replies uncopied ({@code *UncopiedReply}, one fork) shows what is
 * left once the downstream lets go of its outcomes (ADR 0072).
 */
final class Overhead implements Scenario {
  static final double EVENT_BUS_TARGET = 1.3;
  static final int EVENT_BUS_WARMUP_ITERATIONS = 7;
  static final int EVENT_BUS_FORKS = 3;
  static final int EVENT_BUS_ITERATIONS = 10;

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
    results.addAll(jmh(env, fork, SubmitCost.class, null, 3, 1, 3, null));
    java.nio.file.Path meanBatch = java.nio.file.Files.createTempFile("ferry-mean-batch", "");
    String property = "-D" + EventBusCost.MEAN_BATCH_FILE + "=" + meanBatch;
    results.addAll(jmh(env, fork, EventBusCost.class, "1", EVENT_BUS_WARMUP_ITERATIONS, EVENT_BUS_FORKS,
        EVENT_BUS_ITERATIONS, property));
    // The uncopied-reply variants are a breakdown, not the verdict: one fork, which keeps scenario 4
    // near four minutes (EventBusInterleaved compares them round by round when it matters).
    results.addAll(jmh(env, fork, EventBusCost.class, "uncopied", EVENT_BUS_WARMUP_ITERATIONS, 1,
        EVENT_BUS_ITERATIONS, property));
    results.addAll(jmh(env, fork, EventBusCost.class, String.valueOf(EventBusCost.N), EVENT_BUS_WARMUP_ITERATIONS, 1, 3,
        property));
    Map<String, Double> score = new HashMap<>();
    JsonArray raw = new JsonArray();
    for (RunResult r : results) {
      String method = r.getParams().getBenchmark().replaceAll(".*\\.", "");
      String keys = r.getParams().getParam("keys");
      // The median of every measured iteration of every fork: one slow iteration (a neighbour's
      // compile on the shared machine) moves it less than the mean.
      double ns = median(r);
      score.put(method + "/" + keys, ns);
      List<Double> cpu = loopCpuPerInput(r);
      if (!cpu.isEmpty()) {
        score.put("cpu:" + method + "/" + keys, median(cpu));
      }
      raw.add(new JsonObject().put("benchmark", method).put("keys", Integer.parseInt(keys)).put("nsPerInputMedian", ns)
          .put("nsPerInputMean", r.getPrimaryResult().getScore()).put("error", r.getPrimaryResult().getScoreError())
          .put("iterations", iterations(r)));
    }
    for (String keys : List.of("1", String.valueOf(EventBusCost.N))) {
      java.nio.file.Path file = java.nio.file.Path.of(meanBatch + "-" + keys);
      if (java.nio.file.Files.exists(file)) {
        score.put("meanBatch/" + keys, Double.parseDouble(java.nio.file.Files.readString(file).trim()));
        java.nio.file.Files.delete(file);
      }
    }
    java.nio.file.Files.deleteIfExists(meanBatch);
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

  /**
   * One JMH pass over {@code benchmark} (one {@code keys} value, or all; {@code "uncopied"}: only
   * the hot key's uncopied-reply variants): 1 s iterations.
   */
  private static Collection<RunResult> jmh(BenchEnv env, boolean fork, Class<?> benchmark, String keys, int warmups,
      int forks, int iterations, String jvmArg) throws Exception {
    OptionsBuilder options = new OptionsBuilder();
    options.include("uncopied".equals(keys) ? benchmark.getName() + "\\..*UncopiedReply" : benchmark.getName())
        .warmupIterations(env.pick(warmups, 1)).warmupTime(env.pick(TimeValue.seconds(1), TimeValue.milliseconds(200)))
        .measurementIterations(env.pick(iterations, 1))
        .measurementTime(env.pick(TimeValue.seconds(1), TimeValue.milliseconds(200)))
        .forks(fork && !env.quick() ? forks : 0)
        .shouldFailOnError(true);
    if ("uncopied".equals(keys)) {
      options.param("keys", "1");
    } else if (keys != null) {
      options.param("keys", keys);
      if (keys.equals("1")) {
        options.exclude("UncopiedReply");
      } else {
        // The downstream's share does not depend on the keys, and the uncopied-reply variant is
        // the hot key's breakdown: both measured once, with the hot key.
        options.exclude("downstreamShare");
        options.exclude("UncopiedReply");
      }
    }
    if (jvmArg != null) {
      options.jvmArgsAppend(jvmArg);
      // Unforked (quick runs), the trial runs in this JVM and reads the property from here.
      System.setProperty(EventBusCost.MEAN_BATCH_FILE, jvmArg.substring(jvmArg.indexOf('=') + 1));
    }
    return new Runner(options.build()).run();
  }

  private static List<Double> iterations(RunResult r) {
    List<Double> all = new ArrayList<>();
    r.getBenchmarkResults().forEach(b -> b.getIterationResults().forEach(i -> all.add(i.getPrimaryResult().getScore())));
    return all;
  }

  /** Per iteration, the event loop's CPU ns per input ({@link EventBusCost.LoopCpu}), if recorded. */
  private static List<Double> loopCpuPerInput(RunResult r) {
    List<Double> all = new ArrayList<>();
    r.getBenchmarkResults().forEach(b -> b.getIterationResults().forEach(i -> {
      var cpu = i.getSecondaryResults().get("loopCpuNs");
      var inputs = i.getSecondaryResults().get("inputs");
      if (cpu != null && inputs != null && inputs.getScore() > 0) {
        all.add(cpu.getScore() / inputs.getScore());
      }
    }));
    return all;
  }

  private static double median(RunResult r) {
    return median(iterations(r));
  }

  private static double median(List<Double> values) {
    List<Double> all = new ArrayList<>(values);
    all.sort(Double::compare);
    int n = all.size();
    return n == 0 ? Double.NaN : n % 2 == 1 ? all.get(n / 2) : (all.get(n / 2 - 1) + all.get(n / 2)) / 2;
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
      double meanBatch = score.getOrDefault("meanBatch/" + keys, Double.NaN);
      // One request per input plus its share of one downstream request per batch.
      double floor = echo * (1 + 1 / meanBatch);
      rows.add(new Row(id(), "ferry.submit per input, " + label,
          String.format("median %.0f ns vs bare echo %.0f ns = %.2fx", ferry, echo, ratio),
          hot ? String.format("<= %.1fx bare echo", EVENT_BUS_TARGET) : "-",
          hot ? String.format("bare echo %.0f ns", echo) : String.format("two echoes %.0f ns (%.2fx of that)", 2 * echo, ferry / (2 * echo)),
          hot ? Row.verdict(ratio <= EVENT_BUS_TARGET) : "-"));
      double cpuFerry = score.getOrDefault("cpu:ferrySubmit/" + keys, Double.NaN);
      double cpuEcho = score.getOrDefault("cpu:bareEcho/" + keys, Double.NaN);
      rows.add(new Row(id(), "event-loop CPU per input, " + label,
          String.format("median %.0f ns vs bare echo %.0f ns = %.2fx (floor %.2fx)", cpuFerry, cpuEcho,
              cpuFerry / cpuEcho, cpuFerry / (cpuEcho * (1 + 1 / meanBatch))),
          "-", "-", "-"));
      double cpuShare = score.getOrDefault("cpu:downstreamShare/" + keys, Double.NaN);
      if (hot && !Double.isNaN(cpuShare)) {
        // Where the ferry's CPU per input goes: the caller's own request (one echo), the
        // downstream's share (its request per batch, its outcomes, Vert.x copying them back), and
        // what remains, which is the ferry's own.
        rows.add(new Row(id(), "event-loop CPU per input, breakdown, " + label,
            String.format("echo %.0f ns + downstream's share %.0f ns + ferry's own %.0f ns; ferry within %.2fx of echo + share",
                cpuEcho, cpuShare, cpuFerry - cpuEcho - cpuShare, cpuFerry / (cpuEcho + cpuShare)),
            "-", "-", "-"));
      }
      double uncopied = score.getOrDefault("ferrySubmitUncopiedReply/" + keys, Double.NaN);
      if (hot && !Double.isNaN(uncopied)) {
        // The same path when the downstream replies with LocalCodec (its choice, same JVM only):
        // Vert.x no longer deep-copies the outcomes, which is most of the downstream's share.
        double cpuUncopied = score.getOrDefault("cpu:ferrySubmitUncopiedReply/" + keys, Double.NaN);
        double cpuShareUncopied = score.getOrDefault("cpu:downstreamShareUncopiedReply/" + keys, Double.NaN);
        rows.add(new Row(id(), "ferry.submit per input, downstream replies uncopied, " + label,
            String.format("median %.0f ns vs bare echo %.0f ns = %.2fx, floor %.2fx; CPU %.0f ns = %.2fx (echo %.0f"
                + " + downstream's share %.0f + ferry's own %.0f; one fork each, so the ferry's own is a difference"
                + " of medians from different JVMs, +-100 ns: EventBusInterleaved measures it per round)", uncopied, echo, uncopied / echo, uncopied / floor,
                cpuUncopied, cpuUncopied / cpuEcho, cpuEcho, cpuShareUncopied, cpuUncopied - cpuEcho - cpuShareUncopied),
            String.format("<= %.1fx bare echo", EVENT_BUS_TARGET), String.format("bare echo %.0f ns", echo),
            Row.verdict(uncopied / echo <= EVENT_BUS_TARGET)));
        chart.addValue(uncopied, "ferry.submit, downstream replies uncopied", label);
      }
      if (hot) {
        rows.add(new Row(id(), "ferry.submit per input against its floor, " + label,
            String.format("%.0f ns vs floor %.0f ns (1 + 1/%.1f echoes) = %.2fx", ferry, floor, meanBatch, ferry / floor),
            String.format("<= %.1fx floor", EVENT_BUS_TARGET), String.format("floor %.0f ns", floor),
            Row.verdict(ferry / floor <= EVENT_BUS_TARGET)));
      }
      chart.addValue(ferry, "ferry.submit (FerryVerticle + echo downstream)", label);
      chart.addValue(echo, "bare event-bus request/echo", label);
    }
    Charts.bars(env.out().resolve("s4-eventbus-per-input.png"), "Event-loop CPU per input, local event bus (medians)", "",
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
