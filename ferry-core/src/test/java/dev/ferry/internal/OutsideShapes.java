package dev.ferry.internal;

import dev.ferry.Dispatch;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Downstream shapes the bench's harness does not have (review AU), run against the real engine in
 * virtual time: inputs arrive at random (Poisson, seeded) over some keys, the engine batches them
 * and calls a {@link Downstream} whose capacity, cost per call and failures may depend on the time,
 * on the calls it is serving and on the batch. A run reports the limit in force over time, the
 * inputs delivered and their latency, so the learned limit can be set beside a pinned one on the
 * same arrivals.
 */
final class OutsideShapes {
  static final long MS = 1_000_000L;
  static final long SEC = 1000 * MS;

  private OutsideShapes() {}

  /** A downstream: override what differs from an unbounded one whose calls take 2 ms. */
  static class Downstream {
    /** Calls it serves at once at {@code t} (nanos since the start); the rest wait in its queue, in order. */
    int capacity(long t) {
      return Integer.MAX_VALUE;
    }

    /** How long a call of {@code inputs} takes once served, {@code busy} calls served with it (itself included). */
    long cost(long t, int inputs, int busy, SplittableRandom rnd) {
      return 2 * MS;
    }

    /** At least 0: the call fails after that long without being served (a fast refusal); negative: it is served. */
    long refuseAfter(long t, int inputs, SplittableRandom rnd) {
      return -1;
    }

    /** A served call fails (after its cost). */
    boolean fails(long t, int inputs, SplittableRandom rnd) {
      return false;
    }

    /** {@link #cost(long, int, int, SplittableRandom)} for a call of {@code key}: override where keys differ (review BC). */
    long cost(long t, int key, int inputs, int busy, SplittableRandom rnd) {
      return cost(t, inputs, busy, rnd);
    }

    /** At least 0: the call is answered after that long without taking the capacity (a cache hit); negative: it is not. */
    long hitAfter(long t, int inputs, SplittableRandom rnd) {
      return -1;
    }

    /** The network's round trip at {@code t}: half of it before a call reaches the downstream, half after it is served. */
    long roundTrip(long t) {
      return 0;
    }
  }

  /** What a run is: the load and the ferry's config. */
  /**
   * The harness's usual store: 2 ms + 5 us an input a call, no bound of its own on calls served at
   * once. Most shapes are this store with one thing changed, overridden where they differ.
   */
  static class Store extends Downstream {
    @Override
    long cost(long t, int inputs, int busy, SplittableRandom rnd) {
      return 2 * MS + 5_000L * inputs;
    }
  }

  /** {@link Store} behind a FIFO pool of {@code size} connections (0: no pool, every call served at once). */
  static class Pool extends Store {
    final int size;

    Pool(int size) {
      this.size = size;
    }

    @Override
    int capacity(long t) {
      return size == 0 ? Integer.MAX_VALUE : size;
    }
  }

  static final class Run {
    int keys = 64;
    double rate = 10_000;
    int maxBatchSize = 8;
    int maxInFlight = 0;
    int pinned = 0;
    long seconds = 10;
    long settle = SEC;
    long seed = 17;
    /** The limit's band a user expects at {@code t} (since the start), for the share of time within it; null: none. */
    java.util.function.LongFunction<int[]> band;
    /** The arrival rate at {@code t} (since the start), inputs a second; null: {@link #rate} throughout (review BC). */
    java.util.function.LongToDoubleFunction rateAt;
    /** Each caller's deadline from its submit, nanos; 0: none. */
    long deadline;
    /** The ferry's {@code callTimeout}, nanos; 0: its default. */
    long callTimeout;
    /** Keys below this are "marked" (slow keys, say): their inputs' latency is also reported apart. */
    int marked;
  }

  /** What a run measured (from its settle time on, except the trace). */
  static final class Result {
    int lowest = Integer.MAX_VALUE;
    int highest;
    double meanLimit;
    double withinBand = 1;
    double delivered;
    long failedInputs;
    long p50Micros;
    long p99Micros;
    long calls;
    double meanBatch;
    long markedP99Micros;
    long othersP99Micros;
    final StringBuilder trace = new StringBuilder();
    /** Inputs delivered a second in each 250 ms from the start, settle included. */
    final StringBuilder deliveredTrace = new StringBuilder();

    @Override
    public String toString() {
      return String.format("limit %d..%d mean %.1f, in band %.0f%%, %.0f inputs/s, failed %d, p50 %.1f ms p99 %.1f ms, batch %.1f",
          lowest, highest, meanLimit, 100 * withinBand, delivered, failedInputs, p50Micros / 1000.0, p99Micros / 1000.0,
          meanBatch) + (markedP99Micros + othersP99Micros == 0 ? ""
              : String.format(", p99 marked %.1f ms others %.1f ms", markedP99Micros / 1000.0, othersP99Micros / 1000.0));
    }
  }

  static Result run(Downstream down, Run run) {
    VirtualLoop loop = new VirtualLoop();
    long start = loop.nanoTime();
    Server server = new Server(loop, down, start, run.seed * 31 + 7);
    PerKeyConfig.Builder b = PerKeyConfig.builder().dispatch(Dispatch.ADAPTIVE).maxBatchSize(run.maxBatchSize);
    if (run.maxInFlight > 0) {
      b.maxInFlightBatches(run.maxInFlight);
    }
    if (run.pinned > 0) {
      b.pinnedLimit(run.pinned);
    }
    if (run.callTimeout > 0) {
      b.callTimeout(java.time.Duration.ofNanos(run.callTimeout));
    }
    PerKeyFerry<Integer, Integer, List<Integer>, Integer> ferry = new PerKeyFerry<>(loop, b.build(), k -> k, null, null,
        (k, ins) -> server.call(k, ins.size()).map(v -> ins), (in, r) -> in);
    SplittableRandom rnd = new SplittableRandom(run.seed);
    long end = start + run.seconds * SEC;
    long since = start + run.settle;
    Result res = new Result();
    long[] lat = new long[1 << 16];
    long[] marked = new long[1 << 16];
    long[] others = new long[1 << 16];
    int[] n = {0, 0, 0};
    long[] ok = {0};
    long[] buckets = new long[(int) (run.seconds * 4 + 1)];
    Runnable[] arrive = new Runnable[1];
    long[] nextArrival = {start};
    arrive[0] = () -> {
      long t0 = loop.nanoTime();
      boolean count = t0 - since >= 0;
      int key = rnd.nextInt(run.keys);
      Future<Integer> answer = run.deadline > 0 ? ferry.submit(key, java.time.Duration.ofNanos(run.deadline)) : ferry.submit(key);
      answer.onComplete(ar -> {
        if (ar.succeeded()) {
          buckets[(int) Math.min(buckets.length - 1, (loop.nanoTime() - start) / (250 * MS))]++;
        }
        if (!count) {
          return;
        }
        if (ar.failed()) {
          res.failedInputs++;
          return;
        }
        ok[0]++;
        long took = loop.nanoTime() - t0;
        if (n[0] < lat.length) {
          lat[n[0]++] = took;
        }
        if (key < run.marked && n[1] < marked.length) {
          marked[n[1]++] = took;
        } else if (key >= run.marked && run.marked > 0 && n[2] < others.length) {
          others[n[2]++] = took;
        }
      });
      // The next arrival at the rate in force now (the rate changes in steps far longer than a gap);
      // from the last arrival's time, so a rate of zero for a while pauses the arrivals, not skews them.
      double rate = run.rateAt == null ? run.rate : run.rateAt.applyAsDouble(t0 - start);
      long gap = rate <= 0 ? MS : (long) (-Math.log(1 - rnd.nextDouble()) / rate * 1e9);
      if (rate <= 0) {
        // No arrivals for now: look again a millisecond on, without an input.
        Runnable[] idle = new Runnable[1];
        idle[0] = () -> {
          long t = loop.nanoTime();
          double r = run.rateAt.applyAsDouble(t - start);
          if (t >= end) {
            return;
          }
          if (r <= 0) {
            loop.schedule(MS, idle[0]);
          } else {
            loop.schedule(Math.max(1, (long) (-Math.log(1 - rnd.nextDouble()) / r * 1e9)), arrive[0]);
          }
        };
        loop.schedule(MS, idle[0]);
        return;
      }
      if (loop.nanoTime() + gap < end) {
        loop.schedule(Math.max(1, gap), arrive[0]);
      }
    };
    loop.schedule(1, arrive[0]);
    long last = since;
    double limitTime = 0;
    double inBand = 0;
    long nextTrace = start;
    long callsAtSettle = -1;
    long inputsAtSettle = 0;
    while (loop.nextTimerAt() >= 0 && loop.nanoTime() < end) {
      int limit = ferry.metrics().callLimit();
      if (loop.nanoTime() - nextTrace >= 0) {
        res.trace.append(res.trace.length() == 0 ? "" : " ").append(limit);
        nextTrace += 250 * MS;
      }
      if (callsAtSettle < 0 && loop.nanoTime() - since >= 0) {
        callsAtSettle = server.calls;
        inputsAtSettle = server.inputs;
      }
      loop.advance(Math.max(1, Math.min(loop.nextTimerAt(), nextTrace) - loop.nanoTime()));
      long now = Math.min(loop.nanoTime(), end);
      if (now > since) {
        long dt = now - Math.max(last, since);
        limitTime += (double) limit * dt;
        res.lowest = Math.min(res.lowest, limit);
        res.highest = Math.max(res.highest, limit);
        if (run.band != null) {
          int[] band = run.band.apply(last - start);
          inBand += limit >= band[0] && limit <= band[1] ? dt : 0;
        }
        last = now;
      }
    }
    double span = (double) (end - since);
    res.meanLimit = limitTime / span;
    res.withinBand = run.band == null ? 1 : inBand / span;
    res.delivered = ok[0] / (span / 1e9);
    long[] sorted = Arrays.copyOf(lat, n[0]);
    Arrays.sort(sorted);
    res.p50Micros = sorted.length == 0 ? 0 : sorted[sorted.length / 2] / 1000;
    res.p99Micros = sorted.length == 0 ? 0 : sorted[(int) (sorted.length * 0.99)] / 1000;
    res.markedP99Micros = p99(marked, n[1]);
    res.othersP99Micros = p99(others, n[2]);
    for (int i = 0; i < buckets.length - 1; i++) {
      res.deliveredTrace.append(i == 0 ? "" : " ").append(buckets[i] * 4);
    }
    res.calls = server.calls - Math.max(0, callsAtSettle);
    res.meanBatch = res.calls == 0 ? 0 : (server.inputs - inputsAtSettle) / (double) res.calls;
    return res;
  }

  private static long p99(long[] lat, int n) {
    if (n == 0) {
      return 0;
    }
    long[] sorted = Arrays.copyOf(lat, n);
    Arrays.sort(sorted);
    return sorted[(int) (n * 0.99)] / 1000;
  }

  /** Serves calls as its {@link Downstream} says: at most its capacity at once, the rest in order. */
  static final class Server {
    final VirtualLoop loop;
    final Downstream down;
    final long start;
    final SplittableRandom rnd;
    final ArrayDeque<Object[]> waiting = new ArrayDeque<>();
    int busy;
    long calls;
    long inputs;
    boolean ticking;

    Server(VirtualLoop loop, Downstream down, long start, long seed) {
      this.loop = loop;
      this.down = down;
      this.start = start;
      this.rnd = new SplittableRandom(seed);
    }

    Future<Void> call(int n) {
      return call(0, n);
    }

    Future<Void> call(int key, int n) {
      Promise<Void> done = Promise.promise();
      calls++;
      inputs += n;
      long t = loop.nanoTime() - start;
      long rtt = down.roundTrip(t);
      if (rtt > 0) {
        // Half the round trip there, served, half back: the network holds the call, not the downstream.
        Promise<Void> there = Promise.promise();
        loop.schedule(Math.max(1, rtt / 2), () -> arrive(key, n, there));
        there.future().onComplete(ar -> loop.schedule(Math.max(1, rtt - rtt / 2), () -> {
          if (ar.succeeded()) {
            done.complete();
          } else {
            done.fail(ar.cause());
          }
        }));
        return done.future();
      }
      arrive(key, n, done);
      return done.future();
    }

    private void arrive(int key, int n, Promise<Void> done) {
      long t = loop.nanoTime() - start;
      long hit = down.hitAfter(t, n, rnd);
      if (hit >= 0) {
        loop.schedule(Math.max(1, hit), done::complete);
        return;
      }
      long refuse = down.refuseAfter(t, n, rnd);
      if (refuse >= 0) {
        loop.schedule(Math.max(1, refuse), () -> done.fail("refused"));
        return;
      }
      waiting.add(new Object[] {done, n, key});
      next();
    }

    @SuppressWarnings("unchecked")
    private void next() {
      long t = loop.nanoTime() - start;
      while (busy < down.capacity(t) && !waiting.isEmpty()) {
        Object[] w = waiting.poll();
        Promise<Void> done = (Promise<Void>) w[0];
        int n = (Integer) w[1];
        busy++;
        long nanos = Math.max(1, down.cost(t, (Integer) w[2], n, busy, rnd));
        boolean fail = down.fails(t, n, rnd);
        loop.schedule(nanos, () -> {
          busy--;
          if (fail) {
            done.fail("failed");
          } else {
            done.complete();
          }
          next();
        });
      }
      if (!waiting.isEmpty() && !ticking) {
        // The capacity may grow with time alone: look again a millisecond on.
        ticking = true;
        loop.schedule(MS, () -> {
          ticking = false;
          next();
        });
      }
    }
  }
}
