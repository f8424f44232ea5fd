package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Cuts in a row are judged together (a deep cut that does not bring latency down was not our
 * queue: the floors move up and the limit comes back), and judged against the streak's worst
 * round (ADR 0153). A pool that shrinks in the middle of a round must not be read as a slower
 * downstream.
 */
class CallLimitStreakTest {
  static final long MS = 1_000_000L;

  /**
   * A pool of 16 shrinks to 4 at 1,000, 1,007 or 1,014 ms, calls take 2 ms, the loop runs every
   * completion 1 ms late (CallLimitOnTimeBoundTest's case). The round that began the streak held
   * calls from both pools, so its median read about 2.8 floors where the smaller pool gives over 3:
   * judged against it, the first round wholly at the smaller pool (ratio 3.0 at 14 calls in flight,
   * or a trial undone at the old limit reading 6.4) read as a cut that brought nothing, the floors
   * moved up 3x and the limit settled at 17 against the pool of 4, every call waiting 6 ms for a
   * connection. These seeds did so before ADR 0153 (one in twenty of the shrink times tried).
   */
  @Test
  void aPoolThatShrinksWithinARoundIsNotTakenForASlowerDownstream() {
    for (long seed : new long[] {3, 23, 34, 38, 69, 84, 95, 109}) {
      long at = 1000 * MS + (seed % 3) * 7 * MS;
      CallLimitOnTimeBoundTest.Run r = CallLimitOnTimeBoundTest.run(t -> t < at ? 16 : 4, t -> 2 * MS, t -> MS, true,
          1200 * MS, 3000 * MS, seed);
      String seen = String.format("seed %d: mean limit %.1f, calls waited %.2f ms for a connection, floor %.2f ms",
          seed, r.meanLimit(), r.meanQueuedMs(), r.floorMs());
      assertTrue(r.floorMs() <= 2.3 && r.meanQueuedMs() <= 1, "a shrink read as a slower downstream: " + seen);
    }
  }
}
