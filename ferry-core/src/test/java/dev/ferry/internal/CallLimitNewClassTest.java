package dev.ferry.internal;

import static dev.ferry.internal.CallLimitWavesTest.MS;
import static dev.ferry.internal.CallLimitWavesTest.US;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A batch size met for the first time in a round that queued learns a floor no lower than that of
 * a smaller batch, unless its own calls were faster than that floor (ADR 0151). Found in {@code xjob}'s saturated store (10 ms + 0.5 ms per input):
 * only single-input calls had a floor (10.5 ms) when one call of 2 inputs came back after a short
 * wait (12.2 ms) in a round whose single calls had queued 4.7 ms on average. Less that average it
 * learned 7.5 ms, the floor curve (which never rises toward smaller batches) lowered the single
 * calls' floor to it, every call read 1.4 times its floor, and the limit was cut from 11 to 4 calls
 * in a row of rounds whose latency did not move.
 */
class CallLimitNewClassTest {
  @Test
  void aBiggerBatchMetInAQueuedRoundIsNotGivenAFloorBelowASmallerOnes() {
    CallLimit limit = CallLimit.learned(256);
    long single = 10_500 * US;
    // Slow start at the floor with single-input calls: waves of 1, 2, 4, 8 and 16, each held back.
    long t = CallLimitWavesTest.slowStart(limit, 0, single, 1, 32);
    assertEquals(single, limit.floorNanos(1));
    assertEquals(0, limit.floorNanos(2), "no floor beyond the one class known");
    // A round that queued: 31 single calls at 15.2 ms, and one call of 2 inputs at 12.2 ms.
    long start = t + 10 * US;
    for (int i = 0; i < 32; i++) {
      boolean pair = i == 31;
      long latency = pair ? 12_200 * US : 15_200 * US;
      limit.completed(start + i * 10 * US + latency, latency, pair ? 2 : 1, 20, false);
    }
    assertTrue(limit.limit() < 32, "the round read as a queue: limit " + limit.limit());
    assertEquals(single, limit.floorNanos(1), "the single calls' floor");
    assertTrue(limit.floorNanos(2) >= single,
        "a call of 2 inputs costs no less than one of 1: floor " + limit.floorNanos(2) / 1e6 + " ms");
  }

  @Test
  void aBiggerBatchFasterThanASmallerOnesFloorBringsThatFloorDown() {
    // The first call of a fresh JVM took 59 ms (class loading, the interpreter); the calls of 8
    // inputs after it take 2 ms. Bounded by the first call's floor, every later call read as a
    // thirtieth of its floor, slow start doubled the limit on that, and in real-time x3c runs the
    // limit sat at 38-65 on a pool of 16. A bigger batch's own calls, faster than the smaller one's
    // floor, say that floor was learned slow.
    CallLimit limit = CallLimit.learned(256);
    long t = 59 * MS;
    limit.completed(t, 59 * MS, 1, 1, false);
    assertEquals(2, limit.limit());
    long fast = 2 * MS;
    // Waves of 2 and 4: fewer calls than a class needs to lower a floor it has (MIN_CLASS), so the
    // first floor it learns is the one it keeps until then.
    CallLimitWavesTest.slowStart(limit, t, fast, 8, 8);
    assertTrue(limit.floorNanos(8) <= fast, "the floor of 8 inputs: " + limit.floorNanos(8) / 1e6 + " ms");
    assertTrue(limit.floorNanos(1) <= fast, "the first call's floor, come down: " + limit.floorNanos(1) / 1e6 + " ms");
  }
}
