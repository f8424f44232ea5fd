package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Dispatch;
import dev.ferry.FerryMetrics;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.VirtualLoop;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The learned limit (ADR 0012) fed by the real engine under an open-loop load, in virtual time:
 * inputs arrive at random (Poisson, seeded) over a few keys, the engine batches them and calls a
 * pool of connections that serves calls in arrival order. Unlike {@link CallLimitTest}'s
 * saturating client, the load here is below what the downstream carries, which is where the
 * limit's judgement is the least certain: batches are small and vary, so every round's figures
 * are noisy.
 */
class LearnedLimitUnderLoadTest {
  static final long MS = 1_000_000L;

  /** A FIFO pool of {@code size} connections, each call costing 2 ms + 5 us per input. */
  static OpenLoopPool.Pool fifo(VirtualLoop loop, int size) {
    return new OpenLoopPool.Pool(loop, size, (t, n, i, r) -> 2 * MS + 5_000L * n, loop.nanoTime(), 0);
  }

  /**
   * Runs {@code inputsPerSec} over {@code keys} keys against a pool of {@code pool} (2 ms + 5 us per
   * input) for {@code seconds}; returns the lowest and highest limit in force after the first second,
   * and the per mille of that time the limit spent within [pool, 2 x pool].
   */
  static int[] limitUnderLoad(int pool, int keys, double inputsPerSec, int seconds, long seed) {
    return limitUnderLoad(pool, keys, inputsPerSec, seconds, seed, 0, null);
  }

  /**
   * As above, on a loop that runs every posted task {@code loopLagNanos} late, the store's
   * completions included; {@code ferryOut} receives the ferry at the end.
   */
  static int[] limitUnderLoad(int pool, int keys, double inputsPerSec, int seconds, long seed, long loopLagNanos,
      java.util.function.Consumer<PerKeyFerry<Integer, Integer, List<Integer>, Integer>> ferryOut) {
    int[] seen = {Integer.MAX_VALUE, 0, 0};
    long[] within = {0};
    // The limit in force over each step of virtual time after the first second.
    PerKeyFerry<Integer, Integer, List<Integer>, Integer> ferry = OpenLoopPool.run(pool, keys, inputsPerSec,
        (t, n, i, r) -> 2 * MS + 5_000L * n, loopLagNanos, 1000 * MS, seconds * 1000 * MS, seed, (limit, nanos) -> {
          within[0] += limit >= pool && limit <= 2 * pool ? nanos : 0;
          seen[0] = Math.min(seen[0], limit);
          seen[1] = Math.max(seen[1], limit);
        });
    seen[2] = (int) (1000 * within[0] / ((seconds - 1) * 1000 * MS));
    if (ferryOut != null) {
      ferryOut.accept(ferry);
    }
    return seen;
  }

  @Test
  void atMiddleLoadsOfSmallBatchesTheLimitStaysWithinPoolAndTwicePool() {
    // 16 keys, a pool of 4 connections at 2 ms a call: 2,000 calls a second. 4,000 and 8,000
    // inputs a second are a quarter and half of what full batches of 8 carry, but more calls than
    // the pool serves unless batches hold 2 to 4 inputs: the queue must form in the ferry (where
    // batches grow), not at the pool. The rounds' delivered-rate figures vary by 20-30% from one
    // to the next here (batches of 1 to 3 inputs, 16 calls a round): before ADR 0012's trials
    // asked whether the calls a cut removed had been served or queued (ADR 0018), that noise
    // undid cuts and rebased the floors upwards, and the limit climbed to 13-18 (every key's call
    // out: 4.5x the pool), within [4, 8] none of the time.
    for (double rate : new double[] {4_000, 8_000}) {
      for (long seed = 1; seed <= 3; seed++) {
        int[] seen = limitUnderLoad(4, 16, rate, 4, seed);
        String at = "seed " + seed + ", " + rate + " inputs/s: limit " + seen[0] + ".." + seen[1] + ", within [4, 8] "
            + seen[2] / 10.0 + "% of the time";
        assertTrue(seen[2] >= 900, at);
        assertTrue(seen[1] <= 12, at + ": the limit came near every key's call out (16)");
      }
    }
  }

  /** The check of the test above for one run: null when it holds, else what went wrong. */
  static String outsidePoolAndTwicePool(long seed, double rate) {
    int[] seen = limitUnderLoad(4, 16, rate, 4, seed);
    boolean ok = seen[2] >= 900 && seen[1] <= 12;
    return ok ? null : "seed " + seed + ", " + rate + " inputs/s: limit " + seen[0] + ".." + seen[1] + ", within [4, 8] "
        + seen[2] / 10.0 + "% of the time";
  }

  @Test
  void atSeedsWhereOneRoundsNoiseUndidACutTheLimitStaysWithinPoolAndTwicePool() {
    // Runs of the test above that failed in a sweep of seeds 1-500: on main before ADR 0020 (31,
    // 119 and 188), and with ADR 0020's slow start before its trial rule (19, 44 and 99). Each was
    // the same event: a cut of one call (6 to 5, 7 to 6) judged by one round's delivered rate,
    // which varies by a fifth here, read a loss; the undo read a recovery; the floors rebased onto
    // the queue and the limit sat at 9-16. A cut under a fifth of the limit is no longer a trial.
    StringBuilder bad = new StringBuilder();
    for (long[] run : new long[][] {{31, 8_000}, {119, 4_000}, {188, 8_000}, {19, 4_000}, {44, 4_000}, {99, 4_000}}) {
      String why = outsidePoolAndTwicePool(run[0], run[1]);
      bad.append(why == null ? "" : "\n  " + why);
    }
    assertTrue(bad.length() == 0, "runs outside [pool, 2 x pool] over 10% of the time:" + bad);
  }

  /**
   * The seed sweep behind ADR 0020's figures, skipped unless asked for (about a minute for 500
   * seeds): {@code mvn -o verify -pl ferry-core -Dtest='LearnedLimitUnderLoadTest#seedSweep'
   * -Dferry.sweep.seeds=500}. Prints every failing run and asserts none.
   */
  @Test
  @EnabledIfSystemProperty(named = "ferry.sweep.seeds", matches = "\\d+")
  void seedSweep() {
    long seeds = Long.getLong("ferry.sweep.seeds");
    StringBuilder bad = new StringBuilder();
    int failed = 0;
    for (long seed = 1; seed <= seeds; seed++) {
      for (double rate : new double[] {4_000, 8_000}) {
        String why = outsidePoolAndTwicePool(seed, rate);
        if (why != null) {
          failed++;
          bad.append("\n  ").append(why);
        }
      }
    }
    System.out.println("seed sweep 1-" + seeds + " at 4,000 and 8,000 inputs/s: " + failed + " of " + 2 * seeds + " runs failed" + bad);
    assertTrue(failed == 0, failed + " of " + 2 * seeds + " runs failed:" + bad);
  }

  /**
   * Scenario 3's variant (c) at its pool of 16 (64 keys, 14,118 inputs/s: 90% of what 4
   * connections carry with full batches), its store's completions reaching the ferry through the
   * loop, and from 1 s on the whole loop stalls now and then ({@link VirtualLoop#stallMillis}: a
   * GC pause, the machine descheduling the process): 5 to 50 ms, 50 to 250 ms apart (seeded).
   * Returns the lowest limit in force from 1 s to 4 s.
   */
  static int lowestUnderStalls(long seed) {
    VirtualLoop loop = new VirtualLoop();
    OpenLoopPool.Pool store = fifo(loop, 16);
    store.throughTheLoop = true;
    PerKeyConfig config = PerKeyConfig.builder().dispatch(Dispatch.ADAPTIVE).maxBatchSize(8).build();
    PerKeyFerry<Integer, Integer, List<Integer>, Integer> ferry = new PerKeyFerry<>(loop, config, k -> k, null, null,
        (k, ins) -> store.call(ins.size()).map(v -> ins), (in, r) -> in);
    double rate = 0.9 * 4 * 8 / ((2 * MS + 8 * 5_000) / 1e9);
    SplittableRandom rnd = new SplittableRandom(seed);
    SplittableRandom stalls = new SplittableRandom(seed + 1);
    long start = loop.nanoTime();
    long end = start + 4000 * MS;
    Runnable[] arrive = new Runnable[1];
    arrive[0] = () -> {
      ferry.submit(rnd.nextInt(64));
      long gap = (long) (-Math.log(1 - rnd.nextDouble()) / rate * 1e9);
      if (loop.nanoTime() + gap < end) {
        loop.schedule(Math.max(1, gap), arrive[0]);
      }
    };
    loop.schedule(1, arrive[0]);
    long nextStall = start + 1000 * MS;
    int lowest = Integer.MAX_VALUE;
    while (loop.nextTimerAt() >= 0 && loop.nanoTime() < end) {
      if (loop.nanoTime() - nextStall >= 0) {
        loop.stallMillis(5 + stalls.nextInt(46));
        nextStall = loop.nanoTime() + (50 + stalls.nextInt(201)) * MS;
      }
      loop.advance(Math.max(1, Math.min(nextStall, loop.nextTimerAt()) - loop.nanoTime()));
      if (loop.nanoTime() - start >= 1000 * MS) {
        lowest = Math.min(lowest, ferry.metrics().callLimit());
      }
    }
    return lowest;
  }

  @Test
  void stallsOfTheWholeProcessDoNotCollapseTheLimit() {
    // ADR 0107. A stall holds every call in flight at once: the ferry sees them all complete late
    // and, its loop-lag probe having waited through none of it, reads a round whose median call
    // took several times its floor as the downstream queueing. Without ADR 0107 the limit was cut
    // from 19-24 to 2-7 at a third of the stalls of 10 ms or more and came back over ~100 ms
    // (+1/8 a round); the variant (c) measured the same in real time (24 -> 3 within
    // 20 ms). The stall shows in the completions: none for a stretch of several call times while
    // calls were in flight, which a queue at the downstream never does. The bound is a call below
    // the pool: the limit's own cuts at this load reach 15 without any stall (served + allowance).
    for (long seed = 1; seed <= 3; seed++) {
      int lowest = lowestUnderStalls(seed);
      assertTrue(lowest >= 15, "seed " + seed + ": the limit fell to " + lowest + " under stalls of the whole process; the pool is 16");
    }
  }

  @Test
  void theLoopsLagReachesTheLimitThroughTheEngine() {
    // ADR 0015 end to end: the engine's probe reads how late its loop runs posted tasks and passes
    // that to the limit with each call's latency. Here every posted task, the store's completions
    // included, runs 1 ms late (half a call's own 2 ms): the limit must see that lag (its metric)
    // and, taking it off, keep enough calls out for a load that needs the whole pool. (A lag of
    // more than the call itself from the first call on keeps the limit at 1: such rounds are not
    // judged, ADR 0015, and the limit starts at 1.)
    long lag = MS;
    FerryMetrics[] metrics = new FerryMetrics[1];
    int[] seen = limitUnderLoad(16, 256, 40_000, 4, 1, lag, f -> metrics[0] = f.metrics());
    long seenLag = metrics[0].seenLoopLagMicros();
    assertTrue(seenLag >= 500 && seenLag <= 1_000, "the limit saw a loop lag of " + seenLag + " us; the loop ran tasks 1 ms late");
    assertTrue(seen[0] >= 16, "the limit fell to " + seen[0] + " on a late loop; the pool is 16");
  }
}
