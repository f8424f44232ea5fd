package dev.ferry.bench;

import dev.ferry.Dispatch;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Scenario {@code xjob}: the main job's workload against simulated stores, in virtual time, so its
 * figures do not depend on the machine or its load (every other scenario runs in real time).
 *
 * <p>Four hot keys under a bulk import (a window of 1,000 inputs awaiting a reply, each answer
 * sending the next) beside 2,000 quiet keys at 500 operations/s (Poisson), against a store with a
 * pool of connections whose call costs a fixed time plus a time per input, optionally stretched by
 * the other calls in service (shared CPU). Contenders: the default, adaptive dispatch with its
 * learned limit (ADR 0016); the seeds' fixed slots (16, the default until then); and adaptive
 * dispatch with the limit pinned at 16. Reported: quiet-key p50 and p99, hot-key p99, hot inputs
 * per second, the limit in force. Why: ADR 0013, 0016.
 */
final class JobShape implements Scenario {
  private static final long MS = 1_000_000L;
  /** Prints the limit in force every 100 virtual ms of every run (diagnosis: {@code -Dxjob.trace=true}). */
  static final boolean TRACE = Boolean.getBoolean("xjob.trace");

  /** A store shape: pool, call = base + per input (ms), stretched by contention x (other calls in service). */
  record Shape(String name, int pool, double baseMs, double perInputMs, double contention) {}

  static final List<Shape> SHAPES = List.of(
      new Shape("ample: pool 8, 1.5 ms + 0.05 ms/input", 8, 1.5, 0.05, 0),
      new Shape("saturated: pool 8, 10 ms + 0.5 ms/input", 8, 10, 0.5, 0),
      new Shape("shared CPU: pool 8, 3 ms + 0.1 ms/input, +15% per call in service", 8, 3, 0.1, 0.15),
      new Shape("small pool: pool 4, 2 ms + 0.05 ms/input", 4, 2, 0.05, 0));

  record Result(double quietP50, double quietP99, double hotP99, double hotPerSec, long calls, int limitLow, int limitHigh) {}

  @Override
  public String id() {
    return "xjob";
  }

  @Override
  public String title() {
    return "The main job's workload against simulated stores, in virtual time (fixed slots against adaptive dispatch)";
  }

  @Override
  public Outcome run(BenchEnv env) {
    long seconds = env.pick(30L, 10L);
    List<Row> rows = new ArrayList<>();
    JsonArray data = new JsonArray();
    // -Dxjob.shapes=2,3: only those stores (0-based, in the table's order), for a closer look.
    String only = System.getProperty("xjob.shapes", "");
    for (Shape shape : SHAPES) {
      if (!only.isBlank() && !Arrays.asList(only.split(",")).contains(String.valueOf(SHAPES.indexOf(shape)))) {
        continue;
      }
      PerKeyConfig.Builder base = PerKeyConfig.builder().maxBatchSize(100).maxQueueing(100_000);
      Result fixed = run(shape, base.dispatch(Dispatch.FIXED_SLOTS).build(), seconds);
      // The default config: adaptive dispatch, its limit learned.
      Result learned = run(shape, PerKeyConfig.builder().maxBatchSize(100).maxQueueing(100_000).build(), seconds);
      Result pinned = run(shape, PerKeyConfig.builder().maxBatchSize(100).maxQueueing(100_000)
          .dispatch(Dispatch.ADAPTIVE).maxInFlightBatches(16).pinnedLimit(16).build(), seconds);
      System.out.printf("   %s%n", shape.name());
      print("fixed slots 16", fixed);
      print("adaptive, learned (default)", learned);
      print("adaptive, pinned 16", pinned);
      data.add(new JsonObject().put("shape", shape.name()).put("fixed", json(fixed)).put("adaptive", json(learned))
          .put("adaptivePinned16", json(pinned)));
      double bound = Math.max(1.1 * fixed.quietP99, fixed.quietP99 + 1);
      rows.add(new Row(id(), shape.name() + ": quiet p99, adaptive",
          String.format("%.1f ms (limit %d..%d); fixed slots %.1f ms", learned.quietP99, learned.limitLow,
              learned.limitHigh, fixed.quietP99),
          "<= max(1.1 x fixed, fixed + 1 ms)", String.format("quiet p50 %.1f / %.1f ms", learned.quietP50, fixed.quietP50),
          Row.verdict(learned.quietP99 <= bound)));
      rows.add(new Row(id(), shape.name() + ": hot inputs/s, adaptive",
          String.format("%,.0f; fixed slots %,.0f", learned.hotPerSec, fixed.hotPerSec), ">= 0.97 x fixed", "-",
          Row.verdict(learned.hotPerSec >= 0.97 * fixed.hotPerSec)));
    }
    return new Outcome(new JsonObject().put("virtualSeconds", seconds).put("shapes", data), rows);
  }

  private static void print(String name, Result r) {
    System.out.printf("      %-27s quiet p50 %8.1f ms p99 %8.1f ms  hot p99 %8.1f ms  hot %,8.0f/s  calls %,d  limit %d..%d%n",
        name, r.quietP50, r.quietP99, r.hotP99, r.hotPerSec, r.calls, r.limitLow, r.limitHigh);
  }

  private static JsonObject json(Result r) {
    return new JsonObject().put("quietP50Ms", r.quietP50).put("quietP99Ms", r.quietP99).put("hotP99Ms", r.hotP99)
        .put("hotPerSec", r.hotPerSec).put("calls", r.calls).put("limitLow", r.limitLow).put("limitHigh", r.limitHigh);
  }

  /** A pool of connections in virtual time; calls beyond it wait in FIFO order. */
  private static final class Store {
    final VirtualLoop loop;
    final Shape shape;
    final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
    int busy;
    long calls;

    Store(VirtualLoop loop, Shape shape) {
      this.loop = loop;
      this.shape = shape;
    }

    Future<List<String>> call(String key, List<String> inputs) {
      Promise<List<String>> p = Promise.promise();
      Runnable start = () -> {
        busy++;
        calls++;
        double ms = (shape.baseMs + shape.perInputMs * inputs.size()) * (1 + shape.contention * (busy - 1));
        loop.schedule((long) (ms * MS), () -> {
          busy--;
          p.complete(inputs);
          if (!waiting.isEmpty()) {
            waiting.poll().run();
          }
        });
      };
      if (busy < shape.pool) {
        start.run();
      } else {
        waiting.add(start);
      }
      return p.future();
    }
  }

  static Result run(Shape shape, PerKeyConfig config, long seconds) {
    VirtualLoop loop = new VirtualLoop();
    Store store = new Store(loop, shape);
    PerKeyFerry<String, String, List<String>, String> ferry = new PerKeyFerry<>(loop, config,
        s -> s.substring(0, s.indexOf('/')), null, null, store::call, (in, r) -> in);
    Random rnd = new Random(Long.getLong("xjob.seed", 42));
    // Virtual time starts at an arbitrary origin: the warm-up is counted from it.
    long measureFrom = loop.nanoTime() + 5_000 * MS;
    long end = measureFrom + seconds * 1_000 * MS;
    VirtualLatencies quiet = new VirtualLatencies(2_000_000);
    VirtualLatencies hot = new VirtualLatencies(20_000_000);
    long[] state = {0, 0}; // next sequence number, hot inputs answered in the window
    Runnable[] sendHot = new Runnable[1];
    sendHot[0] = () -> {
      long t0 = loop.nanoTime();
      ferry.submit("hot" + rnd.nextInt(4) + "/" + state[0]++).onComplete(ar -> {
        long now = loop.nanoTime();
        if (t0 >= measureFrom && now < end) {
          hot.add(now - t0);
          state[1]++;
        }
        if (now < end) {
          sendHot[0].run();
        }
      });
    };
    for (int i = 0; i < 1_000; i++) {
      sendHot[0].run();
    }
    Runnable[] nextQuiet = new Runnable[1];
    nextQuiet[0] = () -> {
      long t0 = loop.nanoTime();
      ferry.submit("q" + rnd.nextInt(2_000) + "/" + state[0]++).onComplete(ar -> {
        if (t0 >= measureFrom) {
          quiet.add(loop.nanoTime() - t0);
        }
      });
      long gap = (long) (-Math.log(1 - rnd.nextDouble()) / 500 * 1e9);
      if (loop.nanoTime() + gap < end) {
        loop.schedule(gap, nextQuiet[0]);
      }
    };
    loop.schedule(1, nextQuiet[0]);
    int[] limit = {Integer.MAX_VALUE, 0};
    Runnable[] sample = new Runnable[1];
    sample[0] = () -> {
      if (loop.nanoTime() >= measureFrom) {
        int l = ferry.metrics().callLimit();
        limit[0] = Math.min(limit[0], l);
        limit[1] = Math.max(limit[1], l);
      }
      if (TRACE) {
        System.out.printf("        t %6.2f s limit %d%n", (loop.nanoTime() - measureFrom) / 1e9, ferry.metrics().callLimit());
      }
      if (loop.nanoTime() < end) {
        loop.schedule(100 * MS, sample[0]);
      }
    };
    loop.schedule(100 * MS, sample[0]);
    loop.runPending();
    // Past the end, quiet inputs still waiting are answered (the load stops; the store drains).
    while (loop.nextTimerAt() >= 0) {
      loop.advance(Math.max(1, loop.nextTimerAt() - loop.nanoTime()));
    }
    return new Result(quiet.percentileMs(50), quiet.percentileMs(99), hot.percentileMs(99),
        state[1] / (seconds * 1.0), store.calls, limit[0], limit[1]);
  }

  /** Latencies in nanos, kept whole (virtual time: no sampling noise to smooth). */
  private static final class VirtualLatencies {
    private long[] values;
    private int n;

    VirtualLatencies(int capacity) {
      values = new long[capacity];
    }

    void add(long nanos) {
      if (n == values.length) {
        values = Arrays.copyOf(values, 2 * n);
      }
      values[n++] = nanos;
    }

    double percentileMs(double p) {
      if (n == 0) {
        return -1;
      }
      long[] sorted = Arrays.copyOf(values, n);
      Arrays.sort(sorted);
      return sorted[Math.min(n - 1, (int) (n * p / 100))] / 1e6;
    }
  }
}
