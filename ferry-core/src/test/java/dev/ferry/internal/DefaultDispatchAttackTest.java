package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Dispatch;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Adaptive dispatch as the default (ADR 0016), attacked as a new user would meet it: a per-key
 * ferry with every default, in virtual time, against downstream shapes that are not the
 * benchmark's (a startup burst, very slow and very fast calls, heavy tails, failures, timeouts,
 * one key, keys used once, long idle periods, short caller deadlines). Each shape runs the
 * default, the former default ({@code "dispatch": "fixed-slots"}, all else default) and plain
 * unbatched calls on the same seeded arrivals.
 *
 * <p>The {@code survey} methods are diagnostics, skipped unless asked for, asserting nothing: they
 * print every shape side by side ({@code mvn -o verify -pl ferry-core -Dtest='DefaultDispatchAttackTest#survey*'
 * -Dferry.attack.survey=true}, optionally {@code -Dferry.attack.seed=n} and {@code
 * -Dferry.attack.traceMs=250}). The tests pin what held; the {@code @Disabled} ones reproduce what
 * did not, for the control law ({@link CallLimit}; ADR 0017). Unbatched calls have no deadline
 * and no queue bound: their figures are what one call per input costs, nothing is rejected.
 */
class DefaultDispatchAttackTest {
  static final long MS = 1_000_000L;
  static final long SEED = Long.getLong("ferry.attack.seed", 2026);
  /** Prints the limit every so many ms of virtual time, at call starts (diagnosis: {@code -Dferry.attack.traceMs=250}). */
  static final long TRACE_MS = Long.getLong("ferry.attack.traceMs", 0);

  /** The downstream: a FIFO pool of {@code pool} connections (0: no queue), each call taking what {@code cost} says. */
  interface Cost {
    /** Nanos a call of {@code size} inputs takes once it has a connection; negative: it fails after that long; {@link Long#MAX_VALUE}: it never answers. */
    long nanos(int size, long now, SplittableRandom rnd);
  }

  record Shape(String name, int pool, Cost cost) {}

  /** Arrivals: when (nanos from start) and which key, sorted by time. */
  record Arrivals(long[] at, int[] key) {
    static Arrivals poisson(double perSec, long spanMs, int keys, SplittableRandom rnd) {
      List<long[]> xs = new ArrayList<>();
      for (double t = 0; t < spanMs * MS; t += -Math.log(1 - rnd.nextDouble()) / perSec * 1e9) {
        xs.add(new long[] {(long) t, rnd.nextInt(keys)});
      }
      return of(xs);
    }

    /** {@code n} inputs spread evenly over {@code spanMs} starting at {@code fromMs}, keys uniform. */
    static Arrivals burst(int n, long fromMs, long spanMs, int keys, SplittableRandom rnd) {
      List<long[]> xs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        xs.add(new long[] {fromMs * MS + spanMs * MS * i / n, rnd.nextInt(keys)});
      }
      return of(xs);
    }

    static Arrivals of(List<long[]> xs) {
      xs.sort((a, b) -> Long.compare(a[0], b[0]));
      return new Arrivals(xs.stream().mapToLong(x -> x[0]).toArray(), xs.stream().mapToInt(x -> (int) x[1]).toArray());
    }

    Arrivals then(long gapMs, Arrivals next) {
      long off = (at.length == 0 ? 0 : at[at.length - 1]) + gapMs * MS;
      long[] a = Arrays.copyOf(at, at.length + next.at.length);
      int[] k = Arrays.copyOf(key, key.length + next.key.length);
      for (int i = 0; i < next.at.length; i++) {
        a[at.length + i] = off + next.at[i];
        k[key.length + i] = next.key[i];
      }
      return new Arrivals(a, k);
    }
  }

  /**
   * What one contender did. Latency of answered inputs (submit to success); outcomes by kind; the
   * time until {@code calls} calls were first in flight at once (-1: never); the limit's range seen
   * at call starts after {@code settleMs}; the time the last input was answered.
   */
  record Result(String name, int inputs, long[] okLatency, long[] failLatency, Map<FerryError, Integer> failed,
      int unanswered, long firstAtTarget,
      int limitLow, int limitHigh, long lastAnswer, int maxInFlight) {
    double p(double q) {
      return okLatency.length == 0 ? -1 : okLatency[Math.min(okLatency.length - 1, (int) (okLatency.length * q))] / 1e6;
    }

    int ok() {
      int failures = failed.values().stream().mapToInt(Integer::intValue).sum();
      return inputs - failures - unanswered;
    }

    /** The slowest failure's wait in ms (submit to failure), of those counted. */
    double slowestFailure() {
      return failLatency.length == 0 ? -1 : failLatency[failLatency.length - 1] / 1e6;
    }

    int failed(FerryError e) {
      return failed.getOrDefault(e, 0);
    }

    @Override
    public String toString() {
      return String.format("%-12s ok %6d/%-6d p50 %9.2f ms p99 %9.2f ms last answer %9.1f ms  %s (slowest %.1f ms) unanswered %d  calls>=target at %s"
          + "  max in flight %d  limit %d..%d", name, ok(), inputs, p(0.5), p(0.99), lastAnswer / 1e6, failed, slowestFailure(), unanswered,
          firstAtTarget < 0 ? "never" : String.format("%.1f ms", firstAtTarget / 1e6), maxInFlight, limitLow,
          limitHigh);
    }
  }

  static PerKeyConfig defaults() {
    return PerKeyConfig.defaults();
  }

  static PerKeyConfig fixedSlots() {
    return PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).build();
  }

  /**
   * Runs {@code arrivals} through a ferry of {@code config} (null: one call per input) over the
   * shape, until every input is answered or {@code horizonMs} passes.
   */
  static Result run(String name, PerKeyConfig config, Shape shape, Arrivals arrivals, Duration deadline,
      int targetCalls, long settleMs, long horizonMs, long seed) {
    return run(name, config, shape, arrivals, deadline, targetCalls, settleMs, horizonMs, seed, loop -> {});
  }

  /**
   * As above; {@code setup} may schedule events on the loop (a stall). Latencies count the inputs
   * submitted from {@code settleMs} on; outcomes count every input.
   */
  static Result run(String name, PerKeyConfig config, Shape shape, Arrivals arrivals, Duration deadline,
      int targetCalls, long settleMs, long horizonMs, long seed, java.util.function.Consumer<VirtualLoop> setup) {
    VirtualLoop loop = new VirtualLoop();
    setup.accept(loop);
    long t0 = loop.nanoTime();
    SplittableRandom rnd = new SplittableRandom(seed);
    int[] inService = {0};
    int[] maxInService = {0};
    long[] firstAtTarget = {-1};
    ArrayDeque<Runnable> waiting = new ArrayDeque<>();
    PerKeyFerry<?, ?, ?, ?>[] self = new PerKeyFerry<?, ?, ?, ?>[1];
    int[] limit = {Integer.MAX_VALUE, 0};
    long[] nextTrace = {0};
    java.util.function.IntFunction<Future<Void>> call = size -> {
      Promise<Void> p = Promise.promise();
      Runnable start = () -> {
        inService[0]++;
        long c = shape.cost.nanos(size, loop.nanoTime(), rnd);
        if (c == Long.MAX_VALUE) {
          return; // never answers, never frees its connection
        }
        loop.schedule(Math.abs(c), () -> {
          inService[0]--;
          if (!waiting.isEmpty()) {
            waiting.poll().run();
          }
          if (c < 0) {
            p.fail("downstream failed");
          } else {
            p.complete();
          }
        });
      };
      int calls = self[0] == null ? inService[0] + waiting.size() + 1 : self[0].metrics().inFlightBatches();
      if (calls >= targetCalls && firstAtTarget[0] < 0) {
        firstAtTarget[0] = loop.nanoTime() - t0;
      }
      maxInService[0] = Math.max(maxInService[0], calls);
      if (TRACE_MS > 0 && self[0] != null && loop.nanoTime() - t0 >= nextTrace[0]) {
        nextTrace[0] = loop.nanoTime() - t0 + TRACE_MS * MS;
        System.out.printf("    t %8.3f s limit %3d calls %3d queued %5d seen %.1f ms floor %.1f ms%n",
            (loop.nanoTime() - t0) / 1e9, self[0].metrics().callLimit(), calls, self[0].metrics().queuedInputs(),
            self[0].metrics().seenLatencyMicros() / 1e3, self[0].metrics().seenFloorMicros() / 1e3);
      }
      if (self[0] != null && loop.nanoTime() - t0 >= settleMs * MS) {
        int l = self[0].metrics().callLimit();
        limit[0] = Math.min(limit[0], l);
        limit[1] = Math.max(limit[1], l);
      }
      if (shape.pool > 0 && inService[0] >= shape.pool) {
        waiting.add(start);
      } else {
        start.run();
      }
      return p.future();
    };
    PerKeyFerry<Integer, Integer, List<Integer>, Integer> ferry = config == null ? null
        : new PerKeyFerry<>(loop, config, k -> k, null, null, (k, ins) -> call.apply(ins.size()).map(v -> ins),
            (in, r) -> in);
    self[0] = ferry;
    int n = arrivals.at.length;
    long[] lat = new long[n];
    long[] flat = new long[n];
    int[] ok = {0};
    int[] nf = {0};
    int[] answered = {0};
    long[] last = {0};
    Map<FerryError, Integer> failed = new EnumMap<>(FerryError.class);
    for (int i = 0; i < n; i++) {
      int key = arrivals.key[i];
      loop.schedule(arrivals.at[i], () -> {
        long s = loop.nanoTime();
        Future<Integer> f = ferry == null ? call.apply(1).map(v -> key)
            : deadline == null ? ferry.submit(key) : ferry.submit(key, deadline);
        f.onComplete(ar -> {
          answered[0]++;
          last[0] = loop.nanoTime() - t0;
          boolean counted = s - t0 >= settleMs * MS;
          if (ar.succeeded()) {
            if (counted) {
              lat[ok[0]++] = loop.nanoTime() - s;
            }
          } else {
            if (counted) {
              flat[nf[0]++] = loop.nanoTime() - s;
            }
            FerryError kind = ar.cause() instanceof FerryException fe ? fe.kind() : FerryError.FAILED;
            failed.merge(kind, 1, Integer::sum);
          }
        });
      });
    }
    long horizon = t0 + horizonMs * MS;
    while (answered[0] < n && loop.nextTimerAt() >= 0 && loop.nextTimerAt() <= horizon) {
      loop.advance(Math.max(0, loop.nextTimerAt() - loop.nanoTime()));
    }
    long[] okLat = Arrays.copyOf(lat, ok[0]);
    Arrays.sort(okLat);
    long[] failLat = Arrays.copyOf(flat, nf[0]);
    Arrays.sort(failLat);
    return new Result(name, n, okLat, failLat, failed, n - answered[0], firstAtTarget[0], limit[0] == Integer.MAX_VALUE ? 0 : limit[0],
        limit[1], last[0], maxInService[0]);
  }

  /** The three contenders on one shape and one set of arrivals, printed side by side. */
  static Result[] compare(String title, Shape shape, Arrivals arrivals, Duration deadline, int targetCalls,
      long settleMs, long horizonMs) {
    return compare(title, shape, arrivals, deadline, targetCalls, settleMs, horizonMs, loop -> {});
  }

  static Result[] compare(String title, Shape shape, Arrivals arrivals, Duration deadline, int targetCalls,
      long settleMs, long horizonMs, java.util.function.Consumer<VirtualLoop> setup) {
    Result[] rs = {
      run("default", defaults(), shape, arrivals, deadline, targetCalls, settleMs, horizonMs, SEED, setup),
      run("fixed-slots", fixedSlots(), shape, arrivals, deadline, targetCalls, settleMs, horizonMs, SEED, setup),
      run("unbatched", null, shape, arrivals, deadline, targetCalls, settleMs, horizonMs, SEED, setup)
    };
    System.out.printf("%s (seed %d, %d inputs)%n", title, SEED, arrivals.at.length);
    for (Result r : rs) {
      System.out.println("  " + r);
    }
    return rs;
  }

  static long uniformMs(SplittableRandom rnd, double lo, double hi) {
    return (long) ((lo + (hi - lo) * rnd.nextDouble()) * MS);
  }

  @Test
  @EnabledIfSystemProperty(named = "ferry.attack.survey", matches = "true")
  void survey1() {
    SplittableRandom r = new SplittableRandom(SEED);
    compare("A. startup burst: 10,000 inputs over 1,000 keys in 10 ms, FIFO pool 64, 2 ms + 50 us/input",
        new Shape("burst", 64, (n, t, x) -> 2 * MS + n * MS / 20), Arrivals.burst(10_000, 0, 10, 1_000, r), null, 64, 0,
        600_000);
    compare("B. very slow API, no queue: 1-5 s per call, 100/s Poisson over 1,000 keys for 60 s",
        new Shape("slow", 0, (n, t, x) -> uniformMs(x, 1_000, 5_000)), Arrivals.poisson(100, 60_000, 1_000, r), null,
        64, 30_000, 3_600_000);
    compare("C. very fast: FIFO pool 4, 50 us + 1 us/input, 40,000/s over 64 keys for 2 s",
        new Shape("fast", 4, (n, t, x) -> 50_000 + n * 1_000L), Arrivals.poisson(40_000, 2_000, 64, r), null, 4, 500,
        60_000);
    compare("D. bimodal, no queue: 1 ms, 500 ms 2% of calls; 5,000/s over 1,000 keys for 10 s",
        new Shape("bimodal", 0, (n, t, x) -> x.nextDouble() < 0.02 ? 500 * MS : MS),
        Arrivals.poisson(5_000, 10_000, 1_000, r), null, 64, 5_000, 600_000);
    compare("E. heavy tail, no queue: 1 ms x Pareto(1.1), capped 10 s; 5,000/s over 1,000 keys for 10 s",
        new Shape("pareto", 0, (n, t, x) -> (long) Math.min(10_000 * MS, MS / Math.pow(1 - x.nextDouble(), 1 / 1.1))),
        Arrivals.poisson(5_000, 10_000, 1_000, r), null, 64, 5_000, 600_000);
    compare("F. external API, no queue: 20 ms whatever the concurrency; 5,000/s over 10,000 keys for 10 s",
        new Shape("flat", 0, (n, t, x) -> 20 * MS), Arrivals.poisson(5_000, 10_000, 10_000, r), null, 100, 5_000,
        600_000);
    compare("G1. 10% of calls fail: FIFO pool 16, 2 ms; 5,000/s over 1,000 keys for 10 s",
        new Shape("fail10", 16, (n, t, x) -> x.nextDouble() < 0.1 ? -2 * MS : 2 * MS),
        Arrivals.poisson(5_000, 10_000, 1_000, r), null, 16, 5_000, 600_000);
    compare("G2. every call fails after 2 ms: FIFO pool 16; 5,000/s over 1,000 keys for 10 s",
        new Shape("fail100", 16, (n, t, x) -> -2 * MS), Arrivals.poisson(5_000, 10_000, 1_000, r), null, 16, 5_000,
        600_000);
    compare("G3. 5% of calls never answer (call timeout 30 s), no queue, else 5 ms; 2,000/s over 1,000 keys for 10 s",
        new Shape("hang", 0, (n, t, x) -> x.nextDouble() < 0.05 ? Long.MAX_VALUE : 5 * MS),
        Arrivals.poisson(2_000, 10_000, 1_000, r), null, 16, 5_000, 600_000);
    compare("H. latency steep in batch size: FIFO pool 8, 1 ms + 10 us x size^2; 20,000/s over 16 keys for 5 s",
        new Shape("steep", 8, (n, t, x) -> MS + 10_000L * n * n), Arrivals.poisson(20_000, 5_000, 16, r), null, 8, 2_000,
        600_000);
    compare("I. one key: FIFO pool 8, 2 ms + 10 us/input; 20,000/s for 5 s",
        new Shape("onekey", 8, (n, t, x) -> 2 * MS + 10_000L * n), Arrivals.poisson(20_000, 5_000, 1, r), null, 1, 0,
        600_000);
    compare("J. 100,000 keys each used once: FIFO pool 16, 2 ms; 20,000/s for 5 s",
        new Shape("once", 16, (n, t, x) -> 2 * MS), Arrivals.poisson(20_000, 5_000, 1_000_000_000, r), null, 16,
        1_000, 600_000);
    compare("K. busy 10 s, idle 1 h, busy 10 s: FIFO pool 32, 5 ms; 4,000/s over 1,000 keys",
        new Shape("idle", 32, (n, t, x) -> 5 * MS),
        Arrivals.poisson(4_000, 10_000, 1_000, r).then(3_600_000, Arrivals.poisson(4_000, 10_000, 1_000, r)), null, 32,
        3_600_000, 8_000_000);
    compare("L. short caller deadlines (100 ms): burst of 5,000 over 1,000 keys in 10 ms, FIFO pool 64, 10 ms",
        new Shape("deadline", 64, (n, t, x) -> 10 * MS), Arrivals.burst(5_000, 0, 10, 1_000, r),
        Duration.ofMillis(100), 64, 0, 600_000);
    compare("M. short caller deadlines (200 ms), very slow start: no queue, 200 ms calls; 500/s over 500 keys for 10 s",
        new Shape("deadline2", 0, (n, t, x) -> 200 * MS), Arrivals.poisson(500, 10_000, 500, r),
        Duration.ofMillis(200), 64, 0, 600_000);
  }

  @Test
  @EnabledIfSystemProperty(named = "ferry.attack.survey", matches = "true")
  void survey2() {
    SplittableRandom r = new SplittableRandom(SEED);
    compare("K2. busy 10 s, idle 1 h, busy 10 s: FIFO pool 32, 5 ms; 4,000/s over 1,000 keys; second period only",
        new Shape("idle", 32, (n, t, x) -> 5 * MS),
        Arrivals.poisson(4_000, 10_000, 1_000, r).then(3_600_000, Arrivals.poisson(4_000, 10_000, 1_000, r)), null, 32,
        3_600_000, 8_000_000);
    compare("K1. the same, first 10 s only after 1 s",
        new Shape("idle", 32, (n, t, x) -> 5 * MS), Arrivals.poisson(4_000, 10_000, 1_000, r), null, 32, 1_000,
        8_000_000);
    compare("N. loop stalled (clock jump) 10 s at t = 5 s: FIFO pool 32, 5 ms; 4,000/s over 1,000 keys for 30 s; after 16 s",
        new Shape("stall", 32, (n, t, x) -> 5 * MS), Arrivals.poisson(4_000, 30_000, 1_000, r), null, 32, 16_000,
        600_000, loop -> loop.schedule(5_000 * MS, () -> loop.stallMillis(10_000)));
    compare("G1b. 10% of calls fail: FIFO pool 16, 2 ms; 5,000/s over 1,000 keys for 10 s, after 1 s",
        new Shape("fail10", 16, (n, t, x) -> x.nextDouble() < 0.1 ? -2 * MS : 2 * MS),
        Arrivals.poisson(5_000, 10_000, 1_000, r), null, 16, 1_000, 600_000);
    compare("G2b. every call fails after 2 ms: FIFO pool 16; 5,000/s over 1,000 keys for 10 s",
        new Shape("fail100", 16, (n, t, x) -> -2 * MS), Arrivals.poisson(5_000, 10_000, 1_000, r), null, 16, 0,
        600_000);
    compare("B2. very slow API, no queue: 1 s per call; 100/s Poisson over 1,000 keys for 60 s",
        new Shape("slow", 0, (n, t, x) -> 1_000 * MS), Arrivals.poisson(100, 60_000, 1_000, r), null, 16, 0,
        3_600_000);
    compare("E2. heavy tail, no queue: 1 ms x Pareto(1.5), capped 10 s; 5,000/s over 1,000 keys for 10 s",
        new Shape("pareto", 0, (n, t, x) -> (long) Math.min(10_000 * MS, MS / Math.pow(1 - x.nextDouble(), 1 / 1.5))),
        Arrivals.poisson(5_000, 10_000, 1_000, r), null, 64, 0, 600_000);
    compare("H2. steep, with maxBatchSize unset but load 10,000/s: FIFO pool 8, 1 ms + 10 us x size^2, 16 keys, 5 s",
        new Shape("steep", 8, (n, t, x) -> MS + 10_000L * n * n), Arrivals.poisson(10_000, 5_000, 16, r), null, 8, 0,
        600_000);
  }

  // What held: the default against the former default (and unbatched calls) where a user would
  // fear the learned limit. Bounds are the rule, max(1.1 x, + 1 ms), unless stated.

  static boolean within(double p99, double other) {
    return p99 <= Math.max(1.1 * other, other + 1);
  }

  static String both(Result a, Result b) {
    return "seed " + SEED + "\n  " + a + "\n  " + b;
  }

  @Test
  void aStartupBurstAgainstAPoolOf64EndsSoonerThanWithFixedSlots() {
    // 10,000 inputs over 1,000 keys in the first 10 ms; a FIFO pool of 64, 2 ms + 50 us per input.
    Shape shape = new Shape("burst", 64, (n, t, x) -> 2 * MS + n * MS / 20);
    Arrivals in = Arrivals.burst(10_000, 0, 10, 1_000, new SplittableRandom(SEED));
    Result adaptive = run("default", defaults(), shape, in, null, 64, 0, 60_000, SEED);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 64, 0, 60_000, SEED);
    String both = both(adaptive, fixed);
    assertEquals(10_000, adaptive.ok(), both);
    assertTrue(adaptive.firstAtTarget >= 0 && adaptive.firstAtTarget <= 150 * MS,
        "64 calls in flight within 150 ms (about 40 call times of slow start from a limit of 1): " + both);
    assertTrue(adaptive.lastAnswer <= fixed.lastAnswer, "the burst is answered no later than with fixed slots: " + both);
    assertTrue(adaptive.p(0.99) <= fixed.p(0.99), both);
  }

  @Test
  void latencyThatIgnoresConcurrencyTakesTheLimitToTheCeiling() {
    // An external API with no queue: 20 ms whatever the concurrency; 5,000/s over 10,000 keys
    // needs about 100 calls at once, beyond fixed slots' 16 + 16.
    Shape shape = new Shape("flat", 0, (n, t, x) -> 20 * MS);
    Arrivals in = Arrivals.poisson(5_000, 6_000, 10_000, new SplittableRandom(SEED));
    Result adaptive = run("default", defaults(), shape, in, null, 100, 3_000, 60_000, SEED);
    Result unbatched = run("unbatched", null, shape, in, null, 100, 3_000, 60_000, SEED);
    String both = both(adaptive, unbatched);
    assertEquals(PerKeyConfig.DEFAULT_ADAPTIVE_CEILING, adaptive.limitLow, "the limit after 3 s: " + both);
    assertTrue(within(adaptive.p(0.99), unbatched.p(0.99)), "p99 after 3 s: " + both);
  }

  @Test
  void bimodalLatencyThatIgnoresConcurrencyMatchesUnbatchedCalls() {
    // 1 ms usually, 500 ms for 2% of calls, no queue; 5,000/s over 1,000 keys.
    Shape shape = new Shape("bimodal", 0, (n, t, x) -> x.nextDouble() < 0.02 ? 500 * MS : MS);
    Arrivals in = Arrivals.poisson(5_000, 6_000, 1_000, new SplittableRandom(SEED));
    Result adaptive = run("default", defaults(), shape, in, null, 64, 3_000, 60_000, SEED);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 64, 3_000, 60_000, SEED);
    Result unbatched = run("unbatched", null, shape, in, null, 64, 3_000, 60_000, SEED);
    String all = both(adaptive, fixed) + "\n  " + unbatched;
    assertTrue(within(adaptive.p(0.5), unbatched.p(0.5)), "p50 after 3 s: " + all);
    assertTrue(within(adaptive.p(0.99), unbatched.p(0.99)), "p99 after 3 s: " + all);
    assertTrue(adaptive.p(0.99) < fixed.p(0.99), "fixed slots queue behind the slow calls: " + all);
  }

  @Test
  void theLearnedLimitServesAsBeforeAfterAnIdleHour() {
    // Busy 5 s, idle 1 h of virtual time, busy 5 s: FIFO pool 32, 5 ms calls, 4,000/s over 1,000 keys.
    SplittableRandom r = new SplittableRandom(SEED);
    Shape shape = new Shape("idle", 32, (n, t, x) -> 5 * MS);
    Arrivals in = Arrivals.poisson(4_000, 5_000, 1_000, r).then(3_600_000, Arrivals.poisson(4_000, 5_000, 1_000, r));
    Result adaptive = run("default", defaults(), shape, in, null, 32, 3_600_000, 4_000_000, SEED);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 32, 3_600_000, 4_000_000, SEED);
    String both = both(adaptive, fixed);
    assertTrue(adaptive.limitLow >= 16, "the limit after the idle hour: " + both);
    assertTrue(within(adaptive.p(0.99), fixed.p(0.99)), "p99 of the second busy period: " + both);
  }

  @Test
  void aLoopStalledTenSecondsDoesNotLeaveTheLimitLow() {
    // A clock jump as the loop sees it: nothing runs for 10 s at t = 3 s (a suspended VM, a long GC).
    Shape shape = new Shape("stall", 32, (n, t, x) -> 5 * MS);
    Arrivals in = Arrivals.poisson(4_000, 16_000, 1_000, new SplittableRandom(SEED));
    java.util.function.Consumer<VirtualLoop> stall = loop -> loop.schedule(3_000 * MS, () -> loop.stallMillis(10_000));
    Result adaptive = run("default", defaults(), shape, in, null, 32, 14_000, 60_000, SEED, stall);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 32, 14_000, 60_000, SEED, stall);
    String both = both(adaptive, fixed);
    assertTrue(adaptive.limitLow >= 16, "the limit 1 s after the stall: " + both);
    assertTrue(within(adaptive.p(0.99), fixed.p(0.99)), "p99 from 1 s after the stall: " + both);
  }

  @Test
  void oneKeyBatchesAsWithFixedSlots() {
    Shape shape = new Shape("onekey", 8, (n, t, x) -> 2 * MS + 10_000L * n);
    Arrivals in = Arrivals.poisson(20_000, 3_000, 1, new SplittableRandom(SEED));
    Result adaptive = run("default", defaults(), shape, in, null, 1, 0, 60_000, SEED);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 1, 0, 60_000, SEED);
    assertTrue(within(adaptive.p(0.99), fixed.p(0.99)), both(adaptive, fixed));
  }

  @Test
  void tenPercentOfCallsFailingDoesNotHoldTheLimitBelowThePool() {
    // A FIFO pool of 16, 2 ms calls, 10% of them failing whatever the load (ADR 0065).
    Shape shape = new Shape("fail10", 16, (n, t, x) -> x.nextDouble() < 0.1 ? -2 * MS : 2 * MS);
    Arrivals in = Arrivals.poisson(5_000, 5_000, 1_000, new SplittableRandom(SEED));
    Result adaptive = run("default", defaults(), shape, in, null, 16, 1_000, 60_000, SEED);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 16, 1_000, 60_000, SEED);
    String both = both(adaptive, fixed);
    assertTrue(within(adaptive.p(0.99), fixed.p(0.99)), "p99 after 1 s: " + both);
    assertTrue(adaptive.failed(FerryError.FAILED) <= 1.1 * fixed.failed(FerryError.FAILED), both);
  }

  // What broke: reproducers for the control law (CallLimit), disabled while the law fails them.
  // Each compares the default with fixed slots on the same arrivals; the figures are in ADR 0017.
  // The three startup ones hold since ADR 0020 (slow start by waves), with stricter bounds.

  @Test
  void slowStartAgainstASlowDownstreamReaches16CallsWithinFiveCallTimes() {
    // An API taking 1 s per call, no queue; 100/s over 1,000 keys. Fixed slots have 16 + 16 calls
    // out in the first second; the default reached 16 at 30.0 s (16 + 8 + 4 + 2 rounds of 1 s)
    // before ADR 0020; by waves it takes four call times (1, 2, 4, 8), p50 1.0 s against 14.9 s.
    Shape shape = new Shape("slow", 0, (n, t, x) -> 1_000 * MS);
    Arrivals in = Arrivals.poisson(100, 20_000, 1_000, new SplittableRandom(SEED));
    Result adaptive = run("default", defaults(), shape, in, null, 16, 0, 600_000, SEED);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 16, 0, 600_000, SEED);
    String both = both(adaptive, fixed);
    assertTrue(adaptive.firstAtTarget >= 0 && adaptive.firstAtTarget <= 5_000 * MS, "16 calls in flight: " + both);
    assertTrue(adaptive.p(0.5) <= fixed.p(0.5), "p50: " + both);
  }

  @Test
  void shortDeadlinesAtStartupAreServedAsWithFixedSlots() {
    // 5,000 inputs over 1,000 keys in the first 10 ms, each with a 100 ms deadline; FIFO pool of 64,
    // 10 ms calls. Fixed slots served 1,016; the default 59 before ADR 0020, its limit still 1 when
    // the deadlines passed; by waves 2,332 (64 calls out at 60 ms).
    Shape shape = new Shape("deadline", 64, (n, t, x) -> 10 * MS);
    Arrivals in = Arrivals.burst(5_000, 0, 10, 1_000, new SplittableRandom(SEED));
    Result adaptive = run("default", defaults(), shape, in, Duration.ofMillis(100), 64, 0, 60_000, SEED);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, Duration.ofMillis(100), 64, 0, 60_000, SEED);
    assertTrue(adaptive.ok() >= fixed.ok(), "inputs served before their deadline: " + both(adaptive, fixed));
  }

  @Test
  void latencySteepInBatchSizeDoesNotCollapseAfterSlowStart() {
    // FIFO pool of 8, a call of n inputs takes 1 ms + 10 us x n^2 (cheapest per input at 10);
    // 20,000/s over 16 keys. Fixed slots keep every key's batch small (p99 4.7 ms, nothing
    // rejected); the default's first, low limits let batches grow to 100 (101 ms a call, 8,000
    // inputs/s), and it never gets back: p99 1.5 s, 57% rejected. A startup effect only: warmed
    // at 5,000/s first, the same step to 20,000/s is served as with fixed slots (survey4). Since
    // ADR 0020 the slow start reaches 8 calls in 4.3 ms, before batches grow: p99 3.8 ms.
    Shape shape = new Shape("steep", 8, (n, t, x) -> MS + 10_000L * n * n);
    Arrivals in = Arrivals.poisson(20_000, 5_000, 16, new SplittableRandom(SEED));
    Result adaptive = run("default", defaults(), shape, in, null, 8, 2_000, 60_000, SEED);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 8, 2_000, 60_000, SEED);
    String both = both(adaptive, fixed);
    assertEquals(0, adaptive.failed(FerryError.REJECTED), "rejected: " + both);
    assertTrue(within(adaptive.p(0.99), fixed.p(0.99)), "p99 after 2 s: " + both);
  }

  @Test
  void heavyTailedLatencyDoesNotCutTheLimitIntoRejections() {
    // No queue; a call takes 1 ms x Pareto(1.1) (median 1.9 ms, capped at 10 s) whatever the
    // concurrency; 5,000/s over 1,000 keys. Fixed slots reject nothing (p99 0.65 s); the default's
    // limit fell to 2-57 and it rejected 30% of the inputs (p99 7.5 s). Traced (seed 2029,
    // -Dferry.attack.traceMs=250): the floor is the lowest round mean, 1.0 ms, while the median call
    // of this shape is 1.9 ms, so rounds read as queueing and the limit is cut 46 -> 19 -> 6 within
    // 0.5 s; then a few calls of the tail (seconds each) hold all 6 slots, no call completes, no
    // round ends, and nothing leaves for 3.8 s while the queue fills to maxQueueing. That was 1 of
    // these 5 seeds before ADR 0018; with ADR 0018's law, 4 of 5 reject 35-55% (the fifth doubles
    // fixed slots' p99). The floor was set by classes of one or two calls (the fastest draw of the
    // tail); since ADR 0068 only a class with 8 calls in a round lowers its floor: none rejected.
    Shape shape = new Shape("pareto", 0,
        (n, t, x) -> (long) Math.min(10_000 * MS, MS / Math.pow(1 - x.nextDouble(), 1 / 1.1)));
    // The p99 is judged over the seeds, by their median ratio: at 10 s a seed's p99 is set by the
    // few inputs that waited behind a call of seconds, and the same law doubles fixed slots' p99 at
    // one seed in five (ADR 0111: 8 of seeds 2026-2065 at ADR 0114's law, 7 with ADR 0111's).
    int bad = 0;
    double[] ratios = new double[5];
    StringBuilder all = new StringBuilder();
    for (long seed = SEED; seed < SEED + 5; seed++) {
      Arrivals in = Arrivals.poisson(5_000, 10_000, 1_000, new SplittableRandom(seed));
      Result adaptive = run("default", defaults(), shape, in, null, 64, 0, 600_000, seed);
      Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 64, 0, 600_000, seed);
      boolean ok = adaptive.failed(FerryError.REJECTED) <= in.at.length / 100;
      bad += ok ? 0 : 1;
      ratios[(int) (seed - SEED)] = adaptive.p(0.99) / fixed.p(0.99);
      all.append("\nseed ").append(seed).append(ok ? " held" : " BROKE").append("\n  ").append(adaptive)
          .append("\n  ").append(fixed);
    }
    System.out.println(all);
    assertEquals(0, bad, "seeds where the default rejected over 1%:" + all);
    Arrays.sort(ratios);
    assertTrue(ratios[2] <= 1.5, "median p99 over fixed slots' " + ratios[2] + ":" + all);
  }

  @Test
  void theLimitRecoversFromAnOutageAsFastAsItStarted() {
    // FIFO pool of 32, 20 ms calls; every call fails within 1 ms from 5 s to 10 s; 1,000/s over
    // 1,000 keys. Inputs submitted after the outage: fixed slots p99 28 ms; the default 1,035 ms
    // (the outage took the limit to 1, and after the first back-off the law grows it by
    // max(1, limit / 8) per round of at least 16 calls, about 50 call times back to 16).
    long t0 = new VirtualLoop().nanoTime();
    Shape shape = new Shape("outage", 32,
        (n, t, x) -> t - t0 >= 5_000 * MS && t - t0 < 10_000 * MS ? -MS : 20 * MS);
    Arrivals in = Arrivals.poisson(1_000, 15_000, 1_000, new SplittableRandom(SEED));
    Result adaptive = run("default", defaults(), shape, in, null, 20, 10_000, 600_000, SEED);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 20, 10_000, 600_000, SEED);
    assertTrue(adaptive.p(0.99) <= 3 * fixed.p(0.99) + 20, "p99 after the outage: " + both(adaptive, fixed));
  }

  @Test
  @Disabled("a downstream failing every call holds the limit at 1, so callers wait up to 1.9 s to learn it; "
      + "a trade-off kept on purpose: a fast failure may be a downstream shedding load because of our calls (ADR 0020)")
  void aDownstreamFailingEveryCallFailsCallersFast() {
    // FIFO pool of 16, every call fails after 2 ms; 5,000/s over 1,000 keys. Fixed slots tell every
    // caller within 4.5 ms; the default, limit 1, within 1,859 ms.
    Shape shape = new Shape("down", 16, (n, t, x) -> -2 * MS);
    Arrivals in = Arrivals.poisson(5_000, 10_000, 1_000, new SplittableRandom(SEED));
    Result adaptive = run("default", defaults(), shape, in, null, 16, 0, 600_000, SEED);
    Result fixed = run("fixed-slots", fixedSlots(), shape, in, null, 16, 0, 600_000, SEED);
    assertTrue(adaptive.slowestFailure() <= 10 * Math.max(1, fixed.slowestFailure()), both(adaptive, fixed));
  }

  /** What a user can do about the shapes that broke: pin the limit, bound the batch. */
  @Test
  @EnabledIfSystemProperty(named = "ferry.attack.survey", matches = "true")
  void survey3() {
    Shape steep = new Shape("steep", 8, (n, t, x) -> MS + 10_000L * n * n);
    Arrivals in = Arrivals.poisson(20_000, 5_000, 16, new SplittableRandom(SEED));
    System.out.println("H. steep batch cost, mitigations (after 2 s)");
    for (PerKeyConfig c : List.of(defaults(), fixedSlots(), PerKeyConfig.builder().pinnedLimit(8).build(),
        PerKeyConfig.builder().pinnedLimit(16).build(), PerKeyConfig.builder().maxBatchSize(20).build(),
        PerKeyConfig.builder().maxInFlightBatches(16).build())) {
      System.out.println("  " + c + "\n    " + run("", c, steep, in, null, 8, 2_000, 60_000, SEED));
    }
    Shape dl = new Shape("deadline", 64, (n, t, x) -> 10 * MS);
    Arrivals burst = Arrivals.burst(5_000, 0, 10, 1_000, new SplittableRandom(SEED));
    System.out.println("L. startup deadlines, mitigations");
    for (PerKeyConfig c : List.of(defaults(), fixedSlots(), PerKeyConfig.builder().pinnedLimit(64).build())) {
      System.out.println("  " + c + "\n    " + run("", c, dl, burst, Duration.ofMillis(100), 64, 0, 60_000, SEED));
    }
  }

  /** Whether the steep shape's collapse needs the slow start: warm at a quarter of the load first. */
  @Test
  @EnabledIfSystemProperty(named = "ferry.attack.survey", matches = "true")
  void survey4() {
    SplittableRandom r = new SplittableRandom(SEED);
    compare("H3. steep batch cost, 5,000/s for 5 s then 20,000/s for 5 s: FIFO pool 8, 16 keys; after 7 s",
        new Shape("steep", 8, (n, t, x) -> MS + 10_000L * n * n),
        Arrivals.poisson(5_000, 5_000, 16, r).then(0, Arrivals.poisson(20_000, 5_000, 16, r)), null, 8, 7_000, 60_000);
  }

  /** A downstream down for a while (fast failures, or failures at its client's timeout), then back. */
  @Test
  @EnabledIfSystemProperty(named = "ferry.attack.survey", matches = "true")
  void survey5() {
    SplittableRandom r = new SplittableRandom(SEED);
    long t0 = new VirtualLoop().nanoTime();
    compare("O1. down (fails in 1 ms) from 5 s to 10 s, then back: FIFO pool 32, 20 ms; 1,000/s over 1,000 keys for 20 s; "
        + "from 10 s", new Shape("outage", 32,
            (n, t, x) -> t - t0 >= 5_000 * MS && t - t0 < 10_000 * MS ? -MS : 20 * MS),
        Arrivals.poisson(1_000, 20_000, 1_000, r), null, 20, 10_000, 600_000);
    compare("O2. hangs until its client's 1 s timeout from 5 s to 10 s, then back: FIFO pool 32, 20 ms; 1,000/s over "
        + "1,000 keys for 20 s; from 10 s", new Shape("outage", 32,
            (n, t, x) -> t - t0 >= 5_000 * MS && t - t0 < 10_000 * MS ? -1_000 * MS : 20 * MS),
        Arrivals.poisson(1_000, 20_000, 1_000, r), null, 20, 10_000, 600_000);
    compare("O3. as O2, all inputs counted (failure waits)", new Shape("outage", 32,
            (n, t, x) -> t - t0 >= 5_000 * MS && t - t0 < 10_000 * MS ? -1_000 * MS : 20 * MS),
        Arrivals.poisson(1_000, 20_000, 1_000, r), null, 20, 0, 600_000);
  }
}
