package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A cache in front of a downstream with room for every call: seven calls in ten are hits (0.2 ms),
 * the rest misses whose time varies (lognormal around 2 ms, sigma 0.5), and nothing ever queues at
 * the downstream. Nothing here is a queue, so the limit must not be cut below the calls in flight.
 * Latency groups per batch size (ADR 0158, withdrawn) failed this: learned from rounds that end at
 * their last sample, the slow group's floor held only the misses that finished early, its median
 * read 1.25-1.5 with no queue, and the limit fell from 64 to 22-27 on average and 1-10 at its
 * lowest, calls waiting up to 4.9 ms in the ferry (review L). Whoever tries groups again starts here.
 */
class CallLimitVaryingMissesTest {
  static final long MS = 1_000_000L;
  static final long US = 1_000L;

  @Test
  void missesThatVaryWithoutAQueueAreNotCut() {
    for (long seed = 1; seed <= 3; seed++) {
      double[] r = run(seed, 20_000, 0.7, 0.5);
      String at = String.format("seed %d: lowest limit %.0f, calls waited %.3f ms in the ferry on average", seed, r[0], r[1]);
      assertTrue(r[0] >= 16, at);
      assertTrue(r[1] <= 0.05, at);
    }
  }

  /**
   * Calls of 8 inputs arrive at {@code rate} per second (Poisson), wait in the ferry while the limit
   * is reached, and complete after a hit's or a miss's time; from 5 s to 20 s (virtual), returns the
   * lowest limit and the mean time a call waited for the limit, in ms.
   */
  static double[] run(long seed, double rate, double hits, double sigma) {
    SplittableRandom rnd = new SplittableRandom(seed);
    CallLimit limit = CallLimit.learned(256);
    // Completions: {time, start, in flight at start}, earliest first.
    PriorityQueue<long[]> completions = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
    ArrayDeque<Long> waiting = new ArrayDeque<>(); // arrival times
    long from = 5_000 * MS;
    long until = 20_000 * MS;
    long nextArrival = 0;
    int inFlight = 0;
    int lowest = Integer.MAX_VALUE;
    double waited = 0;
    long started = 0;
    while (true) {
      long now;
      if (!completions.isEmpty() && completions.peek()[0] <= nextArrival) {
        long[] c = completions.poll();
        now = c[0];
        inFlight--;
        limit.completed(now, now - c[1], 8, (int) c[2], false);
        if (now > from) {
          lowest = Math.min(lowest, limit.limit());
        }
      } else {
        now = nextArrival;
        waiting.add(now);
        nextArrival = now + Math.max(1, (long) (-Math.log(1 - rnd.nextDouble()) / rate * 1e9));
      }
      if (now > until) {
        return new double[] {lowest, waited / Math.max(1, started) / MS};
      }
      while (!waiting.isEmpty() && inFlight < limit.limit()) {
        long arrived = waiting.poll();
        if (now > from) {
          waited += now - arrived;
          started++;
        }
        inFlight++;
        long latency = rnd.nextDouble() < hits ? 200 * US : (long) (2 * MS * lognormal(rnd, sigma));
        completions.add(new long[] {now + Math.max(1, latency), now, inFlight});
      }
    }
  }

  /** A lognormal factor of mean 1. */
  static double lognormal(SplittableRandom rnd, double sigma) {
    double g = Math.sqrt(-2 * Math.log(1 - rnd.nextDouble())) * Math.cos(2 * Math.PI * rnd.nextDouble());
    return Math.exp(sigma * g - sigma * sigma / 2);
  }
}
