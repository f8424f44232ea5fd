package dev.ferry.bench;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The benchmark harness: runs every scenario in one process and one run, writes {@code
 * results.json}, {@code summary.md} and the PNG plots into the output folder, and prints the summary.
 *
 * <pre>
 *   --out DIR      where results and plots go (default bench-results)
 *   --quick        a smoke run of a few seconds: tiny durations and sweeps, figures not meaningful
 *   --only s1,s3   run only these scenarios
 *   --runs N       adaptive-dispatch scenarios (x3, x3a ... x3e, xsweep): runs per point, median taken (default 1)
 *   --seed N       the random shapes of xsweep (default 17)
 *   --shapes N     how many of them (default 20; the first N of the same seeded sequence)
 *   --with-hold    adds the contender "ferry hold 1ms" (adaptive, maxBatchDelay 1 ms) to x3...
 *   --with-twin    adds "ferry twin" (Ferry again, same defaults, run last) to x3... and xsweep: how
 *                  often an identical copy meets the rule, and agrees with Ferry within it
 *   --loads 25,50  x3...: only these loads (in % of capacity), to look at one closely
 * </pre>
 *
 * The adaptive-dispatch scenarios and the sweep run only when named in {@code --only}.
 */
public final class Bench {
  private Bench() {}

  /** Every scenario, in run order. Cluster forwarding, when it joins, goes here. */
  static List<Scenario> scenarios() {
    List<Scenario> all = new ArrayList<>(List.of(new Saturation(), new QuietKeys(), new LatencyVsLoad(),
        new Overhead(), new Memory(), new RealStore(), new Contention(), new JobShape(), new VirtualShapes()));
    all.addAll(ShapeVsLoad.all());
    return all;
  }

  /** Run when nothing is selected: the adaptive-dispatch scenarios are long, and asked for by name. */
  static boolean runsByDefault(Scenario s) {
    return !s.id().startsWith("x");
  }

  public static void main(String[] args) throws Exception {
    // Before any AWT class loads: the plots are rendered without a display.
    System.setProperty("java.awt.headless", "true");
    List<String> a = Arrays.asList(args);
    Path out = Path.of(option(a, "--out", "bench-results"));
    boolean quick = a.contains("--quick");
    String only = option(a, "--only", "");
    Set<String> selected = only.isEmpty() ? Set.of() : Set.of(only.split(","));
    ShapeVsLoad.runs = Integer.parseInt(option(a, "--runs", "1"));
    Sweep.seed = Long.parseLong(option(a, "--seed", "17"));
    VirtualShapes.seed = Sweep.seed;
    Sweep.shapes = Integer.parseInt(option(a, "--shapes", "20"));
    String shapeList = option(a, "--shape-list", "");
    Sweep.only = shapeList.isEmpty() ? null
        : Arrays.stream(shapeList.split(",")).map(String::trim).map(Integer::valueOf).toList();
    ShapeVsLoad.withHold = a.contains("--with-hold");
    ShapeVsLoad.withTwin = a.contains("--with-twin");
    String loads = option(a, "--loads", "");
    ShapeVsLoad.onlyLoads = loads.isEmpty() ? null
        : Arrays.stream(loads.split(",")).map(String::trim).map(Integer::valueOf).toList();
    List<Scenario.Row> rows = run(out, quick, selected);
    System.out.println();
    System.out.println(table(rows));
  }

  /** Runs the selected scenarios (all when empty) and writes the results; returns the summary rows. */
  static List<Scenario.Row> run(Path out, boolean quick, Set<String> selected) throws Exception {
    Files.createDirectories(out);
    Vertx vertx = Vertx.vertx();
    BenchEnv env = new BenchEnv(vertx, out, quick);
    JsonObject results = new JsonObject().put("machine", machine()).put("quick", quick);
    List<Scenario.Row> rows = new ArrayList<>();
    try {
      for (Scenario s : scenarios()) {
        if (selected.isEmpty() ? !runsByDefault(s) : !selected.contains(s.id())) {
          continue;
        }
        System.out.printf("== %s: %s%n", s.id(), s.title());
        long t0 = System.nanoTime();
        Scenario.Outcome o = s.run(env);
        System.out.printf("   done in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        results.put(s.id(), o.data());
        rows.addAll(o.rows());
      }
    } finally {
      BenchEnv.await(vertx.close());
    }
    JsonArray summary = new JsonArray();
    rows.forEach(r -> summary.add(new JsonObject().put("scenario", r.scenario()).put("figure", r.figure())
        .put("measured", r.measured()).put("target", r.target()).put("limit", r.limit()).put("met", r.verdict())));
    results.put("summary", summary);
    Files.writeString(out.resolve("results.json"), results.encodePrettily());
    Files.writeString(out.resolve("summary.md"), table(rows) + "\n");
    return rows;
  }

  static JsonObject machine() {
    Runtime rt = Runtime.getRuntime();
    return new JsonObject()
        .put("cores", rt.availableProcessors())
        .put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"))
        .put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"))
        .put("maxHeapMb", rt.maxMemory() >> 20);
  }

  /** The summary as a Markdown table (also readable as plain text). */
  static String table(List<Scenario.Row> rows) {
    StringBuilder sb = new StringBuilder("| scenario | figure | measured | target | limit | met |\n|---|---|---|---|---|---|\n");
    for (Scenario.Row r : rows) {
      sb.append(Arrays.stream(new String[] {r.scenario(), r.figure(), r.measured(), r.target(), r.limit(), r.verdict()})
          .collect(Collectors.joining(" | ", "| ", " |\n")));
    }
    return sb.toString();
  }

  private static String option(List<String> args, String name, String fallback) {
    int i = args.indexOf(name);
    return i >= 0 && i + 1 < args.size() ? args.get(i + 1) : fallback;
  }
}
