package dev.ferry.internal;

import static dev.ferry.internal.OutsideShapes.MS;
import static dev.ferry.internal.OutsideShapes.SEC;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.OutsideShapes.Downstream;
import dev.ferry.internal.OutsideShapes.Pool;
import dev.ferry.internal.OutsideShapes.Result;
import dev.ferry.internal.OutsideShapes.Run;
import dev.ferry.internal.OutsideShapes.Store;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The learned limit against downstream shapes from outside the bench's harness (review AU), with
 * the real engine in virtual time ({@link OutsideShapes}); {@link OutsideShapesReport} prints the
 * whole measurement. Each test pins what a user expects of one shape, at a few seeds (printed on
 * failure).
 */
class OutsideShapesTest {

  static Run run(int keys, double rate, int seconds, long seed) {
    Run r = new Run();
    r.keys = keys;
    r.rate = rate;
    r.seconds = seconds;
    r.seed = seed;
    return r;
  }

  /**
   * A downstream that takes at most 2,000 calls a second (a bucket of 20) and refuses the rest at
   * once (0.2 ms), with room for any number of calls at 2 ms each: a rate limit, as many services
   * put in front of themselves.
   */
  static Downstream rateLimited() {
    return new Downstream() {
      double tokens = 20;
      long at;

      @Override
      long refuseAfter(long t, int inputs, SplittableRandom rnd) {
        tokens = Math.min(20, tokens + (t - at) * 2_000 / 1e9);
        at = t;
        if (tokens >= 1) {
          tokens--;
          return -1;
        }
        return 200_000L;
      }
    };
  }

  @Test
  void aRateLimitedDownstreamIsNotRetriedIntoAStormOfRefusals() {
    // 10,000 inputs a second over 256 keys, batches of up to 8: 1,250 full calls a second carry
    // it, under the downstream's 2,000. Pinned at 4 (2,000 calls a second at 2 ms) every input is
    // delivered. Refused calls come back at once and free their slot, so above 4 the refusals
    // grow, batches shrink to one input and most inputs are refused: once in that storm, only a
    // limit at or below 4 gets out of it. Failures back the limit off, and a wave of successes
    // doubles it back toward where the failures began (ADR 0019, an outage's recovery); on main
    // that stayed slow start's 32 for good, so every recovery doubled 4 to 8 and into the storm
    // again: 2,350 inputs a second delivered, three quarters refused. Now a back-off right after
    // a doubling ends the recovery at the limit the doubling came from (ADR 0175): about 6,300 a
    // second. (Still not the 10,000 a pinned 4 delivers: the law probes 4 to 5 every other round
    // and 5 starts a storm; see docs/performance.md, review AU.)
    for (long seed = 1; seed <= 3; seed++) {
      Result r = OutsideShapes.run(rateLimited(), run(256, 10_000, 6, seed));
      assertTrue(r.delivered >= 5_000, "seed " + seed + ": " + r);
    }
  }

  @Test
  void aRateLimitedDownstreamDeliversWhatAPinnedLimitDoes() {
    // The same rate limit: after each clean round at 4 the law probed to 5, and 5 started a storm
    // of refusals (60% of the round's calls), every other round: 6,300 inputs a second delivered
    // and 32,000 refused in 10 s, where a pinned 4 delivers 9,890 and refuses none. Each limit's
    // rounds now keep a tally of their calls and failures; a probe into a level whose rounds
    // failed more than the rounds at the limit in force, repeatably and beyond what chance gives,
    // is held below it for 8 rounds, then twice as long each time a probe into it fails again
    // (ADR 0181). On the code before it, seeds 1-3 delivered 6,290-6,360 a second.
    for (long seed = 1; seed <= 3; seed++) {
      Result r = OutsideShapes.run(rateLimited(), run(256, 10_000, 6, seed));
      assertTrue(r.delivered >= 9_000 && r.failedInputs < 1_000, "seed " + seed + ": " + r);
    }
  }

  @Test
  void aRateLimitRaisedIsFoundWithinAHold() {
    // The same bucket of 20, its rate raised from 2,000 to 4,000 calls a second at 4 s, at 14,000
    // inputs a second: the probe held below 5 (ADR 0181) looks into 5 again when its hold is over,
    // finds it clean and starts the tally afresh, and the limit climbs to 8 (4,000 calls a second
    // of 2 ms) within about a second; from 6 s on it never leaves 8-9 and 13,600-13,700 inputs a
    // second are delivered (seeds 1-3). The code before ADR 0181 got to 8 at once but probed into
    // 9's storm every other round: 10,060-10,110 a second.
    for (long seed = 1; seed <= 3; seed++) {
      Run r = run(256, 14_000, 12, seed);
      r.settle = 6 * SEC;
      Result res = OutsideShapes.run(rateRaised(4 * SEC), r);
      assertTrue(res.lowest >= 8 && res.delivered >= 12_000, "seed " + seed + ": " + res);
    }
  }

  @Test
  void aRateLimitRaisedIsFoundWithinSecondsWhenCallsAreSlow() {
    // Review BI: calls of 20 ms behind a rate limit of 100 calls a second (2 at once, a bucket of
    // 4), raised to 400 (8 at once) at 90 s, at 1,500 inputs a second (more than the low rate
    // carries). Before the raise the probe into 3 failed again and again, and its hold doubled
    // to ADR 0181's 256 rounds; a round at a limit of 2 holds 16 calls of 20 ms, so 256 rounds are
    // 41 s, and the limit stayed at 2 until 126 s (seed 17), 36 s after the raise. A hold now also ends 2 s
    // after it began (what 256 rounds of 2 ms calls at a limit of 4 last): from 94 s on the limit
    // is 4 or more.
    for (long seed = 1; seed <= 2; seed++) {
      Run r = run(64, 1_500, 100, seed);
      r.settle = 94 * SEC;
      Result res = OutsideShapes.run(OutsideShapesReport.bucket(4, t -> t < 90 * SEC ? 100 : 400, 20 * MS), r);
      assertTrue(res.lowest >= 4, "seed " + seed + ": " + res + "; trace " + res.trace);
    }
  }

  @Test
  @org.junit.jupiter.api.Disabled("review BI's finding, not fixed (review BJ, ADR 0193): rounds filled by refusals before any success returns read as every call failing")
  void halfTheCallsFailingWithNoPoolDeliversWhatAPinnedLimitDoes() {
    // Review BI: half of the calls refused at once whatever the load (ADR 0184's fail50) but no
    // pool behind them, 150,000 inputs a second over 1,024 keys: pinned at 50 the 74,700 inputs a
    // second that can succeed are delivered. The learned limit settles at a mean of 13 (as with
    // fail50's pool of 16, which hid it) and delivers about 46,600, its p99 161 ms against 20:
    // a round whose share drew high backs off, and the next round, back at the mean, confirms the
    // back-off (ADR 0065 judges one round against one round), while the tolerated share decays.
    // Review BJ counted further: half of the back-offs come from rounds in which no call
    // succeeded. Refusals (0.1 ms) fill a round before any 2 ms success started in it returns, so
    // it reads as every call failing, which always backs off and is never undone. Rules that end
    // such rounds later fix this shape but lose the storms that the rate limit and the pools that
    // refuse beyond their size leave through the same rounds, or cost soft-refuse (ADR 0193).
    for (long seed = 1; seed <= 2; seed++) {
      Run r = run(1024, 150_000, 6, seed);
      Result learned = OutsideShapes.run(OutsideShapesReport.softRefusals(0.5, Integer.MAX_VALUE), r);
      Run p = run(1024, 150_000, 6, seed);
      p.pinned = 50;
      Result pinned = OutsideShapes.run(OutsideShapesReport.softRefusals(0.5, Integer.MAX_VALUE), p);
      assertTrue(learned.delivered >= 0.9 * pinned.delivered, "seed " + seed + ": " + learned + " against pinned 50: " + pinned);
    }
  }

  /** {@link #rateLimited}, its rate raised to 4,000 calls a second at {@code at}. */
  static Downstream rateRaised(long at) {
    return new Downstream() {
      double tokens = 20;
      long last;

      @Override
      long refuseAfter(long t, int inputs, SplittableRandom rnd) {
        tokens = Math.min(20, tokens + (t - last) * (t < at ? 2_000 : 4_000) / 1e9);
        last = t;
        if (tokens >= 1) {
          tokens--;
          return -1;
        }
        return 200_000L;
      }
    };
  }

  /** A pool that grows from 2 to 32 calls over a minute, 2 ms + 5 us an input. */
  static Downstream growing() {
    return new Store() {
      @Override
      int capacity(long t) {
        return (int) Math.min(32, 2 + 30 * t / (60 * SEC));
      }
    };
  }

  @Test
  void aPoolThatGrowsUnderOverloadKeepsTheLimitNearThePool() {
    // 100,000 inputs a second, far beyond what the pool serves, while it grows from 2 to 32 calls
    // over a minute. The law compared the mean of many rounds at a lower limit, gathered seconds
    // earlier when the pool was smaller, with rounds at the limit in force: the pool's growth read
    // as calls served at the higher limit (ADR 0149), so the queue became the floors, again and
    // again. On the code before ADR 0182 the limit was in the band below 14-47% of the first 20 s
    // (seeds 1-3) and reached 8x the pool; the rounds compared must now be from the same stretch
    // of time (ADR 0182).
    for (long seed = 1; seed <= 3; seed++) {
      Run r = run(512, 100_000, 20, seed);
      r.settle = 2 * SEC;
      r.band = t -> {
        int pool = (int) Math.min(32, 2 + 30 * t / (60 * SEC));
        return new int[] {Math.max(2, pool - 1), 2 * pool};
      };
      Result res = OutsideShapes.run(growing(), r);
      assertTrue(res.withinBand >= 0.8, "seed " + seed + ": " + res);
    }
  }

  /** A pool of 16 at 2 ms + 5 us an input that refuses 30% of calls at once (0.1 ms), whatever the load. */
  static Downstream failingAThird() {
    return new Pool(16) {
      @Override
      long refuseAfter(long t, int inputs, SplittableRandom rnd) {
        return rnd.nextInt(10) < 3 ? 100_000L : -1;
      }
    };
  }

  @Test
  void failuresThatDoNotFollowTheLoadDoNotHoldTheLimitFarBelowThePool() {
    // 30,000 inputs a second over 256 keys against a pool of 16 that refuses 30% of calls at once
    // whatever the load: pinned at 16 the inputs that succeed wait 14 ms at the median. Failures
    // back the limit off only while they follow our concurrency (ADR 0065). But a round ends on the
    // first calls to complete among those started in it, and refusals complete twenty times
    // sooner than successes: 30% of the calls read as 45-50% of a round, half the rounds backed
    // off as "mostly failing" (which is never undone), and on main the limit averaged 10 (3..24),
    // the median input waited 62 ms and the 99th 114-480 ms. The failed share is now counted over
    // the calls that started before the round's last successful call did (ADR 0175).
    for (long seed = 1; seed <= 3; seed++) {
      Run r = run(256, 30_000, 6, seed);
      r.settle = 2 * SEC;
      Result res = OutsideShapes.run(failingAThird(), r);
      assertTrue(res.meanLimit >= 12, "seed " + seed + ": " + res);
    }
  }

  /** A pool of 16 at 2 ms + 5 us an input, every call slower by 4x its cost over each minute (or faster). */
  static Downstream drifting(boolean slower) {
    return new Downstream() {
      @Override
      int capacity(long t) {
        return 16;
      }

      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        double x = 4.0 * t / (60 * SEC);
        return (long) ((2 * MS + 5_000L * inputs) * (slower ? 1 + x : Math.max(1, 5 - x)));
      }
    };
  }

  @Test
  void aDownstreamThatSlowsGraduallyKeepsTheLimitNearItsPool() {
    // 8,000 inputs a second over 256 keys against a pool of 16 whose calls get slower by their
    // cost every 15 s (a database that loads up): pinned at 16, nothing waits at the pool and
    // nothing fails. Every round read a little more latency over floors learned earlier; the limit
    // alternated a cut of one call and a probe back, each cut a streak of its own, so the test of
    // cuts in a row (latency did not fall: not our queue) never ran: on main the limit walked
    // down to 1 within 6.5 s at seeds 1 and 2 (inputs waited past their timeout, 6,284 failed at
    // seed 1) and to 3 at seed 3. Rounds
    // in a row at limits a call apart say the downstream served the calls the cuts removed: not a
    // queue, the floors move up (ADR 0179).
    for (long seed = 1; seed <= 3; seed++) {
      Run r = run(256, 8_000, 20, seed);
      r.settle = 2 * SEC;
      Result res = OutsideShapes.run(drifting(true), r);
      assertTrue(res.lowest >= 8 && res.failedInputs == 0, "seed " + seed + ": " + res);
    }
  }

  @Test
  void aDownstreamThatGetsFasterGraduallyKeepsItsCallsServed() {
    // The same pool, its calls 5x their cost at the start and faster by their cost every 15 s:
    // floors fall only as far as two rounds agree (ADR 0152), so the limit follows from above;
    // nothing fails, and the limit is never cut below half the pool.
    for (long seed = 1; seed <= 3; seed++) {
      Run r = run(256, 4_000, 20, seed);
      r.settle = 2 * SEC;
      Result res = OutsideShapes.run(drifting(false), r);
      assertTrue(res.lowest >= 8 && res.failedInputs == 0, "seed " + seed + ": " + res);
    }
  }

  @Test
  void halfTheCallsFailingWhateverTheLoadDoesNotHoldTheLimitAtOne() {
    // 30,000 inputs a second over 256 keys against a pool of 16 that refuses half, or 60%, of its
    // calls at once whatever the load (one replica of two down behind a balancer): pinned at 16,
    // 14,900 (11,900) inputs a second are delivered, p99 14 (10) ms. A round in which half the calls
    // or more failed always backed off (ADR 0065), whatever the failures follow, so on main the
    // limit sat at 1 from the first round on (mean 1.6 and 1.0 at seed 17), 5,300 (3,350) inputs a
    // second came through and the median input waited 0.9 (1.1) s. ADR 0065's judgement (a
    // back-off whose next round fails as large a share is undone, that share tolerated) now runs
    // at every share short of all calls failing (ADR 0184); a downstream failing every call still
    // takes the limit to 1.
    for (int percent : new int[] {50, 60}) {
      for (long seed = 1; seed <= 3; seed++) {
        Result r = OutsideShapes.run(OutsideShapesReport.partlyFailing(percent, 0), run(256, 30_000, 6, seed));
        double pinned = 30_000 * (100 - percent) / 100.0;
        assertTrue(r.delivered >= 0.8 * pinned && r.meanLimit >= 4, percent + "%, seed " + seed + ": " + r);
      }
    }
  }

  @Test
  void anOutageOfRefusalsTakesTheLimitToOneAndItComesBackAfter() {
    // Every call refused at once (0.1 ms) from 4 s to 6 s, a pool of 16 before and after: the
    // limit falls to 1 during the outage (nothing succeeds: no share is tolerated) and doubles
    // back within a few waves once calls succeed again (ADR 0019).
    for (long seed = 1; seed <= 3; seed++) {
      Run run = run(256, 30_000, 8, seed);
      run.settle = 5 * SEC;
      Result r = OutsideShapes.run(OutsideShapesReport.outage(false), run);
      String[] trace = r.trace.toString().split(" ");
      // The trace holds the limit every 250 ms from the start: 5.0-5.75 s inside the outage, 7-8 s after it.
      for (int i = 20; i < 24; i++) {
        assertTrue(Integer.parseInt(trace[i]) <= 2, "seed " + seed + ", at " + i * 250 + " ms: " + r.trace);
      }
      for (int i = 28; i < trace.length; i++) {
        assertTrue(Integer.parseInt(trace[i]) >= 12, "seed " + seed + ", at " + i * 250 + " ms: " + r.trace);
      }
    }
  }

  /** A pool of {@code size} at 2 ms + 5 us an input, serving nothing from 4 s to 4.1 s (a stall) when {@code stall}. */
  static Downstream stallingPool(int size, boolean stall) {
    return new Store() {
      @Override
      int capacity(long t) {
        return stall && t >= 4 * SEC && t < 4 * SEC + 100 * MS ? 0 : size;
      }
    };
  }

  @Test
  void aBacklogLeftByAStallDrainsAtALimitOfOne() {
    // One connection at 2 ms a call, 3,000 inputs a second over 64 keys, batches of up to 8: the
    // connection carries it only with batches of 6 or more, so the keys must wait for company. A
    // stall of 100 ms leaves some keys behind. Idle keys went first: a key just served got its next
    // input called at once, alone, ahead of the keys left behind (ADR 0014's head start for quiet
    // keys, given to keys as busy as the rest), and those one-input calls took exactly the calls
    // the backlog needed to drain. On main the p99 stayed over half as high again for the rest of
    // the run (seed 1: 376 against 231 ms without the stall). A key that had a head start over
    // waiting busy keys gets no second one while they wait (ADR 0183): the backlog drains.
    for (long seed = 1; seed <= 3; seed++) {
      Run calm = run(64, 3_000, 10, seed);
      calm.pinned = 1;
      calm.settle = 5 * SEC;
      Run stalled = run(64, 3_000, 10, seed);
      stalled.pinned = 1;
      stalled.settle = 5 * SEC;
      Result before = OutsideShapes.run(stallingPool(1, false), calm);
      Result after = OutsideShapes.run(stallingPool(1, true), stalled);
      assertTrue(after.p99Micros <= 1.2 * before.p99Micros, "seed " + seed + ": without the stall " + before
          + "; with it " + after);
    }
  }

  @Test
  void pausesAndHangsAtTheDownstreamDoNotCutTheLimit() {
    // A pool of 16 that stops the world for 200 ms every 2 s (nothing starts, nothing completes,
    // then a burst), and one whose calls all hang to the 1 s call timeout from 4 s to 6 s: neither
    // is a queue of our calls (ADR 0107: a round held up together is not judged; hung calls started
    // before the rounds that end), so the limit stays near the pool throughout.
    for (long seed = 1; seed <= 3; seed++) {
      Run pauses = run(256, 30_000, 8, seed);
      pauses.settle = 2 * SEC;
      Result r = OutsideShapes.run(OutsideShapesReport.pausing(), pauses);
      assertTrue(r.lowest >= 12 && r.failedInputs == 0, "pauses, seed " + seed + ": " + r);
      Run hangs = run(256, 30_000, 8, seed);
      hangs.settle = 2 * SEC;
      hangs.callTimeout = SEC;
      r = OutsideShapes.run(OutsideShapesReport.outage(true), hangs);
      assertTrue(r.lowest >= 12, "hangs, seed " + seed + ": " + r);
    }
  }

  @Test
  void aRoundTripThatJumpsIsFollowedWithinTwoSeconds() {
    // A pool of 16 behind a round trip of 1 ms that becomes 30 ms at 5 s: the pool needs 16 x 16
    // calls in flight now, the ceiling of 256. The first round after the jump reads a queue and
    // cuts to 4; the next finds latency no lower, undoes the cut and moves the floors up; the
    // limit is at the ceiling from 7 s on, nothing refused from then (see the next test for how
    // fast it climbs).
    for (long seed = 1; seed <= 3; seed++) {
      Run run = run(256, 30_000, 9, seed);
      run.settle = 7 * SEC;
      Result r = OutsideShapes.run(OutsideShapesReport.rttJump(true), run);
      assertTrue(r.lowest == 256 && r.failedInputs == 0, "seed " + seed + ": " + r + "; " + r.trace);
    }
  }

  @Test
  void aLongerPathIsClimbedWithinAFewRoundsNotSecondsOfRefusals() {
    // The same jump (review BL, ADR 0195). On main the cut to 4 was undone 0.6 s after the jump
    // and the limit then climbed by an eighth a round, 1.2 s more to the ceiling, while the
    // ferry's queue filled: 14,500-19,900 inputs refused at maxQueueing at seeds 1-3, the limit
    // 173-183 at 6.5 s. Latency over floor at 4 was the same as at 29, before the cut and after
    // its undo, so the rise is a longer path, not a queue: the limit doubles toward 29 x the rise
    // and is at the ceiling by 6.25 s; 7,100-11,100 refused, most while the cut to 4 is judged.
    for (long seed = 1; seed <= 3; seed++) {
      Run run = run(256, 30_000, 8, seed);
      run.settle = 5 * SEC;
      Result r = OutsideShapes.run(OutsideShapesReport.rttJump(true), run);
      Run late = run(256, 30_000, 8, seed);
      late.settle = 6500 * OutsideShapes.MS;
      Result after = OutsideShapes.run(OutsideShapesReport.rttJump(true), late);
      String at = "seed " + seed + ": " + r + "; " + r.trace;
      assertTrue(r.failedInputs <= 12_500, at);
      assertTrue(after.lowest == 256, at);
    }
  }

  @Test
  void keysTenTimesAsSlowDoNotHoldUpTheOthers() {
    // Keys 0-3 of 64 cost ten times as much on one pool of 16: the learned limit sits at 18-22,
    // and the other keys' inputs leave as fast as with a pinned 16 (p99 17 against 19 ms), far
    // ahead of the slow keys' (47 ms).
    for (long seed = 1; seed <= 3; seed++) {
      Run run = run(64, 16_000, 6, seed);
      run.marked = 4;
      run.settle = 2 * SEC;
      Result r = OutsideShapes.run(OutsideShapesReport.slowKeys(), run);
      assertTrue(r.othersP99Micros * 2 < r.markedP99Micros && r.lowest >= 12, "seed " + seed + ": " + r);
    }
  }

  @Test
  void followingAPoolThatDropsToOneCostsLittleAgainstIgnoringIt() {
    // Review AU's `drop`: a pool of 16 that drops to 1 from 4 s to 7 s, 3,000 inputs a second over
    // 64 keys. The learned limit follows it (to 1-2 within 250 ms), but on main its inputs' p99 was
    // 1.7 to 2.1 times that of a limit pinned at 16 (seeds 1-3: 324, 386, 313 ms against 185-188),
    // and worse than pinned at 1 (226-229 ms): at a limit of one or two calls, keys just served
    // took the connection again one input at a time ahead of the backlog the drop had left, and
    // the backlog drained only once every key was in it (ADR 0183). Now within a fifth of pinned 16
    // (the drop's first 65 ms, when 32 calls sent before it wait at one connection, stays) and no
    // worse than pinned 1.
    for (long seed = 1; seed <= 3; seed++) {
      Result learned = OutsideShapes.run(OutsideShapesReport.dropping(), run(64, 3_000, 12, seed));
      Run pin16 = run(64, 3_000, 12, seed);
      pin16.pinned = 16;
      Result sixteen = OutsideShapes.run(OutsideShapesReport.dropping(), pin16);
      Run pin1 = run(64, 3_000, 12, seed);
      pin1.pinned = 1;
      Result one = OutsideShapes.run(OutsideShapesReport.dropping(), pin1);
      String at = "seed " + seed + ": learned " + learned + "; pinned 16 " + sixteen + "; pinned 1 " + one;
      assertTrue(learned.p99Micros <= 1.2 * sixteen.p99Micros, at);
      assertTrue(learned.p99Micros <= one.p99Micros, at);
    }
  }

  @Test
  void aCacheInFrontOfASmallPoolDoesNotHideThePoolsQueue() {
    // Review BK: nine calls in ten answered in 50 us without a connection, the rest to a pool of
    // 4 at 2 ms, 20,000 inputs a second (the pool at 100%). A round ends on the first of its calls
    // to come back, so it held hits only (84% of the rounds at seed 17 had no miss at all) and its
    // median read no queue: slow start's 64 stayed, every miss queued at the pool, p99 18 ms where
    // a pinned 8 gives 6.7. The calls in flight the round's own calls do not account for are now
    // judged by the slow calls completing beside them, against their own floor (ADR 0194).
    for (long seed = 1; seed <= 3; seed++) {
      Result learned = OutsideShapes.run(OutsideShapesReport.cached(), run(256, 20_000, 6, seed));
      Run p = run(256, 20_000, 6, seed);
      p.pinned = 8;
      Result eight = OutsideShapes.run(OutsideShapesReport.cached(), p);
      String at = "seed " + seed + ": learned " + learned + "; pinned 8 " + eight;
      assertTrue(learned.meanLimit <= 32, at);
      assertTrue(learned.p99Micros <= 1.5 * eight.p99Micros, at);
    }
  }

  @Test
  void pausesThatHitAFewCallsWithNothingQueuedDoNotCutTheLimit() {
    // Review BP: 5% of calls take 20 to 300 ms more (uniform: a GC pause, a stop of the
    // downstream's process), no pool, so nothing ever queues, 20,000 inputs a second over 256
    // keys. Before ADR 0194 the limit stayed at the ceiling, p50 2.5 ms. With it, the round's own
    // calls (the fast ones) account for under a quarter of the calls in flight, the paused calls
    // leave the band between 2 and 8 floors empty, and they are judged against a slow floor that
    // is the lowest of many medians of 8: over a group spread 14-fold that drifts to about half
    // the group's median (68 ms against 162 at seed 17), so a round's few paused calls read 1.5
    // to 4 floors and cut the limit to 10-16, p50 38-57 ms. A group of slow calls spread more than
    // twofold no longer sets a slow floor (CallLimit.SLOW_SPREAD).
    for (long seed = 1; seed <= 3; seed++) {
      Result learned = OutsideShapes.run(OutsideShapesReport.pausingCalls(0, 5, 20 * MS, 300 * MS), run(256, 20_000, 6, seed));
      Run p = run(256, 20_000, 6, seed);
      p.pinned = 256;
      Result ceiling = OutsideShapes.run(OutsideShapesReport.pausingCalls(0, 5, 20 * MS, 300 * MS), p);
      String at = "seed " + seed + ": learned " + learned + "; pinned 256 " + ceiling + "; trace " + learned.trace;
      assertTrue(learned.lowest >= 64, at);
      assertTrue(learned.p50Micros <= 2 * ceiling.p50Micros, at);
    }
  }
}
