package dev.ferry.bench;

import dev.ferry.Dispatch;
import dev.ferry.Ferry;
import dev.ferry.PerKeyConfig;
import io.vertx.core.Context;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Scenario 1: K hot keys, each kept flooded, against the physical limit
 * {@code min(K, maxInFlightBatches) × maxBatchSize / round trip}. Flooding is closed-loop: every
 * key keeps {@code 2 × maxBatchSize} inputs outstanding, so a full batch is always waiting when
 * its previous call returns; throughput is then bounded by the store and the slots, not by the
 * load.
 *
 * <p>Two limits are reported. The nominal one uses the store's configured cost of a full batch.
 * The delivered one uses the mean duration the same store's calls really took during the same
 * flood: on a loaded two-core machine, timers fire late and that lateness is the store's, not the
 * batcher's. The target is judged against the delivered limit; the gap to it is what Ferry and the
 * event loop spend between one call's completion and the next call's start.
 */
final class Saturation implements Scenario {
  static final long ROUND_TRIP = 2_000_000; // ns
  static final long PER_INPUT = 5_000; // ns
  static final int SLOTS = 8;
  static final int BATCH = 16;

  @Override
  public String id() {
    return "s1";
  }

  @Override
  public String title() {
    return "Saturation: K hot keys flooded, throughput against the limit";
  }

  /** The limit: every usable slot busy all the time, each call a full batch taking {@code callNanos}. */
  static double limit(int keys, double callNanos) {
    return Math.min(keys, SLOTS) * BATCH / (callNanos / 1e9);
  }

  @Override
  public Outcome run(BenchEnv env) throws Exception {
    List<Integer> sweep = env.pick(List.of(1, 2, 4, 8, 16, 64), List.of(1, 8));
    Duration warm = env.pick(Duration.ofMillis(700), Duration.ofMillis(150));
    Duration measure = env.pick(Duration.ofMillis(2500), Duration.ofMillis(400));
    double nominal = ROUND_TRIP + BATCH * PER_INPUT;
    JsonArray points = new JsonArray();
    List<Row> rows = new ArrayList<>();
    DefaultCategoryDataset chart = new DefaultCategoryDataset();
    for (int keys : sweep) {
      JsonObject p = flood(env, keys, warm, measure)
          .put("limitNominal", limit(keys, nominal));
      points.add(p);
      double tput = p.getDouble("throughput");
      double ratio = tput / p.getDouble("limit");
      rows.add(new Row(id(), "K=" + keys + " throughput",
          String.format("%,.0f/s = %.0f%% of limit (%.0f%% of nominal); mean batch %.1f", tput, 100 * ratio,
              100 * tput / p.getDouble("limitNominal"), p.getDouble("meanBatch")),
          ">= 90% of limit", String.format("%,.0f/s (nominal %,.0f/s)", p.getDouble("limit"), p.getDouble("limitNominal")),
          Row.verdict(ratio >= 0.9)));
      chart.addValue(tput, "Ferry measured", "K=" + keys);
      chart.addValue(p.getDouble("limit"), "limit (delivered round trip)", "K=" + keys);
      chart.addValue(p.getDouble("limitNominal"), "limit (nominal round trip)", "K=" + keys);
    }
    Charts.bars(env.out().resolve("s1-saturation.png"),
        "Saturation: throughput vs min(K, " + SLOTS + ") x " + BATCH + " / round trip", "hot keys", "inputs / s",
        chart, Double.NaN, null);
    return new Outcome(new JsonObject()
        .put("roundTripMs", ROUND_TRIP / 1e6).put("perInputUs", PER_INPUT / 1e3)
        .put("fullCallNominalMs", nominal / 1e6)
        .put("maxInFlightBatches", SLOTS).put("maxBatchSize", BATCH).put("points", points), rows);
  }

  private JsonObject flood(BenchEnv env, int keys, Duration warm, Duration measure) throws Exception {
    Context context = env.newContext();
    SimStore store = new SimStore(context, ROUND_TRIP, PER_INPUT, 0);
    int window = 2 * BATCH;
    // The seeds' fixed slots, as many as the store's connections: this scenario's figures are theirs.
    PerKeyConfig config = PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS)
        .maxBatchSize(BATCH).maxInFlightBatches(SLOTS).maxQueueing(keys * window + 1).build();
    Ferry<String, String> ferry = Ferry.perKey(context, config, s -> s, null, null,
        (String key, List<String> batch) -> store.call(batch.size(), key), (in, out) -> out);
    Flood flood = Flood.start(context, ferry, "hot-", keys, window);
    AtomicLong answered = flood.answered;
    BenchEnv.sleep(warm);
    long c0 = answered.get();
    long calls0 = store.calls.get();
    long inputs0 = store.inputs.get();
    long wire0 = store.wireNanos.get();
    long t0 = System.nanoTime();
    BenchEnv.sleep(measure);
    long c1 = answered.get();
    long t1 = System.nanoTime();
    long calls = store.calls.get() - calls0;
    double meanBatch = (store.inputs.get() - inputs0) / (double) Math.max(1, calls);
    double meanWire = (store.wireNanos.get() - wire0) / (double) Math.max(1, calls);
    BenchEnv.await(flood.stop());
    BenchEnv.await(ferry.close());
    BenchEnv.await(store.stop());
    double throughput = (c1 - c0) / ((t1 - t0) / 1e9);
    return new JsonObject().put("keys", keys).put("throughput", throughput)
        .put("limit", limit(keys, meanWire)).put("meanBatch", meanBatch).put("meanCallMs", meanWire / 1e6).put("calls", calls);
  }
}
