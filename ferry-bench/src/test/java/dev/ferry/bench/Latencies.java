package dev.ferry.bench;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Latencies of one open-loop run, one slot per input (HdrHistogram is not a dependency; a sorted
 * array is plenty at these counts). An input's clock starts at its <em>scheduled</em> arrival, not
 * when the generator got round to sending it, so a stalled sender cannot hide queueing
 * (coordinated omission). Slots are written lock-free from whichever thread completes the input.
 */
final class Latencies {
  private final long[] scheduled;
  private final AtomicLongArray done; // completion time, 0 while pending
  private final AtomicInteger completed = new AtomicInteger();
  private final AtomicInteger failed = new AtomicInteger();
  private volatile int issued;

  Latencies(int capacity) {
    scheduled = new long[capacity];
    done = new AtomicLongArray(capacity);
  }

  int capacity() {
    return scheduled.length;
  }

  /** Called by the (single) generator thread before the input is submitted. */
  void begin(int i, long scheduledNanos) {
    scheduled[i] = scheduledNanos;
    issued = i + 1;
  }

  void end(int i, boolean ok) {
    done.set(i, System.nanoTime());
    (ok ? completed : failed).incrementAndGet();
  }

  /** When input {@code i} was due (its clock's start). */
  long scheduledAt(int i) {
    return scheduled[i];
  }

  /** When input {@code i} was answered, or 0 while pending. */
  long doneAt(int i) {
    return done.get(i);
  }

  int issued() {
    return issued;
  }

  int finished() {
    return completed.get() + failed.get();
  }

  /**
   * Statistics over the inputs scheduled in {@code [from, to)}. An input still pending at {@code
   * now} counts with the latency it has so far (a lower bound), so an overloaded contender's p99
   * shows as at least its backlog instead of vanishing from the sample.
   */
  Stats stats(long from, long to, long now) {
    int n = issued;
    long[] lat = new long[n];
    int m = 0;
    int pending = 0;
    int failures = 0;
    long completedInWindow = 0;
    for (int i = 0; i < n; i++) {
      long s = scheduled[i];
      long d = done.get(i);
      if (d != 0 && d >= from && d < to) {
        completedInWindow++;
      }
      if (s < from || s >= to) {
        continue;
      }
      if (d == 0) {
        pending++;
        d = now;
      }
      lat[m++] = d - s;
    }
    failures = failed.get();
    long[] sorted = Arrays.copyOf(lat, m);
    Arrays.sort(sorted);
    double seconds = (to - from) / 1e9;
    return new Stats(m, pending, failures, completedInWindow / seconds,
        pct(sorted, 0.50), pct(sorted, 0.99), sorted.length == 0 ? 0 : sorted[sorted.length - 1]);
  }

  private static long pct(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int idx = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, idx))];
  }

  /**
   * @param samples inputs scheduled in the window
   * @param pending of those, still unanswered at the end (their latency is a lower bound)
   * @param failures inputs that failed over the whole run (rejected, closed, store stopped)
   * @param throughput completions per second inside the window
   */
  record Stats(int samples, int pending, int failures, double throughput, long p50, long p99, long max) {
    double p50ms() { return p50 / 1e6; }
    double p99ms() { return p99 / 1e6; }
  }
}
