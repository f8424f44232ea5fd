package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A batch size whose calls come in two groups far apart (ADR 0158): a cache in front of the store
 * answers most calls at once, the rest wait for a connection. The median call of a round is a hit,
 * on time, so a queue of the misses never read as one: the limit stayed where it was (or probed up
 * to its ceiling) while the misses waited three times their own time at the pool.
 */
class CallLimitGroupsTest {
  static final long MS = 1_000_000L;
  static final long US = 1_000L;
  static final long HIT = 200 * US;
  static final long MISS = 2 * MS;

  @Test
  void aQueueOfTheMissesBehindACacheIsCut() {
    CallLimit limit = CallLimit.learned(256);
    long t = slowStart(limit, 64);
    int before = limit.limit();
    // Rounds of as many calls as the limit, seven in ten hits; the misses now wait two of their
    // own times for a connection before theirs.
    for (int round = 0; round < 6; round++) {
      t = round(limit, t, limit.limit(), 3 * MISS);
    }
    assertTrue(limit.limit() < before * 0.8, "the misses' queue was not cut: limit " + before + " -> " + limit.limit());
  }

  @Test
  void missesOnTimeAreNotAQueue() {
    CallLimit limit = CallLimit.learned(256);
    long t = slowStart(limit, 64);
    int before = limit.limit();
    for (int round = 0; round < 6; round++) {
      t = round(limit, t, limit.limit(), MISS);
    }
    assertTrue(limit.limit() >= before, "cut with every call on time: limit " + before + " -> " + limit.limit());
  }

  /**
   * One group with a heavy tail is not two: lognormal costs of sigma up to 2 and Pareto tails of
   * index 1.5 and 2, in rounds of 8 to 64 calls of sizes 1 to 16 (or all 8), 300 rounds and 10
   * seeds each. With the gap alone (no minimum of calls, no separation), a lognormal of sigma 1 was
   * split at 6 to 9 seeds of 10.
   */
  @Test
  void aHeavyTailIsNotTakenForTwoGroups() {
    for (double tail : new double[] {0.5, 1, 1.5, 2, -1.5, -2}) {
      for (int inFlight : new int[] {8, 16, 64}) {
        for (boolean oneSize : new boolean[] {false, true}) {
          for (long seed = 1; seed <= 10; seed++) {
            Random rnd = new Random(seed);
            CallLimit limit = CallLimit.learned(256);
            long t = 0;
            for (int round = 0; round < 300; round++) {
              int n = Math.min(limit.limit(), inFlight);
              List<long[]> calls = new ArrayList<>();
              for (int i = 0; i < n; i++) {
                long start = t + (i + 1) * 10 * US;
                int size = oneSize ? 8 : 1 + rnd.nextInt(16);
                // sigma of a lognormal (> 0), or minus the index of a Pareto tail (< 0)
                double x = tail > 0 ? Math.exp(tail * rnd.nextGaussian()) : Math.pow(1 - rnd.nextDouble(), 1 / tail);
                long latency = (long) (MS * x * (1 + size * 0.05));
                calls.add(new long[] {start + latency, latency, size});
              }
              calls.sort(Comparator.comparingLong(c -> c[0]));
              for (long[] c : calls) {
                limit.completed(c[0], c[1], (int) c[2], n, false);
              }
              t = calls.get(calls.size() - 1)[0];
              assertFalse(limit.hasTwoGroups(), (tail > 0 ? "lognormal sigma " + tail : "Pareto index " + -tail)
                  + ", " + inFlight + " in flight, " + (oneSize ? "one size" : "sizes 1-16") + ", seed " + seed
                  + ": split into two groups at round " + round);
            }
          }
        }
      }
    }
  }

  /** Slow start on calls of both groups on time, until the limit reaches {@code to}; returns the time of the last completion. */
  static long slowStart(CallLimit limit, int to) {
    long t = 0;
    while (limit.limit() < to) {
      t = round(limit, t, limit.limit(), MISS);
    }
    return t;
  }

  /**
   * {@code n} calls of 8 inputs started 10 us apart after {@code t}, each with {@code n} in flight at
   * its start, seven in ten hits and the rest misses taking {@code miss}, fed to the limit in the
   * order they complete; returns the time of the last completion.
   */
  static long round(CallLimit limit, long t, int n, long miss) {
    List<long[]> calls = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long start = t + (i + 1) * 10 * US;
      long latency = i % 10 < 7 ? HIT : miss;
      calls.add(new long[] {start + latency, latency});
    }
    calls.sort(Comparator.comparingLong(c -> c[0]));
    for (long[] c : calls) {
      limit.completed(c[0], c[1], 8, n, false);
    }
    return calls.get(calls.size() - 1)[0];
  }
}
