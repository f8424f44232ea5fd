package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.CallLimitTest.Downstream;
import java.util.function.LongToIntFunction;
import org.junit.jupiter.api.Test;

/**
 * ADR 0149's rule (a cut is not made where the rounds at this limit and a lower one say the
 * downstream served the added calls) against downstreams that serve the same at every limit
 * beyond their pool, in virtual time: it must not fire there, or the floors move up to a queue and
 * the limit climbs with them.
 */
class CallLimitServedTest {
  static final long MS = 1_000_000L;

  @Test
  void aFifoPoolWithSteadyCallsIsNotReadAsServingMoreAtAHigherLimit() {
    // Calls within 2% of their cost: the latencies of a FIFO queue come in steps of a call time, and
    // the median call's step moves with the limit. Read on the median, limits 8 and 9 at a pool of 6
    // served 5.73 and 5.98 calls at once (over hundreds of rounds each), a third of the added call:
    // the floors moved up, and the limit sat at 12-13 for the rest of the run. By Little's law on the
    // mean latency, both serve 6.
    int pool = 6;
    int high = (int) Math.ceil(pool * (1 + CallLimit.TOLERANCE)) + 1;
    for (long seed = 1; seed <= 5; seed++) {
      CallLimit limit = CallLimit.learned(256);
      Downstream d = new Downstream(limit, t -> pool, 2 * MS, 100_000, 0.02, seed);
      d.runUntil(2_000 * MS);
      int[] highest = {0};
      d.runUntil(40_000 * MS, () -> highest[0] = Math.max(highest[0], limit.limit()));
      assertTrue(highest[0] <= high, "seed " + seed + ": limit reached " + highest[0] + " on a FIFO pool of " + pool
          + " (a queue of " + (high - 1 - pool) + " calls and a probe step allow " + high + ")");
    }
  }

  @Test
  void aSharedCpuPoolThatShrinksIsFollowedWithinTwoSeconds() {
    // A pool of 8 whose calls each take 15% longer per other call in service (SharedCpuLimitTest's
    // store), shrinking to 4 at 9.8 s. On the median, rounds at limits 8 and 9 (beyond the pool, a
    // FIFO queue) read as the ninth call served; the floors moved up to the latency at 9 calls, the
    // limit climbed to 14, and after the pool shrank it stayed at 10-11 (a queue of 6-7 calls,
    // latency 13 ms against 8.8) for as long as the run went on: each floor round, at 60% of a
    // limit still above the pool, measured the queue again.
    long shrinkAt = 9_800 * MS;
    LongToIntFunction pool = t -> t < shrinkAt ? 8 : 4;
    CallLimit limit = CallLimit.learned(256);
    Downstream d = new Downstream(limit, pool, 2 * MS, 100_000, 0.1, 7) {
      @Override
      void serve() {
        while (!waiting.isEmpty() && serving.size() < pool.applyAsInt(now)) {
          Call c = waiting.poll();
          long cost = (long) (c.cost() * (1 + 0.15 * serving.size()));
          serving.add(new Done(Math.max(now, c.startedAt()) + cost, c));
        }
      }
    };
    d.runUntil(shrinkAt + 2_000 * MS);
    d.runUntil(shrinkAt + 12_000 * MS, () -> assertTrue(limit.limit() >= 4 && limit.limit() <= 8,
        "limit " + limit.limit() + " at " + d.now / MS + " ms, pool 4 since " + shrinkAt / MS + " ms"));
  }
}
