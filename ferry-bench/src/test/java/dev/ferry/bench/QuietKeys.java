package dev.ferry.bench;

import dev.ferry.Dispatch;
import dev.ferry.Ferry;
import dev.ferry.PerKeyConfig;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Scenario 2: quiet keys under a busy background. A few hot keys, flooded, keep every batch slot
 * taken; meanwhile many quiet keys each send one input now and then (open loop). The quiet inputs'
 * latency is measured with {@code directIdleKeys} on and off. With it on, an idle key's input
 * should go straight out and take about one round trip; with it off, it waits for a slot behind
 * the hot keys' turns. Both in the seeds' fixed-slots mode, whose slots this scenario describes;
 * then the same load with Ferry's defaults (adaptive dispatch since ADR 0016: one learned limit,
 * at most 256, over hot and quiet calls alike), judged by the same target.
 *
 * <p>The target is absolute (the delivered round trip + 1 ms), so the generator must not add to a
 * quiet input's latency what the ferry never saw: quiet inputs arrive at their own due times
 * ({@link OpenLoop#runOnTime}), not on the 1 ms tick of the other scenarios, which made an input
 * wait up to a millisecond (p50 0.24, p99 0.63 ms on a quiet machine) before it was even submitted. The
 * clock still starts at the due time, so a loop that is busy or stalled when an input falls due
 * still counts. Each run also records where a quiet input's time goes ({@link QuietTrace}): the
 * wait to be submitted, the wait for a call, the store's hop onto its context, the call on the
 * wire, and the answer's way back, with the limit when it was sent (docs/performance.md, scenario 2).
 */
final class QuietKeys implements Scenario {
  static final long ROUND_TRIP = Saturation.ROUND_TRIP;
  static final long PER_INPUT = Saturation.PER_INPUT;
  static final int SLOTS = 4;
  static final int BATCH = 16;
  static final int HOT_KEYS = 8;
  static final int QUIET_KEYS = 2000;

  @Override
  public String id() {
    return "s2";
  }

  @Override
  public String title() {
    return "Quiet keys under a busy background: directIdleKeys on vs off (fixed slots), and the defaults";
  }

  @Override
  public Outcome run(BenchEnv env) throws Exception {
    double rate = env.pick(200.0, 200.0);
    Duration warm = env.pick(Duration.ofMillis(700), Duration.ofMillis(150));
    Duration measure = env.pick(Duration.ofMillis(4000), Duration.ofMillis(500));
    JsonObject on = measure(env, fixedSlots(true), rate, warm, measure);
    JsonObject off = measure(env, fixedSlots(false), rate, warm, measure);
    JsonObject byDefault = measure(env, PerKeyConfig.builder().maxBatchSize(BATCH), rate, warm, measure);

    double nominalMs = (ROUND_TRIP + PER_INPUT) / 1e6;
    double deliveredMs = on.getDouble("meanCallMs");
    double onP99 = on.getDouble("p99Ms");
    List<Row> rows = new ArrayList<>();
    rows.add(new Row(id(), "quiet p50 / p99, direct on", fmt(on), "p99 <= round trip + 1 ms",
        String.format("round trip %.2f ms delivered (%.2f nominal)", deliveredMs, nominalMs),
        Row.verdict(onP99 <= deliveredMs + 1)));
    rows.add(new Row(id(), "quiet p50 / p99, direct off", fmt(off), "-",
        String.format("round trip %.2f ms delivered", off.getDouble("meanCallMs")), "-"));
    double defaultRoundTrip = byDefault.getDouble("meanCallMs");
    rows.add(new Row(id(), "quiet p50 / p99, defaults (adaptive)", fmt(byDefault), "p99 <= round trip + 1 ms",
        String.format("round trip %.2f ms delivered", defaultRoundTrip),
        Row.verdict(byDefault.getDouble("p99Ms") <= defaultRoundTrip + 1)));
    rows.add(new Row(id(), "quiet hops, direct on", QuietTrace.line(on.getJsonObject("breakdown")), "-", "-", "-"));
    JsonObject b = byDefault.getJsonObject("breakdown");
    rows.add(new Row(id(), "quiet hops, defaults", QuietTrace.line(b), "-",
        String.format("%d of %d sent with the limit full; limit median %d, min %d", b.getInteger("sentWithTheLimitFull"),
            b.getInteger("samples"), b.getInteger("limitAtSendMedian"), b.getInteger("limitAtSendMin")), "-"));
    rows.add(new Row(id(), "hot throughput on / off / defaults",
        String.format("%,.0f/s / %,.0f/s / %,.0f/s", on.getDouble("hotThroughput"), off.getDouble("hotThroughput"),
            byDefault.getDouble("hotThroughput")), "-",
        String.format("%,.0f/s", SLOTS * BATCH / ((ROUND_TRIP + BATCH * PER_INPUT) / 1e9)) + " nominal", "-"));

    DefaultCategoryDataset chart = new DefaultCategoryDataset();
    chart.addValue(on.getDouble("p50Ms"), "p50", "directIdleKeys on");
    chart.addValue(onP99, "p99", "directIdleKeys on");
    chart.addValue(off.getDouble("p50Ms"), "p50", "directIdleKeys off");
    chart.addValue(off.getDouble("p99Ms"), "p99", "directIdleKeys off");
    chart.addValue(byDefault.getDouble("p50Ms"), "p50", "defaults (adaptive)");
    chart.addValue(byDefault.getDouble("p99Ms"), "p99", "defaults (adaptive)");
    Charts.bars(env.out().resolve("s2-quiet-keys.png"),
        "Quiet-key latency while " + HOT_KEYS + " hot keys hold all " + SLOTS + " slots", "", "ms", chart,
        deliveredMs + 1, "target: round trip + 1 ms");
    return new Outcome(new JsonObject().put("roundTripMs", ROUND_TRIP / 1e6).put("perInputUs", PER_INPUT / 1e3)
        .put("maxInFlightBatches", SLOTS).put("maxBatchSize", BATCH).put("hotKeys", HOT_KEYS)
        .put("quietKeys", QUIET_KEYS).put("quietRatePerSec", rate).put("directOn", on).put("directOff", off)
        .put("defaults", byDefault), rows);
  }

  private static String fmt(JsonObject r) {
    return String.format("%.2f / %.2f ms (n=%d)", r.getDouble("p50Ms"), r.getDouble("p99Ms"), r.getInteger("samples"));
  }

  /** The seeds' fixed slots, which this scenario's hot keys hold while quiet keys call outside them (direct on). */
  private static PerKeyConfig.Builder fixedSlots(boolean direct) {
    return PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).maxBatchSize(BATCH).maxInFlightBatches(SLOTS)
        .directIdleKeys(direct);
  }

  private JsonObject measure(BenchEnv env, PerKeyConfig.Builder configure, double rate, Duration warm, Duration measure)
      throws Exception {
    Context context = env.newContext();
    SimStore store = new SimStore(context, ROUND_TRIP, PER_INPUT, 0);
    PerKeyConfig config = configure.maxQueueing(100_000).build();
    boolean direct = config.directIdleKeys();
    int count = (int) (rate * (warm.toMillis() + measure.toMillis()) / 1000);
    QuietTrace trace = new QuietTrace("quiet-", QUIET_KEYS, count);
    store.trace = trace;
    Ferry<String, String> ferry = Ferry.perKey(context, config, s -> s, null, null,
        (String key, List<String> batch) -> {
          trace.called(key);
          return store.call(batch.size(), key);
        }, (in, out) -> out);
    Flood flood = Flood.start(context, ferry, "hot-", HOT_KEYS, 2 * BATCH);
    BenchEnv.sleep(warm);

    Latencies quiet = new Latencies(count);
    // The one loop everything here runs on (generator, flood, ferry, store): how busy it is.
    Promise<Long> loopId = Promise.promise();
    context.runOnContext(x -> loopId.complete(Thread.currentThread().getId()));
    long loopThread = BenchEnv.await(loopId.future());
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long cpu0 = threads.getThreadCpuTime(loopThread);
    long hot0 = flood.answered.get();
    long calls0 = store.calls.get();
    long wire0 = store.wireNanos.get();
    // Quiet keys are spread so that a key almost never has two inputs close together (within a
    // run, never: fewer inputs than keys, and 7919 is prime to their number).
    // Each quiet input reaches the loop at its own due time (not on the generator's 1 ms tick,
    // which charged up to a millisecond the ferry never saw; see the class comment).
    long start = BenchEnv.await(OpenLoop.runOnTime(context, rate, count, quiet, i -> {
      int key = (int) (i * 7919L % QUIET_KEYS);
      trace.sending(i, key, ferry);
      return ferry.submit("quiet-" + key);
    }));
    long sentAt = System.nanoTime();
    double loopBusy = (threads.getThreadCpuTime(loopThread) - cpu0) / (double) (sentAt - start);
    long hot1 = flood.answered.get();
    long calls = store.calls.get() - calls0;
    double meanWire = (store.wireNanos.get() - wire0) / (double) Math.max(1, calls);
    waitForAnswers(quiet, Duration.ofSeconds(2));
    BenchEnv.await(flood.stop());
    BenchEnv.await(ferry.close());
    BenchEnv.await(store.stop());

    long from = start + warm.toNanos();
    Latencies.Stats s = quiet.stats(from, sentAt, System.nanoTime());
    JsonObject breakdown = trace.summary(quiet, from, sentAt).put("loopCpuShare", Math.round(loopBusy * 1000) / 1000.0);
    return new JsonObject().put("breakdown", breakdown).put("dispatch", config.dispatch().jsonName()).put("directIdleKeys", direct).put("samples", s.samples()).put("pending", s.pending())
        .put("p50Ms", s.p50ms()).put("p99Ms", s.p99ms()).put("maxMs", s.max() / 1e6)
        .put("meanCallMs", meanWire / 1e6).put("hotThroughput", (hot1 - hot0) / ((sentAt - start) / 1e9));
  }

  static void waitForAnswers(Latencies l, Duration atMost) throws InterruptedException {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (l.finished() < l.issued() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
  }
}
