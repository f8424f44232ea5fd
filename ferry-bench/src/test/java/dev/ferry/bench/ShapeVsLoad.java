package dev.ferry.bench;

import dev.ferry.FerryMetrics;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The adaptive-dispatch scenarios (scenario 3 and its variants a, b, d, e): latency against offered
 * load on one {@link Downstream} shape, for every contender of {@link Contender#adaptiveSet}, each
 * in the same run. The verdict is the issue's: at loads up to 90%, Ferry's p99 at most max(1.1 x
 * best, best + 1 ms) over the other contenders; from 100%, its throughput at least 0.97 x the best.
 * With {@code --runs 3} every point is run three times and the median p99 and throughput count.
 */
final class ShapeVsLoad implements Scenario {
  /** Runs per point (median taken); set by {@code --runs}. */
  static int runs = 1;
  /** Adds "ferry hold 1ms" to {@link Contender#adaptiveSet} ({@code --with-hold}); never counted as "best other". */
  static boolean withHold;
  /**
   * Adds "ferry twin" to {@link Contender#adaptiveSet} ({@code --with-twin}): Ferry with the same
   * defaults, run last at each load; never counted as "best other". It calibrates the rule at the
   * runs per point in use: an identical copy is judged by the rule as Ferry is, and the two are
   * judged against each other, so a point where they disagree shows what the rule's bound leaves
   * to run-to-run noise.
   */
  static boolean withTwin;
  static final String TWIN = "ferry twin";

  static final List<Integer> LOADS = List.of(1, 5, 10, 25, 50, 75, 90, 100, 110, 120);
  /** {@code --loads}: only these loads, in % of capacity (null: all of {@link #LOADS}). */
  static List<Integer> onlyLoads;

  static List<Scenario> all() {
    long ms = 1_000_000;
    return List.of(
        new ShapeVsLoad(new Downstream("x3", "scenario 3: 16 keys, pool 4", 4, 2 * ms, 5_000, 16, false, 8)),
        new ShapeVsLoad(new Downstream("x3a", "variant a: pool of 64 (the limit must grow)", 64, 2 * ms, 5_000, 256,
            false, 8)),
        new ShapeVsLoad(new Downstream("x3b", "variant b: 10,000 keys drawn Zipf(1.0)", 4, 2 * ms, 5_000, 10_000, true,
            8)),
        new PoolChange(),
        new ShapeVsLoad(new Downstream("x3d", "variant d: a fast downstream, 0.2 ms per call", 4, 200_000, 5_000, 16,
            false, 8)),
        new ShapeVsLoad(new Downstream("x3e", "variant e: maxBatchSize 10, a Zipf hot key with a fifth of the load",
            8, 2 * ms, 100_000, 64, true, 10)),
        new Sweep());
  }

  private final Downstream shape;

  ShapeVsLoad(Downstream shape) {
    this.shape = shape;
  }

  @Override
  public String id() {
    return shape.id();
  }

  @Override
  public String title() {
    return "Adaptive dispatch, " + shape.title() + " (" + shape.describe() + ")";
  }

  @Override
  public Outcome run(BenchEnv env) throws Exception {
    List<Integer> loads = onlyLoads != null ? onlyLoads : env.pick(LOADS, List.of(10, 100));
    Result r = sweep(env, shape, loads, Contender.adaptiveSet(), env.pick(Duration.ofMillis(1000), Duration.ofMillis(300)));
    Files.writeString(env.out().resolve(shape.id() + "-latency-vs-load.csv"), r.csv);
    XYSeriesCollection data = new XYSeriesCollection();
    r.p99.values().forEach(data::addSeries);
    Charts.lines(env.out().resolve(shape.id() + "-p99-vs-load.png"), shape.id() + ": p99 vs offered load ("
        + String.format("capacity %,.0f/s", shape.capacity()) + ")", "offered load (% of capacity)", "p99 (ms, log)",
        data, true);
    return new Outcome(new JsonObject().put("shape", shape.describe()).put("capacityPerSec", shape.capacity())
        .put("runs", runs).put("points", r.points), r.rows);
  }

  /**
   * {@code twinMet}: points where the twin meets the rule against the same contenders as Ferry;
   * {@code twinsAgree}: points where Ferry and the twin are each within the rule of the other (both
   * -1 without {@code --with-twin}).
   */
  record Result(JsonArray points, List<Row> rows, Map<String, XYSeries> p99, String csv, int met, int judged,
      int twinMet, int twinsAgree) {}

  /**
   * The rule: at loads up to 90% a p99 at most max(1.1 x best, best + 1 ms); from 100% a
   * throughput at least 0.97 x the best.
   */
  static boolean meets(int load, Point p, Point best) {
    return load <= 90 ? p.p99ms <= Math.max(1.1 * best.p99ms, best.p99ms + 1) : p.throughput >= 0.97 * best.throughput;
  }

  /** Every contender at every load (median of {@link #runs}), with the verdict per load. */
  static Result sweep(BenchEnv env, Downstream shape, List<Integer> loads, List<Contender> contenders, Duration measure)
      throws Exception {
    Duration warm = env.pick(Duration.ofMillis(300), Duration.ofMillis(100));
    Map<String, XYSeries> p99 = new LinkedHashMap<>();
    contenders.forEach(c -> p99.put(c.name(), new XYSeries(c.name())));
    JsonArray points = new JsonArray();
    List<Row> rows = new ArrayList<>();
    StringBuilder csv = new StringBuilder("contender,loadPct,offeredPerSec,throughputPerSec,p50Ms,p99Ms,maxMs,samples,meanBatch,finalLimit\n");
    for (Contender c : contenders) {
      // A discarded pass, so that whichever runs first does not pay for the JIT alone.
      runOne(env, shape, c, shape.capacity() / 2, warm, Duration.ofMillis(env.pick(500, 100)));
    }
    int met = 0;
    int judged = 0;
    int twinMet = 0;
    int twinsAgree = 0;
    boolean twin = contenders.stream().anyMatch(c -> c.name().equals(TWIN));
    for (int load : loads) {
      double rate = shape.capacity() * load / 100.0;
      Duration m = Duration.ofNanos(Math.min(3_000_000_000L, Math.max(measure.toNanos(), (long) (500 / rate * 1e9))));
      Map<String, Point> at = new LinkedHashMap<>();
      for (Contender c : contenders) {
        List<Point> tries = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
          tries.add(runOne(env, shape, c, rate, warm, m));
        }
        Point p = Point.median(tries);
        at.put(c.name(), p);
        points.add(p.json().put("contender", c.name()).put("loadPct", load).put("offered", rate));
        csv.append(String.format("%s,%d,%.0f,%.0f,%.3f,%.3f,%.3f,%d,%.2f,%d%n", c.name(), load, rate, p.throughput,
            p.p50ms, p.p99ms, p.maxMs, p.samples, p.meanBatch, p.finalLimit));
        System.out.printf("   %3d%% %-17s p50 %8.2f ms  p99 %8.2f ms  %,9.0f/s  batch %5.1f%s%n", load, c.name(), p.p50ms,
            p.p99ms, p.throughput, p.meanBatch, p.finalLimit > 0 ? "  limit " + p.finalLimit : "");
        p99.get(c.name()).add(load, Math.max(0.05, p.p99ms));
      }
      Point ferry = at.get("ferry");
      String best = null;
      for (Map.Entry<String, Point> e : at.entrySet()) {
        if (e.getKey().startsWith("ferry")) {
          continue;
        }
        boolean better = best == null || (load <= 90 ? e.getValue().p99ms < at.get(best).p99ms
            : e.getValue().throughput > at.get(best).throughput);
        if (better) {
          best = e.getKey();
        }
      }
      Point b = at.get(best);
      boolean ok = meets(load, ferry, b);
      String measured;
      String target;
      if (load <= 90) {
        measured = String.format("ferry p99 %.2f ms; best other %s %.2f ms", ferry.p99ms, best, b.p99ms);
        target = String.format("<= %.2f ms", Math.max(1.1 * b.p99ms, b.p99ms + 1));
      } else {
        measured = String.format("ferry %,.0f/s (p99 %.1f ms); best other %s %,.0f/s", ferry.throughput, ferry.p99ms,
            best, b.throughput);
        target = String.format(">= %,.0f/s", 0.97 * b.throughput);
      }
      if (twin) {
        Point t = at.get(TWIN);
        boolean tOk = meets(load, t, b);
        boolean agree = meets(load, ferry, t) && meets(load, t, ferry);
        twinMet += tOk ? 1 : 0;
        twinsAgree += agree ? 1 : 0;
        measured += load <= 90 ? String.format("; twin %.2f ms", t.p99ms) : String.format("; twin %,.0f/s", t.throughput);
        measured += (tOk ? ", twin meets it" : ", twin misses it") + (agree ? "" : ", the two disagree");
      }
      met += ok ? 1 : 0;
      judged++;
      rows.add(new Row(shape.id(), "load " + load + "%", measured, target, String.format("offered %,.0f/s", rate),
          Row.verdict(ok)));
    }
    if (twin) {
      rows.add(new Row(shape.id(), "ferry twin (the same defaults, run last)",
          String.format("meets the rule at %d of %d loads; ferry and twin within the rule of each other at %d", twinMet,
              judged, twinsAgree), "calibration", "", "-"));
    }
    return new Result(points, rows, p99, csv.toString(), met, judged, twin ? twinMet : -1, twin ? twinsAgree : -1);
  }

  /** One contender at one load: latencies, throughput, mean batch, and for Ferry the limit it ended with. */
  record Point(double p50ms, double p99ms, double maxMs, double throughput, int samples, double meanBatch, int finalLimit) {
    JsonObject json() {
      return new JsonObject().put("p50Ms", p50ms).put("p99Ms", p99ms).put("maxMs", maxMs).put("throughput", throughput)
          .put("samples", samples).put("meanBatch", meanBatch).put("finalLimit", finalLimit);
    }

    /** The run with the median p99 (and, separately, the median throughput). */
    static Point median(List<Point> tries) {
      if (tries.size() == 1) {
        return tries.get(0);
      }
      Point[] byP99 = tries.toArray(new Point[0]);
      Arrays.sort(byP99, (x, y) -> Double.compare(x.p99ms, y.p99ms));
      double[] t = tries.stream().mapToDouble(Point::throughput).sorted().toArray();
      Point m = byP99[byP99.length / 2];
      return new Point(m.p50ms, m.p99ms, m.maxMs, t[t.length / 2], m.samples, m.meanBatch, m.finalLimit);
    }
  }

  static Point runOne(BenchEnv env, Downstream shape, Contender c, double rate, Duration warm, Duration measure)
      throws Exception {
    Context context = env.newContext();
    SimStore store = new SimStore(context, shape.roundTripNanos(), shape.perInputNanos(), shape.pool());
    Contender.Running running = c.start(context, store, new Contender.Shape(shape.maxBatchSize(), shape.pool()));
    int count = Math.max(1, (int) (rate * (warm.toNanos() + measure.toNanos()) / 1e9));
    String[] keys = new String[shape.keys()];
    for (int k = 0; k < keys.length; k++) {
      keys[k] = "key-" + k;
    }
    int[] keyOf = shape.draw(count, 42);
    Latencies lat = new Latencies(count);
    long[] atWindow = new long[2];
    context.runOnContext(v -> context.owner().setTimer(Math.max(1, warm.toMillis()), t -> {
      atWindow[0] = store.calls.get();
      atWindow[1] = store.inputs.get();
    }));
    long start = BenchEnv.await(OpenLoop.run(context, rate, count, lat, i -> running.submit(keys[keyOf[i]])));
    long calls = store.calls.get() - atWindow[0];
    long inputs = store.inputs.get() - atWindow[1];
    long end = start + warm.toNanos() + measure.toNanos();
    QuietKeys.waitForAnswers(lat, Duration.ofMillis(500));
    Latencies.Stats s = lat.stats(start + warm.toNanos(), end, System.nanoTime());
    int limit = onContext(context, () -> {
      FerryMetrics fm = running.metrics();
      return fm == null ? 0 : fm.callLimit();
    });
    Future<Void> closed = running.close();
    BenchEnv.await(store.stop());
    BenchEnv.await(closed);
    return new Point(s.p50ms(), s.p99ms(), s.max() / 1e6, s.throughput(), s.samples(), inputs / (double) Math.max(1, calls),
        limit);
  }

  static <T> T onContext(Context context, java.util.function.Supplier<T> read) throws Exception {
    io.vertx.core.Promise<T> p = io.vertx.core.Promise.promise();
    context.runOnContext(v -> p.complete(read.get()));
    return BenchEnv.await(p.future());
  }
}
