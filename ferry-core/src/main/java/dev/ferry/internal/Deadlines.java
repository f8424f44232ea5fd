package dev.ferry.internal;

import java.time.Duration;

/**
 * Time arithmetic that cannot overflow. The engines keep time in loop nanoseconds, whose origin is
 * arbitrary (often large): adding a long timeout to it, or rounding a huge delay up to whole
 * milliseconds, would wrap around and fire at once. Every sum here saturates instead, so a
 * setting at its documented maximum means "practically never", as it says. Pure functions; any
 * thread.
 */
public final class Deadlines {
  /** The longest duration a ferry can hold: {@code Long.MAX_VALUE} nanoseconds (about 292 years). */
  public static final Duration LONGEST = Duration.ofNanos(Long.MAX_VALUE);

  private Deadlines() {}

  /** {@code now + nanos}, or {@link Long#MAX_VALUE} when that would overflow (no deadline then). */
  public static long after(long now, long nanos) {
    long sum = now + nanos;
    return ((now ^ sum) & (nanos ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }

  /** Whether {@code d} is longer than a ferry can hold in nanoseconds. */
  public static boolean tooLong(Duration d) {
    return d != null && d.compareTo(LONGEST) > 0;
  }

  /** Why {@code timeout} is no caller deadline, or null when it is one (positive, at most {@link #LONGEST}). */
  static String badTimeout(Duration timeout) {
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      return "a deadline must be a positive duration, got " + timeout;
    }
    if (tooLong(timeout)) {
      return "a deadline must be at most " + LONGEST + " (about 292 years), got " + timeout;
    }
    return null;
  }

  /**
   * {@code d} in whole milliseconds, rounded up: where a duration travels in ms (a config's JSON,
   * the {@code timeout-ms} header), rounded down a delay under a millisecond read back as none and a
   * deadline came out shorter than set, so it could be reported before it passed. For durations
   * below {@code Long.MAX_VALUE} ms (the callers' are validated far below), so the extra
   * millisecond cannot overflow.
   */
  public static long ceilMillis(Duration d) {
    long ms = d.toMillis();
    return d.equals(Duration.ofMillis(ms)) ? ms : ms + 1;
  }

  /**
   * A timer delay in whole milliseconds for a delay in nanoseconds: rounded up (a deadline is
   * never reported early), at least 1 (Vert.x's floor), and without overflow for the largest delays.
   */
  public static long timerMillis(long delayNanos) {
    if (delayNanos <= 0) {
      return 1;
    }
    return Math.max(1, delayNanos / 1_000_000 + (delayNanos % 1_000_000 == 0 ? 0 : 1));
  }
}
