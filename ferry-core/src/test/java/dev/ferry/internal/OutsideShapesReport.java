package dev.ferry.internal;

import static dev.ferry.internal.OutsideShapes.MS;
import static dev.ferry.internal.OutsideShapes.SEC;

import dev.ferry.internal.OutsideShapes.Downstream;
import dev.ferry.internal.OutsideShapes.Pool;
import dev.ferry.internal.OutsideShapes.Run;
import dev.ferry.internal.OutsideShapes.Store;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Review AU's measurement of the learned limit against downstream shapes from outside the
 * repository, skipped unless asked for: {@code mvn -o verify -pl ferry-core -am
 * -Dtest=OutsideShapesReport -Dferry.outside=all} (or a shape's name). Prints, per shape, the
 * learned limit's run and pinned limits' runs on the same arrivals.
 */
class OutsideShapesReport {

  record Case(String name, Supplier<Downstream> down, Supplier<Run> run, int[] pins) {}

  static Run run(int keys, double rate, int seconds) {
    Run r = new Run();
    r.keys = keys;
    r.rate = rate;
    r.seconds = seconds;
    return r;
  }

  static Downstream pool(int size, long base, long perInput) {
    return new Downstream() {
      @Override
      int capacity(long t) {
        return size;
      }

      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        return base + perInput * inputs;
      }
    };
  }

  /** A remote downstream: 50 ms round trip and 5 us an input, no capacity bound. */
  static Downstream remote() {
    return new Downstream() {
      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        return 50 * MS + 5_000L * inputs;
      }
    };
  }

  /** A pool of 16 at 2 ms + 5 us an input that drops to 1 from 4 s to 7 s. */
  static Downstream dropping() {
    return new Store() {
      @Override
      int capacity(long t) {
        return t >= 4 * SEC && t < 7 * SEC ? 1 : 16;
      }
    };
  }

  /**
   * A pool of 16 at 2 ms + 5 us an input whose calls all fail from 4 s to 6 s: at once (0.1 ms), or
   * with {@code hangs} after 1 s (a client's own timeout; the ferry's call timeout is set to 1 s too).
   */
  static Downstream outage(boolean hangs) {
    return new Pool(16) {
      @Override
      long refuseAfter(long t, int inputs, SplittableRandom rnd) {
        return t >= 4 * SEC && t < 6 * SEC ? (hangs ? SEC + MS : 100_000L) : -1;
      }
    };
  }

  /**
   * A pool of 16 at 2 ms + 5 us an input that stops the world for 200 ms every 2 s (a GC at the
   * downstream): nothing starts, nothing completes; what would have completed then completes at
   * the pause's end, all at once.
   */
  static Downstream pausing() {
    return new Downstream() {
      final long period = 2 * SEC;
      final long pause = 200 * MS;

      @Override
      int capacity(long t) {
        return t % period >= period - pause ? 0 : 16;
      }

      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        long c = 2 * MS + 5_000L * inputs;
        long end = t + c;
        return end % period >= period - pause ? (end / period + 1) * period - t : c;
      }
    };
  }

  /**
   * No pool: calls share 8 cores, each as slow as the calls running beside it make it (base x
   * max(1, busy / 8)); a batch costs 1 ms + 0.05 ms an input, or with {@code square} 1 ms + 0.1 ms
   * x n^2 (small batches are cheaper per input beyond 3).
   */
  static Downstream sharedCpu(boolean square) {
    return new Downstream() {
      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        double base = square ? MS + 100_000.0 * inputs * inputs : MS + 50_000.0 * inputs;
        return (long) (base * Math.max(1, busy / 8.0));
      }
    };
  }

  /** A pool of 16 at 2 ms + 5 us an input, where the calls of keys 0 to 3 take ten times as long. */
  static Downstream slowKeys() {
    return new Downstream() {
      @Override
      int capacity(long t) {
        return 16;
      }

      @Override
      long cost(long t, int key, int inputs, int busy, SplittableRandom rnd) {
        long c = 2 * MS + 5_000L * inputs;
        return key < 4 ? 10 * c : c;
      }
    };
  }

  /** A pool of 16 at 2 ms + 5 us an input behind a network whose round trip is 1 ms, then 30 ms from 5 s on (or the reverse). */
  static Downstream rttJump(boolean up) {
    return new Pool(16) {
      @Override
      long roundTrip(long t) {
        return (t < 5 * SEC) == up ? MS : 30 * MS;
      }
    };
  }

  /** A pool of {@code size} at 2 ms + 5 us an input behind a round trip of 1 ms, then {@code after} ms from 5 s on (review BL). */
  static Downstream rttJump(int size, long after) {
    return new Pool(size) {
      @Override
      long roundTrip(long t) {
        return t < 5 * SEC ? MS : after * MS;
      }
    };
  }

  /**
   * The usual store, behind a pool of {@code size} (0: none), where {@code percent} of calls take
   * {@code from} to {@code to} more, uniform (review BP: GC pauses, a slow replica).
   */
  static Downstream pausingCalls(int size, int percent, long from, long to) {
    return new Pool(size) {
      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        long pause = rnd.nextInt(100) < percent ? from + rnd.nextLong(to - from) : 0;
        return 2 * MS + 5_000L * inputs + pause;
      }
    };
  }

  /** A pool of {@code size} behind a round trip that moves with the time (review BP). */
  static Downstream rttAt(int size, java.util.function.LongUnaryOperator rtt) {
    return new Pool(size) {
      @Override
      long roundTrip(long t) {
        return rtt.applyAsLong(t);
      }
    };
  }

  /**
   * 2 ms + 5 us an input, each call ten times as long from 5 s on (a downstream slower per call,
   * not a longer path): behind a pool of {@code size}, or with no pool at all (0) (review BL).
   */
  static Downstream slower(int size) {
    return new Pool(size) {
      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        return (t < 5 * SEC ? 1 : 10) * (2 * MS + 5_000L * inputs);
      }
    };
  }

  /** A cache answering 90% of calls in 50 us without a connection; the rest go to a pool of 4 at 2 ms + 5 us an input. */
  static Downstream cached() {
    return new Pool(4) {
      @Override
      long hitAfter(long t, int inputs, SplittableRandom rnd) {
        return rnd.nextInt(10) < 9 ? 50_000L : -1;
      }
    };
  }

  /**
   * A pool of 16 at 2 ms + 5 us an input of which a share of calls fail whatever the load: refused
   * at once (0.1 ms) or, with {@code hangAfter} > 0, never served and failed after that long (a
   * replica that stopped answering behind a balancer).
   */
  static Downstream partlyFailing(int percent, long hangAfter) {
    return new Pool(16) {
      @Override
      long refuseAfter(long t, int inputs, SplittableRandom rnd) {
        return rnd.nextInt(100) < percent ? (hangAfter > 0 ? hangAfter : 100_000L) : -1;
      }
    };
  }

  /**
   * A pool of 64 at 2 ms + 5 us an input of which a share of calls, once served, hold their
   * connection for 1 s + 1 ms, past the ferry's 1 s call timeout (review BF): calls that hang and
   * do take the downstream's capacity, unlike {@link #partlyFailing}'s.
   */
  static Downstream partlyHolding(int percent) {
    return new Downstream() {
      @Override
      int capacity(long t) {
        return 64;
      }

      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        return rnd.nextInt(100) < percent ? SEC + MS : 2 * MS + 5_000L * inputs;
      }
    };
  }

  /** No queue: 8 calls served at once (2 ms + 5 us an input), any call beyond them refused at once (0.1 ms). */
  static Downstream refusingBeyond(int size) {
    return refusingBeyond(t -> size);
  }

  /** No queue: {@code size} calls served at once at {@code t}, any call beyond them refused at once (0.1 ms). */
  static Downstream refusingBeyond(java.util.function.LongToIntFunction sizeAt) {
    return refusingInService((t, inService, rnd) -> inService >= sizeAt.applyAsInt(t));
  }

  /** Whether a call is refused at {@code t}, with {@code inService} calls being served. */
  interface Refusal {
    boolean refuses(long t, int inService, SplittableRandom rnd);
  }

  /**
   * No queue: each call is served at once (2 ms + 5 us an input) unless {@code refusal} refuses it,
   * given the calls in service then; a refused call ends at once (0.1 ms).
   */
  static Downstream refusingInService(Refusal refusal) {
    return new Store() {
      final java.util.PriorityQueue<Long> ends = new java.util.PriorityQueue<>();

      @Override
      long refuseAfter(long t, int inputs, SplittableRandom rnd) {
        while (!ends.isEmpty() && ends.peek() <= t) {
          ends.poll();
        }
        if (refusal.refuses(t, ends.size(), rnd)) {
          return 100_000L;
        }
        ends.add(t + 2 * MS + 5_000L * inputs);
        return -1;
      }
    };
  }

  /**
   * A pool of 16 at 2 ms + 5 us an input of which a share of calls fail once served (after their
   * cost), whatever the load.
   */
  static Downstream partlyFailingServed(int percent) {
    return new Pool(16) {
      @Override
      boolean fails(long t, int inputs, SplittableRandom rnd) {
        return rnd.nextInt(100) < percent;
      }
    };
  }

  /**
   * No pool: calls share 16 cores (2 ms + 5 us an input, slower in proportion beyond 16 at once),
   * and a call served beside more than 16 others fails with the share of them beyond 16 (a
   * downstream that times out its own work under overload): failures that follow the load.
   */
  static Downstream overloadFails() {
    return new Downstream() {
      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        return (long) ((2 * MS + 5_000L * inputs) * Math.max(1, busy / 16.0));
      }

      // The server asks a call's cost, then whether it fails, one call at a time.
      boolean failing;

      @Override
      long cost(long t, int key, int inputs, int busy, SplittableRandom rnd) {
        failing = busy > 16 && rnd.nextDouble() < 1 - 16.0 / busy;
        return cost(t, inputs, busy, rnd);
      }

      @Override
      boolean fails(long t, int inputs, SplittableRandom rnd) {
        return failing;
      }
    };
  }

  /**
   * Review BI: a token bucket of {@code burst} whose rate (calls a second) at {@code t} is {@code rateAt}; calls
   * beyond it refused at once (0.2 ms), the rest served at once in 2 ms.
   */
  static Downstream bucket(int burst, java.util.function.LongToDoubleFunction rateAt) {
    return bucket(burst, rateAt, 2 * MS);
  }

  /** {@link #bucket(int, java.util.function.LongToDoubleFunction)} whose served calls take {@code cost}. */
  static Downstream bucket(int burst, java.util.function.LongToDoubleFunction rateAt, long cost) {
    return new Downstream() {
      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        return cost;
      }

      double tokens = burst;
      long last;

      @Override
      long refuseAfter(long t, int inputs, SplittableRandom rnd) {
        tokens = Math.min(burst, tokens + (t - last) * rateAt.applyAsDouble(t) / 1e9);
        last = t;
        if (tokens >= 1) {
          tokens--;
          return -1;
        }
        return 200_000L;
      }
    };
  }

  /**
   * Review BI: no pool; a call refused at once (0.1 ms) with the chance {@code busy / span} where
   * busy counts the calls in service: a refused share that grows smoothly with the load, so calls
   * succeeding a second peak at {@code span / 2} at once (half of them refused there).
   */
  static Downstream softRefusals(int span) {
    return softRefusals(0, span);
  }

  /** {@link #softRefusals(int)} with a share {@code base} refused whatever the load besides: {@code base + busy / span}. */
  static Downstream softRefusals(double base, int span) {
    return refusingInService((t, inService, rnd) -> rnd.nextDouble() < Math.min(1.0, base + inService / (double) span));
  }

  static Case[] cases() {
    return new Case[] {
      // Flat up to 16 calls at once, then each call slower by the square of the excess share.
      new Case("knee", () -> new Downstream() {
        @Override
        long cost(long t, int inputs, int busy, SplittableRandom rnd) {
          double x = Math.max(1, busy / 16.0);
          return (long) (2 * MS * x * x);
        }
      }, () -> run(256, 40_000, 10), new int[] {16, 24}),
      new Case("knee-over", () -> new Downstream() {
        @Override
        long cost(long t, int inputs, int busy, SplittableRandom rnd) {
          double x = Math.max(1, busy / 16.0);
          return (long) (2 * MS * x * x);
        }
      }, () -> run(256, 70_000, 10), new int[] {16, 24}),
      // A remote downstream: 50 ms round trip, no capacity bound.
      new Case("remote", OutsideShapesReport::remote, () -> run(1024, 20_000, 20), new int[] {128, 256}),
      new Case("remote-light", OutsideShapesReport::remote, () -> run(1024, 2_000, 20), new int[] {32, 256}),
      // 90% of calls 2 ms, 10% 40 ms, whatever the load; a pool of 16.
      new Case("bimodal", () -> new Downstream() {
        @Override
        int capacity(long t) {
          return 16;
        }

        @Override
        long cost(long t, int inputs, int busy, SplittableRandom rnd) {
          return rnd.nextInt(10) == 0 ? 40 * MS : 2 * MS;
        }
      }, () -> run(256, 11_000, 10), new int[] {16, 32}),
      // Cost per call constant whatever the batch, and cost linear in the batch; a pool of 8.
      new Case("per-call", () -> pool(8, 2 * MS, 0), () -> run(64, 16_000, 10), new int[] {8, 16}),
      new Case("per-input", () -> pool(8, 0, 250_000L), () -> run(64, 16_000, 10), new int[] {8, 16}),
      // A pool of 16 that drops to 1 from 4 s to 7 s.
      new Case("drop", OutsideShapesReport::dropping, () -> run(64, 3_000, 12), new int[] {1, 16}),
      new Case("drop-busy", OutsideShapesReport::dropping, () -> run(256, 30_000, 12), new int[] {16, 32}),
      // 30% of calls refused at once (0.1 ms); a pool of 16.
      new Case("fail30", OutsideShapesTest::failingAThird, () -> run(256, 30_000, 10), new int[] {16, 32}),
      // A pool growing from 2 to 32 over a minute.
      new Case("ramp", () -> new Store() {
        @Override
        int capacity(long t) {
          return (int) Math.min(32, 2 + 30 * t / (60 * SEC));
        }
      }, () -> {
        Run r = run(512, 100_000, 60);
        r.band = t -> {
          int p = (int) Math.min(32, 2 + 30 * Math.max(0, t - 2 * SEC) / (60 * SEC));
          return new int[] {p, 2 * Math.min(32, 2 + (int) (30 * t / (60 * SEC)))};
        };
        return r;
      }, new int[] {32}),
      // Calls 5x slower at the end of a minute than at its start (a pool of 16).
      new Case("drift", () -> OutsideShapesTest.drifting(true), () -> {
        Run r = run(256, 8_000, 60);
        r.band = t -> new int[] {16, 32};
        return r;
      }, new int[] {16, 32}),
      // At most 2,000 calls a second (a bucket of 20), the rest refused at once (0.2 ms).
      new Case("ratelimit", OutsideShapesTest::rateLimited, () -> run(256, 10_000, 10), new int[] {4, 8, 16}),
      new Case("max1", () -> pool(16, 2 * MS, 5_000L), () -> {
        Run r = run(64, 2_000, 10);
        r.maxInFlight = 1;
        return r;
      }, new int[] {1}),
      new Case("maxhuge", () -> pool(16, 2 * MS, 5_000L), () -> {
        Run r = run(256, 30_000, 10);
        r.maxInFlight = 1 << 20;
        return r;
      }, new int[] {16, 32}),
      new Case("batch1", () -> pool(16, 2 * MS, 5_000L), () -> {
        Run r = run(256, 6_000, 10);
        r.maxBatchSize = 1;
        return r;
      }, new int[] {16, 32}),
      new Case("batch1-over", () -> pool(16, 2 * MS, 5_000L), () -> {
        Run r = run(256, 9_000, 10);
        r.maxBatchSize = 1;
        return r;
      }, new int[] {16, 32}),
      // Review BC. Every call fails for 2 s (4 s to 6 s): at once, or after hanging for the call
      // timeout (1 s).
      new Case("outage-fast", () -> outage(false), () -> run(256, 30_000, 12), new int[] {16, 32}),
      new Case("outage-hang", () -> outage(true), () -> {
        Run r = run(256, 30_000, 12);
        r.callTimeout = SEC;
        return r;
      }, new int[] {16, 32}),
      // Nothing completes for 200 ms every 2 s, then a burst.
      new Case("gc", OutsideShapesReport::pausing, () -> run(256, 30_000, 12), new int[] {16, 32}),
      // Shared CPU (8 cores), no pool; batch cost linear, then quadratic.
      new Case("cpu", () -> sharedCpu(false), () -> run(256, 30_000, 10), new int[] {8, 16}),
      new Case("cpu-square", () -> sharedCpu(true), () -> run(256, 8_000, 10), new int[] {8, 16}),
      // Keys 0-3 of 64 ten times as slow, one pool of 16.
      new Case("slow-keys", OutsideShapesReport::slowKeys, () -> {
        Run r = run(64, 16_000, 10);
        r.marked = 4;
        return r;
      }, new int[] {16, 32}),
      // On/off arrivals: 100 ms at 100,000/s, then 400 ms of none (20,000/s on average).
      new Case("bursts", () -> pool(16, 2 * MS, 5_000L), () -> {
        Run r = run(256, 20_000, 12);
        r.rateAt = t -> t % (500 * MS) < 100 * MS ? 100_000 : 0;
        return r;
      }, new int[] {16, 32}),
      // 10% -> 120% -> 10% of what the pool of 16 delivers in full batches (about 62,000/s).
      new Case("steps", () -> pool(16, 2 * MS, 5_000L), () -> {
        Run r = run(256, 6_000, 12);
        r.rateAt = t -> t >= 4 * SEC && t < 8 * SEC ? 75_000 : 6_000;
        return r;
      }, new int[] {16, 32}),
      // The round trip jumps 1 -> 30 ms at 5 s; the pool of 16 does not change.
      new Case("rtt", () -> rttJump(true), () -> run(256, 30_000, 12), new int[] {16, 64, 256}),
      new Case("rtt-down", () -> rttJump(false), () -> run(256, 30_000, 12), new int[] {16, 32, 256}),
      // Review BL. A longer path where the pool, not the ceiling, bounds the limit after it: a pool
      // of 4 at 90% of what it delivers, the round trip 1 -> 30 ms at 5 s (about 64 calls in flight
      // keep the pool as busy as 4 did).
      new Case("rtt-pool4", () -> rttJump(4, 30), () -> run(256, 14_000, 12), new int[] {4, 64, 128}),
      // The same jump at a pool of 16 and 20,000 inputs a second, and 1 -> 10 ms.
      new Case("rtt10", () -> rttJump(16, 10), () -> run(256, 20_000, 12), new int[] {16, 64, 128}),
      // A downstream slower per call, not a longer path: ten times as long from 5 s on, with no
      // pool (like a path: room for every call) and behind a pool of 16 (its capacity a tenth).
      new Case("slower-nopool", () -> slower(0), () -> run(256, 20_000, 12), new int[] {16, 64, 128}),
      new Case("slower-pool", () -> slower(16), () -> run(256, 6_000, 12), new int[] {16, 32}),
      // A pool of 4 at 120% of what it delivers, callers giving up after 50 ms.
      new Case("deadline", () -> pool(4, 2 * MS, 5_000L), () -> {
        Run r = run(64, 19_000, 10);
        r.deadline = 50 * MS;
        return r;
      }, new int[] {4, 8}),
      // 90% cache hits at once, the rest to a pool of 4.
      new Case("cache90", OutsideShapesReport::cached, () -> run(256, 20_000, 10), new int[] {8, 16, 40}),
      new Case("cache90-light", OutsideShapesReport::cached, () -> run(256, 15_000, 10), new int[] {8, 16, 40}),
      // Half, and 60%, of calls refused at once whatever the load (one replica of two down).
      new Case("fail50", () -> partlyFailing(50, 0), () -> run(256, 30_000, 10), new int[] {16, 32}),
      new Case("fail60", () -> partlyFailing(60, 0), () -> run(256, 30_000, 10), new int[] {16, 32}),
      // A pool of 8 with no queue: calls beyond it refused at once (failures that follow the load).
      new Case("refuse-over", () -> refusingBeyond(8), () -> run(256, 30_000, 10), new int[] {8, 16}),
      // The same with no queue at 64 calls, then 4 from 4 s on: most calls refused at once at the limit learned before.
      new Case("refuse-shrink", () -> refusingBeyond(t -> t < 4 * SEC ? 64 : 4), () -> run(256, 20_000, 10), new int[] {4, 64}),
      // Half of the calls fail once served, whatever the load.
      new Case("fail50-served", () -> partlyFailingServed(50), () -> run(256, 30_000, 10), new int[] {16, 32}),
      // Failures that follow the load: a call beside more than 16 others fails with their excess share.
      new Case("overload-fails", OutsideShapesReport::overloadFails, () -> run(256, 70_000, 10), new int[] {16, 32}),
      // 5% of calls hang until the call timeout (1 s).
      new Case("hang5", () -> partlyFailing(5, SEC + MS), () -> {
        Run r = run(256, 30_000, 10);
        r.callTimeout = SEC;
        return r;
      }, new int[] {16, 64, 256}),
      // Review BF: 5% of calls hold a pool connection (of 64) for 1 s, past the call timeout: the
      // shape a rule that stops counting hung calls must not break (hang5 with capacity held).
      new Case("hang5-pool", () -> partlyHolding(5), () -> {
        Run r = run(256, 6_000, 10);
        r.callTimeout = SEC;
        return r;
      }, new int[] {16, 64, 256}),
      // Review BI. A rate limit that moves every 3 s: 2,000, 4,000, 1,000, 4,000, 2,000 ... calls a second (bucket of 20).
      new Case("ratelimit-swing", () -> bucket(20, t -> new double[] {2_000, 4_000, 1_000, 4_000}[(int) (t / (3 * SEC)) % 4]),
          () -> run(256, 14_000, 24), new int[] {2, 4, 8}),
      // A rate limit of 2,000 calls a second behind a burst of 2,000: the refusals follow the limit seconds late.
      new Case("ratelimit-burst", () -> bucket(2_000, t -> 2_000), () -> run(256, 10_000, 20), new int[] {4, 8}),
      // A rate limit shared with another client that takes 1,500 of its 3,000 calls a second every other 2 s.
      new Case("ratelimit-shared", () -> bucket(20, t -> (t / (2 * SEC)) % 2 == 0 ? 3_000 : 1_500),
          () -> run(256, 10_000, 20), new int[] {3, 6}),
      // 20 ms calls behind a rate limit of 100 calls a second (2 at once), raised to 400 (8 at once) at 90 s.
      new Case("ratelimit-slow", () -> bucket(4, t -> t < 90 * SEC ? 100 : 400, 20 * MS),
          () -> run(64, 1_500, 150), new int[] {2, 8}),
      // A pool that swings between 4 and 32 every 2 s, under overload.
      new Case("pool-swing", () -> new Store() {
        @Override
        int capacity(long t) {
          return (t / (2 * SEC)) % 2 == 0 ? 32 : 4;
        }
      }, () -> {
        Run r = run(256, 100_000, 20);
        r.band = t -> (t / (2 * SEC)) % 2 == 0 ? new int[] {32, 64} : new int[] {4, 8};
        return r;
      }, new int[] {4, 32}),
      // The pool of 16 that drops to 1 from 4 s to 7 s, its 30,000 inputs a second over 100,000 keys (each key quiet).
      new Case("drop-100k", OutsideShapesReport::dropping, () -> run(100_000, 30_000, 12), new int[] {1, 16}),
      // A refused share that grows smoothly with the calls in service (busy / 40): successes peak at 20 at once.
      new Case("soft-refuse", () -> softRefusals(40), () -> run(256, 60_000, 10), new int[] {10, 20, 30}),
      // The same over 200 (successes peak at 100 at once), and half refused whatever the load plus busy / 400
      // (successes peak at 100 at once, three quarters refused there): shares of half or more that fall slowly
      // with the limit (ADR 0184's judgement).
      new Case("soft-refuse-wide", () -> softRefusals(200), () -> run(1024, 150_000, 10), new int[] {50, 100, 150}),
      new Case("fail50-nopool", () -> softRefusals(0.5, Integer.MAX_VALUE), () -> run(1024, 150_000, 10), new int[] {50, 100, 150}),
      new Case("fail40-nopool", () -> softRefusals(0.4, Integer.MAX_VALUE), () -> run(1024, 150_000, 10), new int[] {50, 100}),
      new Case("fail30-nopool", () -> softRefusals(0.3, Integer.MAX_VALUE), () -> run(1024, 150_000, 10), new int[] {50, 100}),
      new Case("fail10-nopool", () -> softRefusals(0.1, Integer.MAX_VALUE), () -> run(1024, 150_000, 10), new int[] {50, 100}),
      new Case("half-plus-load", () -> softRefusals(0.5, 400), () -> run(1024, 150_000, 10), new int[] {50, 100, 150}),
      // Review BP: shapes built to defeat ADRs 0194 and 0195.
      // GC pauses: 5% of calls take 20-300 ms more (uniform), no pool (nothing queues); and behind
      // a pool of 64 (a paused call holds its connection).
      new Case("gc-pause", () -> pausingCalls(0, 5, 20 * MS, 300 * MS), () -> run(256, 20_000, 10), new int[] {64, 256}),
      // Milder: 2% of calls take 50-100 ms more.
      new Case("gc-pause2", () -> pausingCalls(0, 2, 50 * MS, 100 * MS), () -> run(256, 20_000, 10), new int[] {64, 256}),
      new Case("gc-pause-pool", () -> pausingCalls(64, 5, 20 * MS, 300 * MS), () -> run(256, 20_000, 10), new int[] {64, 128, 256}),
      // A slow replica that takes a third of the calls: 20-40 ms instead of 2 ms, no pool.
      new Case("slow-replica", () -> pausingCalls(0, 33, 18 * MS, 38 * MS), () -> run(256, 20_000, 10), new int[] {64, 256}),
      // 90% of calls answered in 0.4 ms without a connection (hits five times as fast as the misses,
      // not forty), the rest to a pool of 4: the misses fall between 2 and 8 floors.
      new Case("cache90-5x", () -> new Pool(4) {
        @Override
        long hitAfter(long t, int inputs, SplittableRandom rnd) {
          return rnd.nextInt(10) < 9 ? 400_000L : -1;
        }
      }, () -> run(256, 20_000, 10), new int[] {8, 16, 40}),
      // ADR 0196: the pool of 16 that drops to 1 from 4 s to 7 s, beside 5,000 keys at 30,000 inputs a second.
      new Case("drop-5k", OutsideShapesReport::dropping, () -> run(5_000, 30_000, 12), new int[] {1, 16}),
      // The round trip swings 1 <-> 30 ms every 2 s from 4 s on; a pool of 16.
      new Case("rtt-swing", () -> rttAt(16, t -> t < 4 * SEC || ((t - 4 * SEC) / (2 * SEC)) % 2 == 1 ? MS : 30 * MS),
          () -> run(256, 30_000, 16), new int[] {16, 64, 256}),
      // The round trip lengthens in eight steps of half as much again, 1 -> 25.6 ms, one every 0.5 s from 4 s.
      new Case("rtt-steps", () -> rttAt(16, t -> t < 4 * SEC ? MS
              : (long) (MS * Math.pow(1.5, Math.min(8, 1 + (t - 4 * SEC) / (500 * MS))))),
          () -> run(256, 30_000, 12), new int[] {16, 64, 256}),
      // A longer path (1 -> 30 ms) while the pool shrinks from 16 to 4, both at 5 s, at 12,000 inputs a second.
      new Case("rtt-shrink", () -> new Store() {
        @Override
        int capacity(long t) {
          return t < 5 * SEC ? 16 : 4;
        }

        @Override
        long roundTrip(long t) {
          return t < 5 * SEC ? MS : 30 * MS;
        }
      }, () -> run(256, 12_000, 12), new int[] {4, 16, 64, 128}),
    };
  }

  @Test
  @EnabledIfSystemProperty(named = "ferry.outside", matches = ".+")
  void report() {
    String only = System.getProperty("ferry.outside");
    long seed = Long.getLong("ferry.outside.seed", 17);
    for (Case c : cases()) {
      if (!only.equals("all") && !java.util.Arrays.asList(only.split(",")).contains(c.name())) {
        continue;
      }
      Run r = c.run().get();
      r.seed = seed;
      OutsideShapes.Result learned = OutsideShapes.run(c.down().get(), r);
      System.out.println(c.name() + " learned: " + learned);
      System.out.println(c.name() + "   trace: " + learned.trace);
      if (Boolean.getBoolean("ferry.outside.delivered")) {
        System.out.println(c.name() + "   delivered: " + learned.deliveredTrace);
      }
      for (int pin : c.pins()) {
        Run p = c.run().get();
        p.seed = seed;
        p.pinned = Math.min(pin, p.maxInFlight > 0 ? p.maxInFlight : 256);
        OutsideShapes.Result pinned = OutsideShapes.run(c.down().get(), p);
        System.out.println(c.name() + " pinned " + pin + ": " + pinned);
        if (Boolean.getBoolean("ferry.outside.delivered")) {
          System.out.println(c.name() + "   delivered: " + pinned.deliveredTrace);
        }
      }
    }
  }
}
