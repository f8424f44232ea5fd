package dev.ferry.demo;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * A run over time, for the HTML report: every {@link #STEP_MS} the answers per second, the mean
 * batch of the calls made in that step, and the latency percentiles of the replies that came in
 * it, for busy and quiet keys apart. Sampled on the load's context (a periodic timer), from the
 * load's own counters and the store-side {@link Calls} counts.
 */
final class Timeline {
  static final long STEP_MS = 250;

  /** Calls to the store so far and the inputs they carried, by kind of key. */
  interface Calls {
    long busyCalls();

    long busyCarried();

    long quietCalls();

    long quietCarried();
  }

  private final Load load;
  private final Calls calls;
  private long timer = -1;
  private long lastNanos;
  private long lastAnswered;
  private long lastBusyCalls;
  private long lastBusyCarried;
  private long lastQuietCalls;
  private long lastQuietCarried;
  private int lastBusyLatencies;
  private int lastQuietLatencies;

  final List<Double> seconds = new ArrayList<>();
  final List<Double> throughput = new ArrayList<>();
  final List<Double> busyBatch = new ArrayList<>();
  final List<Double> quietBatch = new ArrayList<>();
  final List<Double> busyP50 = new ArrayList<>();
  final List<Double> busyP99 = new ArrayList<>();
  final List<Double> quietP50 = new ArrayList<>();
  final List<Double> quietP99 = new ArrayList<>();

  Timeline(Load load, Calls calls) {
    this.load = load;
    this.calls = calls;
  }

  void start(Vertx vertx) {
    lastNanos = load.startNanos();
    lastBusyCalls = calls.busyCalls();
    lastBusyCarried = calls.busyCarried();
    lastQuietCalls = calls.quietCalls();
    lastQuietCarried = calls.quietCarried();
    timer = vertx.setPeriodic(STEP_MS, id -> sample());
  }

  /** Takes the last (partial) step and stops sampling. */
  void stop(Vertx vertx) {
    if (timer != -1) {
      vertx.cancelTimer(timer);
      timer = -1;
      sample();
    }
  }

  private void sample() {
    assert Context.isOnEventLoopThread() : "the timeline is sampled on the load's event loop only";
    long now = System.nanoTime();
    double dt = (now - lastNanos) / 1e9;
    if (dt <= 0) {
      return;
    }
    long answered = load.answered();
    long bc = calls.busyCalls();
    long bi = calls.busyCarried();
    long qc = calls.quietCalls();
    long qi = calls.quietCarried();
    seconds.add((now - load.startNanos()) / 1e9);
    throughput.add((answered - lastAnswered) / dt);
    busyBatch.add(bc == lastBusyCalls ? Double.NaN : (bi - lastBusyCarried) / (double) (bc - lastBusyCalls));
    quietBatch.add(qc == lastQuietCalls ? Double.NaN : (qi - lastQuietCarried) / (double) (qc - lastQuietCalls));
    busyP50.add(load.busyLatency.percentileMs(50, lastBusyLatencies));
    busyP99.add(load.busyLatency.percentileMs(99, lastBusyLatencies));
    quietP50.add(load.quietLatency.percentileMs(50, lastQuietLatencies));
    quietP99.add(load.quietLatency.percentileMs(99, lastQuietLatencies));
    lastNanos = now;
    lastAnswered = answered;
    lastBusyCalls = bc;
    lastBusyCarried = bi;
    lastQuietCalls = qc;
    lastQuietCarried = qi;
    lastBusyLatencies = load.busyLatency.size();
    lastQuietLatencies = load.quietLatency.size();
  }

  /** The series as JSON arrays of numbers, a gap (null) where a step had no value. */
  JsonObject toJson() {
    return new JsonObject()
        .put("seconds", array(seconds))
        .put("throughput", array(throughput))
        .put("busyBatch", array(busyBatch))
        .put("quietBatch", array(quietBatch))
        .put("busyP50", array(busyP50))
        .put("busyP99", array(busyP99))
        .put("quietP50", array(quietP50))
        .put("quietP99", array(quietP99));
  }

  private static JsonArray array(List<Double> values) {
    JsonArray a = new JsonArray();
    for (Double v : values) {
      a.add(v == null || v.isNaN() || v.isInfinite() ? null : Math.round(v * 1000) / 1000.0);
    }
    return a;
  }
}
