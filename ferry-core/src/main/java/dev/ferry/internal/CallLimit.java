package dev.ferry.internal;

import java.util.Arrays;

/**
 * How many calls a per-key ferry may have on the wire: learned from the downstream's latency
 * (ADR 0012), or pinned.
 *
 * <h2>Design</h2>
 *
 * A call's latency grows with its batch, so each sample is compared with the <em>floor</em> of its
 * batch-size class ({@code floor(log2(size))}): the lowest round mean seen for that class. Samples
 * are judged in rounds: a round takes the calls that started after it began and ends once it holds
 * {@code max(4, limit)} of them. At its end, {@code g = sum(floors) / sum(latencies)} says how much of
 * the time was queueing: well below 1, the limit drops to what the downstream serves at once
 * (Little's law: calls in flight x g, plus the tolerance); otherwise, if the limit held calls
 * back, it probes up. Floors only fall between re-measurements; every {@link #FLOOR_PERIOD_NANOS}
 * one round runs at 60% of the limit and its class means replace the floors, so a queue never
 * becomes the floor and a downstream that got slower for good is learned.
 *
 * <h2>Invariants</h2>
 * {@code 1 <= limit() <= max}; floors are positive or absent; a pinned limit never moves.
 *
 * <p>Plain state, no clock of its own and no Vert.x: the engine calls it on its loop, passing the
 * time, and tests drive it with made-up samples.
 */
public final class CallLimit {
  /** How far above its floor a round's latency may be before it counts as queueing. */
  static final double TOLERANCE = 0.3;
  /** Samples in a round at least (and at least the limit). */
  static final int MIN_ROUND = 4;
  /** How often the floors are re-measured at a lowered limit. */
  static final long FLOOR_PERIOD_NANOS = 30_000_000_000L;
  /** The limit during a floor round, as a fraction of the limit before it. */
  static final double FLOOR_ROUND_SHARE = 0.6;
  /** Rounds queued at limit 1 (where every call is alone) that start a floor round at once. */
  static final int ROUNDS_AT_ONE = 5;

  private static final int CLASSES = 32;

  private final int max;
  private final boolean pinned;
  private int limit;
  private boolean slowStart = true;

  /** Floor point per batch-size class: its mean batch size and latency in nanos; latency 0 = none yet. */
  private final double[] floorSize = new double[CLASSES];
  private final double[] floorLatency = new double[CLASSES];
  private int roundsQueuedAtOne;

  // The current round.
  private long roundStart = Long.MIN_VALUE;
  private int samples;
  private int failures;
  private boolean heldBack;
  private long inFlightSum;
  private final long[] classSum = new long[CLASSES];
  private final long[] classSize = new long[CLASSES];
  private final int[] classCount = new int[CLASSES];

  // The floor re-measurement.
  private long nextFloorRound = Long.MIN_VALUE;
  private boolean floorRound;
  private int limitBeforeFloorRound;

  // What the last round saw (for metrics).
  private long seenLatencyNanos;
  private long seenFloorNanos;

  /** A learned limit between 1 and {@code max}, starting at 1. */
  public static CallLimit learned(int max) {
    return new CallLimit(max, 1, false);
  }

  /** A limit fixed at {@code value}. */
  public static CallLimit pinned(int value) {
    return new CallLimit(value, value, true);
  }

  private CallLimit(int max, int start, boolean pinned) {
    if (max < 1 || start < 1 || start > max) {
      throw new IllegalArgumentException("limit " + start + " outside [1, " + max + "]");
    }
    this.max = max;
    this.limit = start;
    this.pinned = pinned;
  }

  /** The limit in force: calls beyond it wait. */
  public int limit() {
    return limit;
  }

  public boolean isPinned() {
    return pinned;
  }

  /** Mean latency of the calls in the last completed round, in nanos (0 before the first). */
  public long seenLatencyNanos() {
    return seenLatencyNanos;
  }

  /** Mean floor the last round's calls were compared with, in nanos (0 before the first). */
  public long seenFloorNanos() {
    return seenFloorNanos;
  }

  /**
   * A call completed.
   *
   * @param now the loop's time, in nanos
   * @param latencyNanos how long the call was on the wire
   * @param size the inputs it carried (at least 1)
   * @param inFlightAtStart calls on the wire just after it started, itself included
   * @param failed it failed or timed out
   */
  public void completed(long now, long latencyNanos, int size, int inFlightAtStart, boolean failed) {
    if (pinned) {
      return;
    }
    long startedAt = now - latencyNanos;
    if (roundStart == Long.MIN_VALUE) {
      roundStart = startedAt;
      nextFloorRound = now + FLOOR_PERIOD_NANOS;
    }
    if (startedAt < roundStart) {
      // Started under an earlier limit: it says nothing about this one.
      return;
    }
    samples++;
    inFlightSum += inFlightAtStart;
    heldBack |= inFlightAtStart >= limit;
    if (failed) {
      failures++;
    } else {
      int c = sizeClass(size);
      classSum[c] += Math.max(1, latencyNanos);
      classSize[c] += size;
      classCount[c]++;
    }
    if (samples >= Math.max(MIN_ROUND, limit)) {
      endRound(now);
    }
  }

  private void endRound(long now) {
    if (floorRound) {
      endFloorRound(now);
      return;
    }
    // Each class's samples are judged at their mean size against the floor curve; a class with no
    // floor yet learns one below, from this round's mean less the queueing the known classes show.
    double floorSum = 0;
    double latencySum = 0;
    int known = 0;
    double[] expected = new double[CLASSES];
    for (int c = 0; c < CLASSES; c++) {
      if (classCount[c] == 0) {
        continue;
      }
      expected[c] = floorAt(classSize[c] / (double) classCount[c]);
      if (expected[c] > 0) {
        floorSum += expected[c] * classCount[c];
        latencySum += classSum[c];
        known += classCount[c];
      }
    }
    double queueDelay = known == 0 ? 0 : Math.max(0, (latencySum - floorSum) / known);
    for (int c = 0; c < CLASSES; c++) {
      if (classCount[c] == 0) {
        continue;
      }
      double mean = classSum[c] / (double) classCount[c];
      double size = classSize[c] / (double) classCount[c];
      if (floorLatency[c] == 0) {
        setFloor(c, size, Math.max(1, mean - queueDelay));
      } else if (mean < expected[c]) {
        setFloor(c, size, mean);
      }
    }
    if (known > 0) {
      seenLatencyNanos = (long) (latencySum / known);
      seenFloorNanos = (long) (floorSum / known);
    } else if (samples > failures) {
      // The first round: what it saw is the floor.
      long all = 0;
      for (int c = 0; c < CLASSES; c++) {
        all += classSum[c];
      }
      seenLatencyNanos = all / (samples - failures);
      seenFloorNanos = seenLatencyNanos;
    }
    double meanInFlight = inFlightSum / (double) samples;
    boolean queueing = known > 0 && floorSum / latencySum < 1 / (1 + TOLERANCE);
    if (failures > 0) {
      setLimit(limit - Math.max(1, limit / 10));
      slowStart = false;
    } else if (queueing) {
      double gradient = floorSum / latencySum;
      int target = (int) Math.ceil(meanInFlight * gradient * (1 + TOLERANCE));
      setLimit(Math.min(limit - 1, target));
      slowStart = false;
    } else if (heldBack) {
      setLimit(slowStart ? 2 * limit : limit + Math.max(1, limit / 8));
    }
    // At 1, every call is alone, so lasting "queueing" there is a slower downstream: re-measure.
    roundsQueuedAtOne = queueing && limit == 1 ? roundsQueuedAtOne + 1 : 0;
    if ((heldBack && now >= nextFloorRound) || roundsQueuedAtOne >= ROUNDS_AT_ONE) {
      floorRound = true;
      roundsQueuedAtOne = 0;
      limitBeforeFloorRound = limit;
      setLimit((int) (limit * FLOOR_ROUND_SHARE));
    }
    newRound(now);
  }

  /** A round at a lowered limit: its class means become the floors, then the limit is restored. */
  private void endFloorRound(long now) {
    if (failures == 0) {
      Arrays.fill(floorLatency, 0);
      for (int c = 0; c < CLASSES; c++) {
        if (classCount[c] > 0) {
          setFloor(c, classSize[c] / (double) classCount[c], Math.max(1, classSum[c] / (double) classCount[c]));
        }
      }
    }
    floorRound = false;
    setLimit(limitBeforeFloorRound);
    nextFloorRound = now + FLOOR_PERIOD_NANOS;
    newRound(now);
  }

  private void setFloor(int c, double size, double latency) {
    floorSize[c] = size;
    floorLatency[c] = latency;
  }

  private void newRound(long now) {
    roundStart = now;
    samples = 0;
    failures = 0;
    heldBack = false;
    inFlightSum = 0;
    Arrays.fill(classSum, 0);
    Arrays.fill(classSize, 0);
    Arrays.fill(classCount, 0);
  }

  /**
   * The floor curve at batch size {@code size}: piecewise linear through the classes' floor points
   * (mean size, floor latency); beyond the largest point, extended with the slope of the two largest
   * (never falling); below the smallest, the smallest point's latency. 0 when unknown: no point
   * yet, or a size beyond the one point there is.
   */
  double floorAt(double size) {
    int lo = -1;
    int hi = -1;
    int below = -1;
    for (int c = 0; c < CLASSES; c++) {
      if (floorLatency[c] == 0) {
        continue;
      }
      if (floorSize[c] <= size) {
        below = lo;
        lo = c;
      } else if (hi < 0) {
        hi = c;
      }
    }
    if (lo >= 0 && hi >= 0) {
      double span = floorSize[hi] - floorSize[lo];
      double slope = span <= 0 ? 0 : Math.max(0, (floorLatency[hi] - floorLatency[lo]) / span);
      return Math.min(floorLatency[hi], floorLatency[lo] + slope * (size - floorSize[lo]));
    }
    if (hi >= 0) {
      return floorLatency[hi];
    }
    if (lo >= 0 && (size <= floorSize[lo] || below >= 0)) {
      double slope = below < 0 ? 0 : Math.max(0,
          (floorLatency[lo] - floorLatency[below]) / Math.max(1e-9, floorSize[lo] - floorSize[below]));
      return floorLatency[lo] + slope * (size - floorSize[lo]);
    }
    return 0;
  }

  private void setLimit(int value) {
    limit = Math.max(1, Math.min(max, value));
  }

  static int sizeClass(int size) {
    return 31 - Integer.numberOfLeadingZeros(Math.max(1, size));
  }

  /** The floor learned for batches of {@code size}, in nanos (0 = unknown); for tests. */
  long floorNanos(int size) {
    return (long) floorAt(size);
  }
}
