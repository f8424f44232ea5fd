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
      d.now = Math.max(d.now, done.at() + late);
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

  /** The lowest limit seen from 1 s to 8 s while the loop's lag rises from 0 to 6 ms (3x the call's own 2.8 ms). */
  static int lowestUnderRisingLag(boolean told) {
    CallLimit limit = CallLimit.learned(256);
    CallLimitTest.Downstream d = new CallLimitTest.Downstream(limit, t -> 16, 2 * MS, 100_000, 0.1, 11);
    LongUnaryOperator lag = t -> t < 2000 * MS ? 0 : Math.min(6 * MS, (t - 2000 * MS) / 1000);
    runLate(d, lag, told, 1000 * MS, () -> {});
    int[] lowest = {Integer.MAX_VALUE};
    runLate(d, lag, told, 8000 * MS, () -> lowest[0] = Math.min(lowest[0], limit.limit()));
    return lowest[0];
  }

  @Test
  void aDownstreamWhoseLatencyIsConstantWhileTheLoopLagRisesKeepsItsLimit() {
    int lowest = lowestUnderRisingLag(true);
    assertTrue(lowest >= 16, "the limit fell to " + lowest + " under the loop's own lag; the pool is 16");
  }

  @Test
  void withoutTheLagTheSameRunCutsTheLimit() {
    // The control: the same run, the lag not told, cuts below the pool (what ADR 0015 fixes).
    int lowest = lowestUnderRisingLag(false);
    assertTrue(lowest < 16, "the control run did not cut (lowest " + lowest + "): the test above proves nothing");
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
}
