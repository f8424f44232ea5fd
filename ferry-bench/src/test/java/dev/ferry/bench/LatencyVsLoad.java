package dev.ferry.bench;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Scenario 3: latency against offered load, from 1% to 120% of capacity, for every {@link
 * Contender} on the same downstream: a pool of {@code SLOTS} connections, each call one round trip
 * plus a small cost per input. Load is open loop (arrivals on a fixed schedule, whatever the
 * answers do); keys are drawn uniformly from {@code KEYS}.
 *
 * <p>Capacity is the nominal physical limit of the store for batches of {@code BATCH}: {@code SLOTS
 * × BATCH / (round trip + BATCH × per-input cost)}.
 */
final class LatencyVsLoad implements Scenario {
  static final long ROUND_TRIP = Saturation.ROUND_TRIP;
  static final long PER_INPUT = Saturation.PER_INPUT;
  static final int SLOTS = 4;
  static final int BATCH = 8;
  static final int KEYS = 16;
  static final int MIN_SAMPLES = 500;

  @Override
  public String id() {
    return "s3";
  }

  @Override
  public String title() {
    return "Latency vs offered load: Ferry against fixed delay, unbatched and Reactor";
  }

  static double capacity() {
    return SLOTS * BATCH / ((ROUND_TRIP + BATCH * PER_INPUT) / 1e9);
  }

  @Override
  public Outcome run(BenchEnv env) throws Exception {
    List<Integer> loads = env.pick(List.of(1, 5, 10, 25, 50, 75, 90, 100, 110, 120), List.of(10, 100));
    Duration warm = env.pick(Duration.ofMillis(300), Duration.ofMillis(100));
    Duration measure = env.pick(Duration.ofMillis(1500), Duration.ofMillis(300));
    List<Contender> contenders = Contender.all();
    Map<String, XYSeries> p99 = new LinkedHashMap<>();
    Map<String, XYSeries> p50 = new LinkedHashMap<>();
    Map<String, XYSeries> tput = new LinkedHashMap<>();
    contenders.forEach(c -> {
      p99.put(c.name(), new XYSeries(c.name()));
      p50.put(c.name(), new XYSeries(c.name()));
      tput.put(c.name(), new XYSeries(c.name()));
    });
    JsonArray points = new JsonArray();
    StringBuilder csv = new StringBuilder("contender,loadPct,offeredPerSec,throughputPerSec,p50Ms,p99Ms,maxMs,samples,pending,failures,connectionsBusy,meanBatch\n");
    List<Row> rows = new ArrayList<>();
    // A discarded pass through every contender first, so that whichever runs first does not pay
    // for the JIT alone.
    for (Contender c : contenders) {
      runOne(env, c, capacity() / 2, warm, env.pick(Duration.ofMillis(1000), Duration.ofMillis(200)));
    }
    for (int load : loads) {
      double rate = capacity() * load / 100.0;
      // Low loads run longer so that p99 rests on enough samples.
      Duration m = Duration.ofNanos(Math.max(measure.toNanos(), (long) (MIN_SAMPLES / rate * 1e9)));
      String bestPeer = null;
      double bestPeerP99 = Double.MAX_VALUE;
      double ferryP99 = Double.NaN;
      for (Contender c : contenders) {
        Run run = runOne(env, c, rate, warm, m);
        Latencies.Stats s = run.stats();
        JsonObject p = new JsonObject().put("contender", c.name()).put("loadPct", load).put("offered", rate)
            .put("throughput", s.throughput()).put("p50Ms", s.p50ms()).put("p99Ms", s.p99ms()).put("maxMs", s.max() / 1e6)
            .put("samples", s.samples()).put("pending", s.pending()).put("failures", s.failures())
            .put("connectionsBusy", run.connectionsBusy()).put("meanBatch", run.meanBatch());
        points.add(p);
        csv.append(String.format("%s,%d,%.0f,%.0f,%.3f,%.3f,%.3f,%d,%d,%d,%.3f,%.2f%n", c.name(), load, rate, s.throughput(),
            s.p50ms(), s.p99ms(), s.max() / 1e6, s.samples(), s.pending(), s.failures(), run.connectionsBusy(),
            run.meanBatch()));
        System.out.printf("   %3d%% %-16s p50 %8.2f ms  p99 %8.2f ms  %,9.0f/s  busy %3.0f%%  batch %.1f%n", load, c.name(),
            s.p50ms(), s.p99ms(), s.throughput(), 100 * run.connectionsBusy(), run.meanBatch());
        p99.get(c.name()).add(load, Math.max(0.1, s.p99ms()));
        p50.get(c.name()).add(load, Math.max(0.1, s.p50ms()));
        tput.get(c.name()).add(load, s.throughput());
        if (c.name().equals("ferry")) {
          ferryP99 = s.p99ms();
        } else if (s.p99ms() < bestPeerP99) {
          bestPeerP99 = s.p99ms();
          bestPeer = c.name();
        }
      }
      rows.add(new Row(id(), "load " + load + "% p99", String.format("ferry %.2f ms; best other %s %.2f ms", ferryP99, bestPeer, bestPeerP99),
          "ferry lowest", String.format("offered %,.0f/s", rate), Row.verdict(ferryP99 <= bestPeerP99)));
    }
    rows.addAll(saturationRows(points, loads.get(loads.size() - 1)));
    JsonArray sweep = inFlightSweep(env, warm, measure, rows);

    Files.writeString(env.out().resolve("s3-latency-vs-load.csv"), csv);
    chart(env, "s3-p99-vs-load.png", "p99 latency vs offered load", "p99 (ms, log)", p99, true);
    chart(env, "s3-p50-vs-load.png", "p50 latency vs offered load", "p50 (ms, log)", p50, true);
    chart(env, "s3-throughput-vs-load.png", "Throughput vs offered load", "answered inputs / s", tput, false);
    return new Outcome(new JsonObject().put("roundTripMs", ROUND_TRIP / 1e6).put("perInputUs", PER_INPUT / 1e3)
        .put("connections", SLOTS).put("maxInFlightBatches", SLOTS).put("maxBatchSize", BATCH).put("keys", KEYS)
        .put("capacityPerSec", capacity()).put("points", points).put("maxInFlightSweep", sweep), rows);
  }

  /**
   * Ferry (zero delay) with {@code maxInFlightBatches} at the pool size, pool size + 2 and twice
   * the pool size, near and beyond saturation. Tests the hypothesis that with as many slots as
   * connections a connection sits idle from a call's completion until Ferry dispatches the next
   * batch: if so, extra slots (whose calls wait inside the pool, already issued) should raise the
   * connections' busy fraction and the throughput. Extra slots can also cost: a batch that waits in
   * the pool stops taking inputs, so batches may shrink.
   */
  private JsonArray inFlightSweep(BenchEnv env, Duration warm, Duration measure, List<Row> rows) throws Exception {
    List<Integer> slots = env.pick(List.of(SLOTS, SLOTS + 2, 2 * SLOTS), List.of(SLOTS, 2 * SLOTS));
    List<Integer> loads = env.pick(List.of(90, 100, 120), List.of(120));
    Contender ferry = Contender.ferry("fixed slots", Duration.ZERO);
    JsonArray out = new JsonArray();
    DefaultCategoryDataset chart = new DefaultCategoryDataset();
    for (int load : loads) {
      double rate = capacity() * load / 100.0;
      for (int n : slots) {
        Run run = runOne(env, ferry, new Contender.Shape(BATCH, n), rate, warm, measure);
        Latencies.Stats s = run.stats();
        out.add(new JsonObject().put("maxInFlightBatches", n).put("loadPct", load).put("offered", rate)
            .put("throughput", s.throughput()).put("p50Ms", s.p50ms()).put("p99Ms", s.p99ms())
            .put("connectionsBusy", run.connectionsBusy()).put("meanBatch", run.meanBatch()));
        System.out.printf("   %3d%% maxInFlightBatches %d: p50 %8.2f ms  p99 %8.2f ms  %,9.0f/s  busy %3.0f%%  batch %.1f%n",
            load, n, s.p50ms(), s.p99ms(), s.throughput(), 100 * run.connectionsBusy(), run.meanBatch());
        rows.add(new Row(id(), "maxInFlightBatches " + n + " (pool " + SLOTS + ") at " + load + "%",
            String.format("%,.0f/s, p50 %.1f ms, p99 %.1f ms, connections busy %.0f%%, mean batch %.1f", s.throughput(),
                s.p50ms(), s.p99ms(), 100 * run.connectionsBusy(), run.meanBatch()),
            "-", String.format("capacity %,.0f/s", capacity()), "-"));
        chart.addValue(s.throughput(), load + "% offered", "maxInFlightBatches " + n);
      }
    }
    Charts.bars(env.out().resolve("s3-max-in-flight-sweep.png"),
        "Ferry (fixed slots) throughput by maxInFlightBatches, pool of " + SLOTS + " connections", "", "answered inputs / s", chart,
        capacity(), "capacity");
    return out;
  }

  /** Throughput at the highest offered load, per contender: Ferry's should be the highest. */
  private List<Row> saturationRows(JsonArray points, int topLoad) {
    List<Row> rows = new ArrayList<>();
    double ferry = 0;
    double best = 0;
    for (Object o : points) {
      JsonObject p = (JsonObject) o;
      if (p.getInteger("loadPct") != topLoad) {
        continue;
      }
      double t = p.getDouble("throughput");
      if (p.getString("contender").equals("ferry")) {
        ferry = t;
      } else {
        best = Math.max(best, t);
      }
    }
    for (Object o : points) {
      JsonObject p = (JsonObject) o;
      if (p.getInteger("loadPct") == topLoad) {
        boolean isFerry = p.getString("contender").equals("ferry");
        rows.add(new Row(id(), "throughput at " + topLoad + "%: " + p.getString("contender"),
            String.format("%,.0f/s (%.0f%% of capacity)", p.getDouble("throughput"), 100 * p.getDouble("throughput") / capacity()),
            isFerry ? "highest" : "-", String.format("capacity %,.0f/s", capacity()),
            isFerry ? Row.verdict(ferry >= best) : "-"));
      }
    }
    return rows;
  }

  /** One open-loop run's latencies, and what the store saw during its measured window. */
  record Run(Latencies.Stats stats, double connectionsBusy, double meanBatch) {}

  private Run runOne(BenchEnv env, Contender c, double rate, Duration warm, Duration measure) throws Exception {
    return runOne(env, c, new Contender.Shape(BATCH, SLOTS), rate, warm, measure);
  }

  private Run runOne(BenchEnv env, Contender c, Contender.Shape shape, double rate, Duration warm, Duration measure)
      throws Exception {
    Context context = env.newContext();
    SimStore store = new SimStore(context, ROUND_TRIP, PER_INPUT, SLOTS);
    Contender.Running running = c.start(context, store, shape);
    int count = (int) (rate * (warm.toNanos() + measure.toNanos()) / 1e9);
    String[] keys = new String[KEYS];
    for (int k = 0; k < KEYS; k++) {
      keys[k] = "key-" + k;
    }
    SplittableRandom random = new SplittableRandom(42);
    int[] keyOf = random.ints(count, 0, KEYS).toArray(); // the same key sequence for every contender
    Latencies lat = new Latencies(count);
    // The store's counters when the measured window opens: a timer queued on the context just
    // before the generator starts, so it fires about `warm` after the first input.
    long[] atWindow = new long[4];
    context.runOnContext(v -> context.owner().setTimer(Math.max(1, warm.toMillis()), t -> {
      atWindow[0] = System.nanoTime();
      atWindow[1] = store.wireNanos.get();
      atWindow[2] = store.calls.get();
      atWindow[3] = store.inputs.get();
    }));
    long start = BenchEnv.await(OpenLoop.run(context, rate, count, lat, i -> running.submit(keys[keyOf[i]])));
    long windowEnd = System.nanoTime();
    long wire = store.wireNanos.get() - atWindow[1];
    long calls = store.calls.get() - atWindow[2];
    long inputs = store.inputs.get() - atWindow[3];
    double busy = atWindow[0] == 0 ? Double.NaN : wire / (double) (SLOTS * (windowEnd - atWindow[0]));
    long end = start + warm.toNanos() + measure.toNanos();
    QuietKeys.waitForAnswers(lat, Duration.ofMillis(500));
    Latencies.Stats s = lat.stats(start + warm.toNanos(), end, System.nanoTime());
    Future<Void> closed = running.close();
    BenchEnv.await(store.stop());
    BenchEnv.await(closed);
    return new Run(s, busy, inputs / (double) Math.max(1, calls));
  }

  private static void chart(BenchEnv env, String file, String title, String y, Map<String, XYSeries> series, boolean log)
      throws IOException {
    XYSeriesCollection data = new XYSeriesCollection();
    series.values().forEach(data::addSeries);
    Charts.lines(env.out().resolve(file), title + " (capacity " + String.format("%,.0f/s", capacity()) + ")",
        "offered load (% of capacity)", y, data, log);
  }
}
