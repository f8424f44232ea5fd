package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The control law of ADR 0012 against hostile downstream shapes, driven in waves: a saturating
 * client starts {@code limit} calls at once, they complete after the latency the shape gives, and
 * the next wave starts when the last one is back. No clock, no sleeps: time is a number.
 */
class CallLimitHostileTest {
  static final long MS = 1_000_000L;

  interface Shape {
    /** Latency in nanos (negative: the call failed after that long) of a call of {@code size} inputs, the {@code i}-th of {@code n} in its wave. */
    long latency(int i, int n, int size, Random rnd);
  }

  /** Runs waves from {@code start} for {@code span} nanos; returns the lowest and highest limit seen after {@code settle}. */
  static int[] drive(CallLimit limit, long start, long span, long settle, Shape shape, long seed) {
    return drive(limit, start, span, settle, shape, seed, r -> 8);
  }

  /** As above, each call carrying the inputs {@code sizes} draws. */
  static int[] drive(CallLimit limit, long start, long span, long settle, Shape shape, long seed,
      java.util.function.ToIntFunction<Random> sizes) {
    Random rnd = new Random(seed);
    long now = start;
    int[] seen = {Integer.MAX_VALUE, 0};
    while (now - start < span) {
      int n = limit.limit();
      long[] lat = new long[n];
      int[] size = new int[n];
      boolean[] failed = new boolean[n];
      long longest = 0;
      for (int i = 0; i < n; i++) {
        size[i] = sizes.applyAsInt(rnd);
        long l = shape.latency(i, n, size[i], rnd);
        failed[i] = l < 0;
        lat[i] = Math.abs(l);
        longest = Math.max(longest, lat[i]);
      }
      Integer[] order = new Integer[n];
      for (int i = 0; i < n; i++) {
        order[i] = i;
      }
      java.util.Arrays.sort(order, (a, b) -> Long.compare(lat[a], lat[b]));
      for (int k : order) {
        limit.completed(now + lat[k], lat[k], size[k], k + 1, failed[k]);
        if (now - start >= settle) {
          seen[0] = Math.min(seen[0], limit.limit());
          seen[1] = Math.max(seen[1], limit.limit());
        }
      }
      now += Math.max(1, longest);
    }
    return seen;
  }

  @Test
  void latencyThatDoesNotDependOnConcurrencyLetsTheLimitGrowToTheMaximum() {
    CallLimit limit = CallLimit.learned(64);
    int[] seen = drive(limit, 0, 2000 * MS, 1000 * MS, (i, n, s, r) -> 2 * MS, 1);
    assertEquals(64, seen[0], "lowest limit after 1 s against a downstream that never queues");
  }

  @Test
  void theLimitKeepsLearningWhenTheLoopClockWrapsAroundLongMaxValue() {
    // System.nanoTime has an arbitrary origin: differences stay right across the wrap, comparisons do not.
    CallLimit wrapped = CallLimit.learned(64);
    CallLimit plain = CallLimit.learned(64);
    long start = Long.MAX_VALUE - 50 * MS;
    drive(wrapped, start, 2000 * MS, 0, (i, n, s, r) -> 2 * MS, 1);
    drive(plain, 0, 2000 * MS, 0, (i, n, s, r) -> 2 * MS, 1);
    assertEquals(plain.limit(), wrapped.limit(), "limit after the same 2 s, clock wrapped vs not");
  }

  @Test
  void aLoopClockThatGoesBackwardsDoesNotFreezeTheLimit() {
    // A clock that is not monotonic (a wall clock set back, a virtualised timer): after it jumps
    // back 10 s, calls seem to start before the round in progress; they must still be judged.
    CallLimit limit = CallLimit.learned(64);
    // (Three waves of 2 ms: the slow start doubles per wave since ADR 0020, so the limit is 8.)
    drive(limit, 0, 6 * MS, 0, (i, n, s, r) -> 2 * MS, 1);
    int before = limit.limit();
    assertTrue(before < 64, "the limit should still be growing at 6 ms: " + before);
    drive(limit, 6 * MS - 10_000 * MS, 1000 * MS, 0, (i, n, s, r) -> 2 * MS, 1);
    assertEquals(64, limit.limit(), "limit 1 s after the clock went back 10 s (it was " + before + ")");
  }

  @Test
  void afterAnOutageTheLimitDoublesBackPerWaveToWhereItWas() {
    // ADR 0019: an outage (every call failing fast) backs the limit off to 1; once calls succeed
    // again, each wave of successes doubles it back to the limit held before the outage, instead
    // of one call per round of 16 (about 50 call times from 1 to 16).
    CallLimit limit = CallLimit.learned(64);
    drive(limit, 0, 1000 * MS, 0, (i, n, s, r) -> 2 * MS, 1);
    assertEquals(64, limit.limit(), "before the outage");
    drive(limit, 1000 * MS, 2000 * MS, 0, (i, n, s, r) -> -MS, 1);
    assertEquals(1, limit.limit(), "after 2 s of failures");
    // Eight waves of 2 ms calls: 1, 2, 4, ... 64 takes six.
    drive(limit, 3000 * MS, 16 * MS, 0, (i, n, s, r) -> 2 * MS, 1);
    assertEquals(64, limit.limit(), "eight call times after the outage");
  }

  @Test
  void failuresInAFloorRoundBackTheLimitOff() {
    // The floor re-measurement runs one round at 60% of the limit, then restores it: a downstream
    // that fails every call of that round must not get the full limit back as if nothing failed.
    CallLimit limit = CallLimit.learned(64);
    long now = 0;
    // One wave at a time until a floor round starts (30 s after the first call).
    while (!limit.inFloorRound() && now < 40_000 * MS) {
      drive(limit, now, 1, 0, (i, n, s, r) -> 2 * MS, 1);
      now += 2 * MS;
    }
    assertTrue(limit.inFloorRound(), "no floor round within 40 s");
    while (limit.inFloorRound()) {
      drive(limit, now, 1, 0, (i, n, s, r) -> -2 * MS, 1);
      now += 2 * MS;
    }
    assertTrue(limit.limit() < 64, "every call of the floor round failed, yet the limit came back to " + limit.limit());
  }

  @Test
  void aClockNearLongMaxValueDoesNotForceAFloorRoundEveryRound() {
    // nextFloorRound = now + 30 s must not overflow into "due at once" within 30 s of the wrap.
    CallLimit limit = CallLimit.learned(64);
    int[] seen = drive(limit, Long.MAX_VALUE - 20_000 * MS, 2000 * MS, 1000 * MS, (i, n, s, r) -> 2 * MS, 1);
    assertEquals(64, seen[0], "lowest limit: a floor round would drop it to 60%");
  }

  // A class of one or two calls in a round must not lower its floor (ADR 0068): with calls spread
  // over eight batch-size classes, the lowest "mean" of such a class is the tail's fastest call
  // (1 ms) while the median call is 1.9 ms, and every round reads as queueing.
  @Test
  void heavyTailedLatencySpreadOverBatchSizesDoesNotReadAsQueueing() {
    for (long seed = 1; seed <= 5; seed++) {
      CallLimit limit = CallLimit.learned(64);
      // 1 ms x Pareto(1.1) (median 1.9 ms), capped at 50 ms, whatever the size and concurrency;
      // batches of 1 to 128 inputs.
      int[] seen = drive(limit, 0, 20_000 * MS, 10_000 * MS,
          (i, n, s, r) -> (long) Math.min(50 * MS, MS / Math.pow(1 - r.nextDouble(), 1 / 1.1)), seed,
          r -> 1 << r.nextInt(8));
      assertTrue(seen[0] >= 16, "seed " + seed + ": lowest limit " + seen[0]
          + " after 10 s against a downstream that never queues");
    }
  }

  // Floors are round means and a round is judged by its median call: with 60% of calls at 10 ms
  // and 40% at 1 ms, the median call reads as 1.5x its floor, queueing by latency alone. The cut it
  // makes costs inputs per second (latency does not depend on concurrency here), so it is undone.
  @Test
  void bimodalLatencyThatDoesNotDependOnConcurrencyDoesNotCollapseTheLimit() {
    // 60% of calls take 10 ms, 40% take 1 ms, whatever the concurrency (a cache with 40% hits).
    for (long seed = 1; seed <= 5; seed++) {
      CallLimit limit = CallLimit.learned(64);
      drive(limit, 0, 10_000 * MS, 0, (i, n, s, r) -> r.nextDouble() < 0.6 ? 10 * MS : MS, seed);
      // Then every 100 ms for 10 s: trial cuts may dip the limit for a round or two, no more.
      int high = 0;
      int lowest = Integer.MAX_VALUE;
      for (int k = 0; k < 100; k++) {
        int[] seen = drive(limit, (100 + k) * 100 * MS, 100 * MS, 0,
            (i, n, s, r) -> r.nextDouble() < 0.6 ? 10 * MS : MS, seed * 1000 + k);
        lowest = Math.min(lowest, seen[0]);
        high += limit.limit() >= 48 ? 1 : 0;
      }
      assertTrue(lowest >= 16, "seed " + seed + ": lowest limit " + lowest + " against a downstream that never queues");
      assertTrue(high >= 90, "seed " + seed + ": the limit was at 48 or more at " + high + " of 100 times");
    }
  }

  @Test
  void zeroLatencyCallsNeitherCollapseNorBreakTheLimit() {
    CallLimit limit = CallLimit.learned(64);
    int[] seen = drive(limit, 0, 20_000, 0, (i, n, s, r) -> 0, 1);
    assertTrue(seen[0] >= 1 && seen[1] <= 64, "limit left [1, 64]: " + seen[0] + ".." + seen[1]);
    assertEquals(64, limit.limit());
  }

  @Test
  void failuresFasterThanSuccessesNeverRaiseTheLimit() {
    // A pool of 4: a call beyond it is refused at once (0.1 ms), calls within take 5 ms.
    CallLimit limit = CallLimit.learned(64);
    int[] seen = drive(limit, 0, 5000 * MS, 1000 * MS, (i, n, s, r) -> i < 4 ? 5 * MS : -MS / 10, 1);
    assertTrue(seen[1] <= 8, "highest limit " + seen[1] + " against a pool of 4 that refuses the rest");
  }

  @Test
  void aDownstreamThatGotSlowerForGoodGetsItsLimitBackWithinTheFloorPeriod() {
    CallLimit limit = CallLimit.learned(64);
    drive(limit, 0, 2000 * MS, 0, (i, n, s, r) -> 2 * MS, 1);
    assertEquals(64, limit.limit());
    int[] seen = drive(limit, 2000 * MS, 40_000 * MS, 35_000 * MS, (i, n, s, r) -> 20 * MS, 1);
    assertEquals(64, seen[0], "lowest limit 35 s after a slow-down that does not depend on concurrency");
  }

  // Failures back off the limit only while they follow our concurrency (ADR 0065). Before, any
  // failed call in a round cut the limit by a tenth: one key whose batches always fail, retried by
  // its clients, pinned the limit at 1 for every other key, and 5% of failed batches held it at 1-10.

  @Test
  void oneKeyWhoseBatchesAlwaysFailDoesNotPinTheLimit() {
    // Every other call takes 2 ms whatever the concurrency; one key's batch fails at once, retried
    // about every 10 ms (every fifth wave).
    for (long seed = 1; seed <= 3; seed++) {
      CallLimit limit = CallLimit.learned(64);
      long[] wave = {0};
      int[] seen = drive(limit, 0, 20_000 * MS, 10_000 * MS, (i, n, s, r) -> {
        if (i == 0) {
          wave[0]++;
        }
        return i == 0 && wave[0] % 5 == 0 ? -MS / 10 : 2 * MS;
      }, seed);
      assertTrue(seen[0] >= 48, "seed " + seed + ": lowest limit " + seen[0] + " with one failing key beside a downstream that never queues");
    }
  }

  @Test
  void aFixedShareOfFailedBatchesDoesNotCollapseTheLimit() {
    for (long seed = 1; seed <= 5; seed++) {
      CallLimit limit = CallLimit.learned(64);
      // 5% of calls fail (after their full latency), whatever the concurrency.
      int[] seen = drive(limit, 0, 20_000 * MS, 10_000 * MS, (i, n, s, r) -> r.nextDouble() < 0.05 ? -2 * MS : 2 * MS, seed);
      assertTrue(seen[0] >= 24, "seed " + seed + ": lowest limit " + seen[0] + " with 5% of calls failing whatever the load");
    }
  }

  @Test
  void failuresThatFollowConcurrencyStillBackOff() {
    // A pool of 8 that refuses every call beyond it at once: the limit stays near 8.
    for (long seed = 1; seed <= 3; seed++) {
      CallLimit pool = CallLimit.learned(64);
      int[] seen = drive(pool, 0, 10_000 * MS, 5_000 * MS, (i, n, s, r) -> i < 8 ? 2 * MS : -MS / 10, seed);
      assertTrue(seen[1] <= 16, "seed " + seed + ": highest limit " + seen[1] + " against a pool of 8 that refuses the rest");
    }
    // A downstream that fails every call (down, or overloaded) backs the limit off to 1, as before.
    CallLimit dead = CallLimit.learned(64);
    drive(dead, 0, 2_000 * MS, 0, (i, n, s, r) -> 2 * MS, 1);
    assertEquals(64, dead.limit());
    drive(dead, 2_000 * MS, 2_000 * MS, 0, (i, n, s, r) -> -2 * MS, 1);
    assertEquals(1, dead.limit(), "limit after 2 s of every call failing");
  }

  /**
   * One wave of {@code n} calls of 8 inputs from a saturating client: call {@code i} starts
   * {@code i} x latency / n after {@code t} with {@code n} in flight and is back {@code latency}
   * later, so calls complete steadily, as from a downstream that serves or queues them (a stall
   * completes nothing, then everything). The first {@code failing} fail. Returns when the last is back.
   */
  static long wave(CallLimit limit, long t, int n, long latency, int failing) {
    for (int i = 0; i < n; i++) {
      limit.completed(t + i * latency / n + latency, latency, 8, n, i < failing);
    }
    return t + (n - 1) * latency / n + latency;
  }

  /** Slow start against 2 ms calls that never queue, up to {@code limit}'s maximum; returns the time. */
  static long toTheMaximum(CallLimit limit, int max) {
    long t = 0;
    while (limit.limit() < max) {
      t = wave(limit, t, limit.limit(), 2 * MS, 0);
    }
    return t;
  }

  @Test
  void aBackOffAfterWhichAsLargeAShareFailsIsUndoneAndThatShareTolerated() {
    // ADR 0065: failures back the limit off only while they follow our concurrency. A tenth of the
    // calls fail at 100 calls in flight and again at 90: the back-off did not help, so it is undone
    // at once, and that share no longer backs off (it comes from the inputs, not the load).
    CallLimit limit = CallLimit.learned(100);
    long t = toTheMaximum(limit, 100);
    t = wave(limit, t, 100, 2 * MS, 10);
    assertEquals(90, limit.limit(), "a tenth failed: backed off by a tenth");
    t = wave(limit, t, 90, 2 * MS, 9);
    assertEquals(100, limit.limit(), "as large a share failed at 90: the back-off is undone");
    for (int round = 1; round <= 3; round++) {
      t = wave(limit, t, 100, 2 * MS, 10);
      assertEquals(100, limit.limit(), "round " + round + " after: the share is tolerated");
    }
  }

  @Test
  void aToleratedShareOfFailuresDecays() {
    // ADR 0065: the tolerated share decays (by LOSS a round): once the failures have stopped for a
    // while, the same share fails again because of the load, and backs off again.
    CallLimit limit = CallLimit.learned(100);
    long t = toTheMaximum(limit, 100);
    t = wave(limit, t, 100, 2 * MS, 10);
    t = wave(limit, t, 90, 2 * MS, 9);
    assertEquals(100, limit.limit(), "the share is tolerated");
    for (int round = 0; round < 20; round++) {
      t = wave(limit, t, 100, 2 * MS, 0);
    }
    wave(limit, t, 100, 2 * MS, 10);
    assertEquals(90, limit.limit(), "twenty clean rounds later, a tenth failing backs off again");
  }

  @Test
  void latencyFarBeyondWhatOurCallsCouldCauseNeverCutsAndRebasesTheFloorsWhenItLasts() {
    // CallLimit.ROUNDS_NOT_OURS: four calls in flight to a downstream that turns twenty times slower
    // for good. Our own four calls could make a call wait at most four call-times, so a latency
    // twenty times the floor is not our queue (a slower downstream, a loop answering late): those
    // rounds never cut, and once it lasts five rounds the floors move to what calls take now.
    // Without the rebase the floor stayed at 2 ms for as long as the slowdown lasted.
    CallLimit limit = CallLimit.learned(4);
    long t = toTheMaximum(limit, 4);
    for (int i = 0; i < 20; i++) {
      t = wave(limit, t, 4, 2 * MS, 0);
    }
    assertEquals(2 * MS, limit.seenFloorNanos());
    for (int round = 1; round <= 4; round++) {
      t = wave(limit, t, 4, 40 * MS, 0);
      assertEquals(4, limit.limit(), "round " + round + ": not our queue, no cut");
      assertEquals(2 * MS, limit.seenFloorNanos(), "round " + round + ": too soon to rebase");
    }
    for (int round = 5; round <= 7; round++) {
      t = wave(limit, t, 4, 40 * MS, 0);
      assertEquals(4, limit.limit(), "round " + round + ": not our queue, no cut");
    }
    assertEquals(40 * MS, limit.seenFloorNanos(), "the slowdown lasted: the floors are what calls take now");
  }

  @Test
  void everyCallFailingAlwaysBacksOffAndHalfFailingIsJudgedLikeAnyShare() {
    // ADR 0065 as amended by ADR 0184: a downstream failing every call it gets is down: no back-off
    // is undone for it, and no tolerated share excuses it.
    CallLimit limit = CallLimit.learned(100);
    long t = toTheMaximum(limit, 100);
    t = wave(limit, t, 100, 2 * MS, 100);
    assertEquals(90, limit.limit());
    t = wave(limit, t, 90, 2 * MS, 90);
    assertEquals(81, limit.limit(), "every call failed again: backed off again, not undone");
    // A tolerated share learned from 40% failing at 100 and at 90 ...
    CallLimit tolerant = CallLimit.learned(100);
    t = toTheMaximum(tolerant, 100);
    t = wave(tolerant, t, 100, 2 * MS, 40);
    t = wave(tolerant, t, 90, 2 * MS, 36);
    assertEquals(100, tolerant.limit(), "40% failing at 100 and at 90: tolerated");
    // ... does not excuse every call failing.
    wave(tolerant, t, 100, 2 * MS, 100);
    assertEquals(90, tolerant.limit(), "every call failed: backed off whatever was tolerated");
    // Half failing at 100 and at 90 is a share that does not follow the load (a replica of two
    // down): the back-off is undone and the share tolerated, as any other share is. Until ADR 0184
    // half or more always backed off, and such a downstream held the limit at 1.
    CallLimit half = CallLimit.learned(100);
    t = toTheMaximum(half, 100);
    t = wave(half, t, 100, 2 * MS, 50);
    assertEquals(90, half.limit(), "half failed: backed off by a tenth");
    t = wave(half, t, 90, 2 * MS, 45);
    assertEquals(100, half.limit(), "half failed at 90 as well: the back-off is undone");
    for (int round = 1; round <= 3; round++) {
      t = wave(half, t, 100, 2 * MS, 50);
      assertEquals(100, half.limit(), "round " + round + " after: the share is tolerated");
    }
    // Half failing at 100 and a fifth at 90 follows the load (a pool refusing calls beyond it):
    // the back-off stands.
    CallLimit following = CallLimit.learned(100);
    t = toTheMaximum(following, 100);
    t = wave(following, t, 100, 2 * MS, 50);
    t = wave(following, t, 90, 2 * MS, 18);
    assertTrue(following.limit() <= 90, "the failed share fell with the limit: not undone, limit " + following.limit());
  }

  @Test
  void aShallowBackOffOnFailuresIsNotDoubledBack() {
    // ADR 0019: only a back-off to half the limit or less (an outage) doubles back per clean wave.
    // Failures that follow our concurrency stop a tenth below the limit that caused them, and the
    // next round is judged as any: here its calls queue (twice their floor), so it is cut further.
    CallLimit limit = CallLimit.learned(64);
    long t = toTheMaximum(limit, 64);
    t = wave(limit, t, 64, 2 * MS, 26);
    assertEquals(58, limit.limit());
    wave(limit, t, 58, 4 * MS, 0);
    assertTrue(limit.limit() < 58, "a clean round that queued after a shallow back-off: limit " + limit.limit());
  }

  @Test
  void aFloorRoundWhoseCallsWereHeldUpTogetherIsAbandoned() {
    // ADR 0107: a stall (a GC pause, the downstream pausing) holds every call in flight at once
    // and completes nothing, then everything. A floor round that met one would make the stall the
    // floors for a floor period: it is abandoned, the limit before it returns and the floors stay.
    CallLimit limit = CallLimit.learned(64);
    long t = toTheMaximum(limit, 64);
    while (!limit.inFloorRound()) {
      t = wave(limit, t, limit.limit(), 2 * MS, 0);
    }
    int floorLimit = limit.limit();
    assertTrue(floorLimit < 64, "a floor round runs below the limit: " + floorLimit);
    // Every call of the floor round starts at once, is held 10 ms (five floor times), and all come
    // back together.
    for (int i = 0; i < floorLimit; i++) {
      limit.completed(t + 10 * MS, 10 * MS, 8, floorLimit, false);
    }
    assertTrue(!limit.inFloorRound(), "the floor round is over");
    assertEquals(2 * MS, limit.floorNanos(8), "the stall did not become the floor");
    assertEquals(64, limit.limit(), "the limit before the floor round returns");
    wave(limit, t + 10 * MS, 64, 2 * MS, 0);
    assertTrue(!limit.inFloorRound(), "the next floor round is a floor period away");
  }

  @Test
  void aCutThatCostThroughputWithoutLatencyRisingIsUndoneAndTheFloorsFollow() {
    // ADR 0012's amendment and ADR 0018: every call takes 4 ms from some moment on, twice its
    // floor, whatever the concurrency. The law reads a queue and cuts by more than a fifth (a
    // trial); the round after next delivers fewer inputs per second at the same latency over floor,
    // and the calls it removed were served (Little's law): the cut is undone for a round, the old
    // limit delivers again, so the undo stands and the floors move up to what calls take now.
    CallLimit limit = CallLimit.learned(64);
    long t = toTheMaximum(limit, 64);
    t = wave(limit, t, 64, 4 * MS, 0);
    int cut = limit.limit();
    assertTrue(cut <= 64 * 4 / 5, "a trial cut: " + cut);
    t = wave(limit, t, cut, 4 * MS, 0); // settles: not judged
    t = wave(limit, t, cut, 4 * MS, 0);
    assertEquals(64, limit.limit(), "the cut cost inputs per second: undone for a round");
    t = wave(limit, t, 64, 4 * MS, 0); // settles
    t = wave(limit, t, 64, 4 * MS, 0);
    assertEquals(4 * MS, limit.floorNanos(8), "the old limit delivered again: the floors moved up");
    assertEquals(64, limit.limit(), "the undo stands");
    // The rounds after it judge latency against the new floors: no queue. (A floor round, due since
    // slow start's first cut, may lower the limit for one round: its calls take 4 ms as well.)
    for (int round = 0; round < 5; round++) {
      t = wave(limit, t, limit.limit(), 4 * MS, 0);
      assertTrue(limit.limit() == 64 || limit.inFloorRound(), "round " + round + " after: limit " + limit.limit());
    }
    assertEquals(64, limit.limit());
    assertEquals(4 * MS, limit.floorNanos(8));
  }

  @Test
  void anUndoThatDeliversNoMoreThanTheCutIsCutAgain() {
    // As above, but while the old limit is back the downstream slows with it (latency grows with
    // the calls in flight, a queue): the old limit delivers no more inputs per second than the cut
    // did, so the cut stands (ADR 0012's amendment) and the floors stay.
    CallLimit limit = CallLimit.learned(64);
    long t = toTheMaximum(limit, 64);
    t = wave(limit, t, 64, 4 * MS, 0);
    int cut = limit.limit();
    t = wave(limit, t, cut, 4 * MS, 0);
    t = wave(limit, t, cut, 4 * MS, 0);
    assertEquals(64, limit.limit(), "undone for a round");
    long queued = 4 * MS * 64 / cut;
    t = wave(limit, t, 64, queued, 0);
    wave(limit, t, 64, queued, 0);
    assertEquals(cut, limit.limit(), "the old limit delivered no more: the cut stands");
    assertEquals(2 * MS, limit.floorNanos(8), "the floors did not move");
  }
}
