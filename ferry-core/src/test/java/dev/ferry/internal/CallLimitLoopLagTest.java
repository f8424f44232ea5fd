package dev.ferry.internal;

import static dev.ferry.internal.CallLimitTest.MS;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.LongToIntFunction;
import java.util.function.LongUnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * ADR 0015: the learned limit against a loop that runs completions late (a starved machine). The
 * downstream of {@link CallLimitTest} serves calls in virtual time; each completion reaches the
 * limit {@code lag(t)} after the downstream finished it, and the limit is told that lag (what the
 * engine's probe reads), as on a loop whose thread waits for a core.
 */
class CallLimitLoopLagTest {
  /** Runs {@code d} until {@code until} with completions seen {@code lag(t)} late; {@code each} after every completion. */
  static void runLate(CallLimitTest.Downstream d, LongUnaryOperator lag, boolean told, long until, Runnable each) {
    d.fill();
    while (!d.serving.isEmpty() && d.serving.peek().at() <= until) {
      CallLimitTest.Downstream.Done done = d.serving.poll();
      long late = lag.applyAsLong(done.at());
      long loopNow = Math.max(d.now, done.at() + late);
      // The downstream frees the connection when it is done, whatever our loop does meanwhile.
      d.now = done.at();
      d.serve();
      d.now = loopNow;
      d.inFlight--;
      d.limit.completed(d.now, d.now - done.call().startedAt(), done.call().size(),
          done.call().inFlightAtStart(), false, told ? late : 0);
      d.serve();
      d.fill();
      each.run();
    }
    d.now = Math.max(d.now, until);
    d.serve();
    d.fill();
  }

  /** The lowest limit seen from 1 s to 8 s, the lag told to the limit or not. */
  static int lowest(LongUnaryOperator lag, boolean told) {
    return (int) lowestAndFloor(lag, told)[0];
  }

  /** {@link #lowest}, and the one-input floor at 8 s (nanos). */
  static double[] lowestAndFloor(LongUnaryOperator lag, boolean told) {
    CallLimit limit = CallLimit.learned(256);
    CallLimitTest.Downstream d = new CallLimitTest.Downstream(limit, t -> 16, 2 * MS, 100_000, 0.1, 11);
    runLate(d, lag, told, 1000 * MS, () -> {});
    int[] lowest = {Integer.MAX_VALUE};
    runLate(d, lag, told, 8000 * MS, () -> lowest[0] = Math.min(lowest[0], limit.limit()));
    return new double[] {lowest[0], limit.floorAt(1)};
  }

  /** From 2 s on, the loop's thread runs 50 ms, then waits 50 ms for a core: completions in the wait are seen at its end. */
  static final LongUnaryOperator HALF_STARVED =
      t -> t < 2000 * MS || t % (100 * MS) >= 50 * MS ? 0 : 50 * MS - t % (100 * MS);

  @Test
  void aLoopStarvedHalfTheTimeDoesNotDriveTheLimitDown() {
    int lowest = lowest(HALF_STARVED, true);
    assertTrue(lowest >= 16, "the limit fell to " + lowest + " on a half-starved loop; the pool is 16");
    // The same run, the lag not told, cut to 2 before ADR 0107 (what ADR 0015 fixed): a starved
    // thread is also a stall the completions show (nothing for 50 ms while calls were in flight),
    // so it now holds near the pool even untold. The control of ADR 0015 is the rising lag below.
    int untold = lowest(HALF_STARVED, false);
    assertTrue(untold >= 12, "untold, the limit fell to " + untold + " on a half-starved loop; the pool is 16");
  }

  /**
   * From 2 s on, the loop's thread stalls 5 to 20 ms every 10 to 100 ms (it gets a core in short
   * slices; seeded): completions in a stall are seen at its end, and the calls they free are all
   * sent again at once, a burst the downstream really queues.
   */
  static LongUnaryOperator shortStalls(long seed) {
    java.util.Random rnd = new java.util.Random(seed);
    java.util.List<long[]> stalls = new java.util.ArrayList<>();
    for (long t = 2000 * MS; t < 9000 * MS; ) {
      t += (10 + rnd.nextInt(91)) * MS;
      long length = (5 + rnd.nextInt(16)) * MS;
      stalls.add(new long[] {t, t + length});
      t += length;
    }
    return t -> {
      for (long[] s : stalls) {
        if (t >= s[0] && t < s[1]) {
          return s[1] - t;
        }
      }
      return 0;
    };
  }

  @Test
  void shortStallsOfTheLoopDoNotCutTheLimitBelowThePool() {
    // ADR 0015 left this open (the limit fell to 2-3), blaming the burst a stall releases. The
    // cause was this simulation: it freed connections at the downstream's time and started the
    // calls waiting for them then, even calls the late loop had not sent yet, so they seemed to
    // take a fraction of their cost and made floors far too low (see Downstream.serve). Served
    // only once sent, the law as it is keeps the limit above the pool (ADR 0018).
    for (long seed = 1; seed <= 3; seed++) {
      int lowest = lowest(shortStalls(seed), true);
      assertTrue(lowest >= 16, "seed " + seed + ": the limit fell to " + lowest + " under short stalls; the pool is 16");
    }
  }

  @Test
  void aDownstreamWhoseLatencyIsConstantWhileTheLoopLagRisesKeepsItsLimit() {
    // The lag rises from 0 to 6 ms (over twice the call's own 2.8 ms) between 2 s and 8 s.
    LongUnaryOperator rising = t -> t < 2000 * MS ? 0 : Math.min(6 * MS, (t - 2000 * MS) / 1000);
    double[] told = lowestAndFloor(rising, true);
    assertTrue(told[0] >= 16, "the limit fell to " + (int) told[0] + " under the loop's own lag; the pool is 16");
    // The control: the same run, the lag not told, takes the lag for the downstream's (what ADR
    // 0015 fixes; a lag that rises smoothly leaves no stretch without completions for ADR 0107 to
    // see). Before ADR 0179 it cut far below the pool; since, rounds in a row read the latency as
    // served, not queued, and the floors take the lag instead (7.6 ms against 2.9 ms told).
    double[] control = lowestAndFloor(rising, false);
    assertTrue(control[0] < 8 || control[1] >= 2 * told[1], "the control run neither cut (lowest " + (int) control[0]
        + ") nor took the lag into its floors (" + control[1] / MS + " ms against " + told[1] / MS
        + " ms told): the test above proves nothing");
  }

  @Test
  void aShrunkPoolIsStillLearnedUnderSteadyLag() {
    CallLimit limit = CallLimit.learned(256);
    LongToIntFunction pool = t -> t < 1000 * MS ? 16 : 4;
    CallLimitTest.Downstream d = new CallLimitTest.Downstream(limit, pool, 2 * MS, 100_000, 0, 3);
    // The loop runs every completion 1 ms late, throughout (a third of the call's own latency).
    runLate(d, t -> MS, true, 1000 * MS, () -> {});
    runLate(d, t -> MS, true, 1200 * MS, () -> {});
    int limitNow = limit.limit();
    assertTrue(limitNow >= 4 && limitNow <= 8, "200 ms after the pool shrank to 4: limit " + limitNow);
  }

  @Test
  void aFloorRoundCaughtByALastingLagIsAbandonedNotHeld() {
    CallLimit limit = CallLimit.learned(256);
    CallLimitTest.Downstream d = new CallLimitTest.Downstream(limit, t -> 16, 2 * MS, 100_000, 0, 5);
    long[] lagFrom = {Long.MAX_VALUE};
    LongUnaryOperator lag = t -> t >= lagFrom[0] ? 10 * MS : 0;
    runLate(d, lag, true, 29_900 * MS, () -> {});
    int learned = limit.limit();
    // The floor re-measurement (30 s after the first call) lowers the limit to 60% for one round:
    // the loop starts lagging 10 ms (over three calls' latency) right then, and for good.
    runLate(d, lag, true, 40_000 * MS, () -> {
      if (lagFrom[0] == Long.MAX_VALUE && limit.inFloorRound()) {
        lagFrom[0] = d.now;
      }
    });
    assertTrue(lagFrom[0] != Long.MAX_VALUE && lagFrom[0] < 31_000 * MS,
        "no floor round seen near 30 s (limit " + limit.limit() + ", learned " + learned + ")");
    int[] lowest = {Integer.MAX_VALUE};
    runLate(d, lag, true, 45_000 * MS, () -> lowest[0] = Math.min(lowest[0], limit.limit()));
    assertTrue(!limit.inFloorRound() && lowest[0] >= 16,
        "the floor round's limit " + lowest[0] + " lasted as long as the lag; learned " + learned);
  }
}
