package dev.ferry.bench;

import dev.ferry.FerryMetrics;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Variant c of the adaptive-dispatch scenarios: the store's pool drops from 16 connections to 4 and
 * back while Ferry (all defaults but {@code maxBatchSize}) runs at a steady load. The limit in force
 * is read on Ferry's context every 20 ms and plotted with the pool size. Target: from 2 s after each
 * change until the next, the limit stays within [pool, 2 x pool].
 */
final class PoolChange implements Scenario {
  static final int KEYS = 64;
  static final int BATCH = 8;
  static final long ROUND_TRIP = 2_000_000;
  static final long PER_INPUT = 5_000;
  static final int[] POOLS = {16, 4, 16};

  @Override
  public String id() {
    return "x3c";
  }

  @Override
  public String title() {
    return "Adaptive dispatch, variant c: a pool of 16 -> 4 -> 16 connections during the run (limit over time)";
  }

  @Override
  public Outcome run(BenchEnv env) throws Exception {
    Duration phase = env.pick(Duration.ofSeconds(4), Duration.ofSeconds(1));
    // 90% of what 4 connections carry with full batches: the limit binds in every phase.
    double rate = 0.9 * 4 * BATCH / ((ROUND_TRIP + BATCH * PER_INPUT) / 1e9);
    Context context = env.newContext();
    SimStore store = new SimStore(context, ROUND_TRIP, PER_INPUT, POOLS[0]);
    Contender ferry = Contender.adaptiveSet().get(0); // "ferry", the default (adaptive): the learned limit is what this variant shows
    Contender.Running running = ferry.start(context, store, new Contender.Shape(BATCH, POOLS[0]));
    int count = (int) (rate * phase.toNanos() * POOLS.length / 1e9);
    int[] keyOf = new Downstream("x3c", "", 16, ROUND_TRIP, PER_INPUT, KEYS, false, BATCH).draw(count, 42);
    Latencies lat = new Latencies(count);
    List<long[]> samples = new ArrayList<>(); // {nanos since start, limit, pool, callsWaiting}
    long t0 = System.nanoTime();
    int[] pool = {POOLS[0]};
    context.runOnContext(v -> {
      context.owner().setPeriodic(20, id -> {
        FerryMetrics m = running.metrics();
        samples.add(new long[] {System.nanoTime() - t0, m.callLimit(), pool[0], m.callsWaiting()});
        if (System.nanoTime() - t0 > phase.toNanos() * POOLS.length) {
          context.owner().cancelTimer(id);
        }
      });
      for (int i = 1; i < POOLS.length; i++) {
        int size = POOLS[i];
        context.owner().setTimer(phase.toMillis() * i, t -> {
          pool[0] = size;
          store.resize(size);
        });
      }
    });
    BenchEnv.await(OpenLoop.run(context, rate, count, lat, i -> running.submit("key-" + keyOf[i])));
    QuietKeys.waitForAnswers(lat, Duration.ofMillis(500));
    Future<Void> closed = running.close();
    BenchEnv.await(store.stop());
    BenchEnv.await(closed);
    List<long[]> seen = ShapeVsLoad.onContext(context, () -> new ArrayList<>(samples));

    XYSeries limit = new XYSeries("limit in force");
    XYSeries poolSeries = new XYSeries("pool size");
    XYSeries twice = new XYSeries("2 x pool");
    JsonArray series = new JsonArray();
    for (long[] s : seen) {
      double sec = s[0] / 1e9;
      limit.add(sec, s[1]);
      poolSeries.add(sec, s[2]);
      twice.add(sec, 2 * s[2]);
      series.add(new JsonArray().add(Math.round(sec * 1000)).add(s[1]).add(s[2]).add(s[3]));
    }
    XYSeriesCollection data = new XYSeriesCollection();
    data.addSeries(limit);
    data.addSeries(poolSeries);
    data.addSeries(twice);
    Charts.lines(env.out().resolve("x3c-limit-over-time.png"), "x3c: the limit in force while the pool changes",
        "seconds", "calls", data, false);

    List<Row> rows = new ArrayList<>();
    JsonArray phases = new JsonArray();
    long settle = Math.min(2_000_000_000L, phase.toNanos() / 2);
    for (int i = 0; i < POOLS.length; i++) {
      long from = i * phase.toNanos() + (i == 0 ? settle / 2 : settle);
      long to = (i + 1) * phase.toNanos();
      int p = POOLS[i];
      int low = Integer.MAX_VALUE;
      int high = 0;
      for (long[] s : seen) {
        if (s[0] >= from && s[0] < to) {
          low = (int) Math.min(low, s[1]);
          high = (int) Math.max(high, s[1]);
        }
      }
      Latencies.Stats st = lat.stats(t0 + i * phase.toNanos(), t0 + to, System.nanoTime());
      boolean ok = low >= p && high <= 2 * p;
      phases.add(new JsonObject().put("pool", p).put("limitLow", low).put("limitHigh", high).put("p50Ms", st.p50ms())
          .put("p99Ms", st.p99ms()).put("throughput", st.throughput()));
      System.out.printf("   phase %d, pool %2d: limit %d..%d from %.1f s after the change; p50 %.2f ms, p99 %.2f ms%n", i, p,
          low, high, (from - i * phase.toNanos()) / 1e9, st.p50ms(), st.p99ms());
      rows.add(new Row(id(), "phase " + i + " (pool " + p + "): limit " + (settle / 1e9) + " s after the change",
          String.format("%d..%d (p99 %.1f ms)", low, high, st.p99ms()), String.format("within [%d, %d]", p, 2 * p),
          String.format("offered %,.0f/s", rate), Row.verdict(ok)));
    }
    Files.writeString(env.out().resolve("x3c-limit-over-time.json"), series.encode());
    return new Outcome(new JsonObject().put("offeredPerSec", rate).put("phaseSeconds", phase.toSeconds())
        .put("phases", phases).put("limitOverTime", series), rows);
  }
}
