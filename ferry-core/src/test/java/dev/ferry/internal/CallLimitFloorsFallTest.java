package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Floors that must fall at once (ADR 0152): after slow start a floor falls only as far as two
 * rounds agree, but during slow start at once. The real engine under an open-loop load in virtual
 * time ({@link OpenLoopPool}), against a FIFO pool whose first calls are slow (a cold start).
 */
class CallLimitFloorsFallTest {
  static final long MS = 1_000_000L;

  /**
   * A pool of 16 at 2 ms a call, 256 keys, 40,000 inputs a second, the first 24 calls 5 ms slower.
   * Without the slow-start clause of ADR 0152 each step down came a round late while slow start
   * doubled the limit, and the floor round after it, at 60% of that limit, learned the queue: the
   * limit stayed above twice the pool at four seeds of five.
   */
  @Test
  void slowFirstCallsDoNotLeaveTheLimitAboveTwiceThePool() {
    for (long seed = 1; seed <= 5; seed++) {
      long[] within = {0};
      OpenLoopPool.run(16, 256, 40_000, (t, n, i, r) -> 2 * MS + 5_000L * n + (i < 24 ? 5 * MS : 0), 1_000 * MS,
          6_000 * MS, seed, (limit, nanos) -> within[0] += limit >= 16 && limit <= 32 ? nanos : 0);
      double share = within[0] / (5_000.0 * MS);
      assertTrue(share >= 0.9, "seed " + seed + ": the limit was within [16, 32] " + Math.round(100 * share)
          + "% of the time from 1 s to 6 s");
    }
  }
}
