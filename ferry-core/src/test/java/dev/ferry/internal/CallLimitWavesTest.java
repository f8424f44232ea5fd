package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A cut leaves at least what Little's law on the mean latency says the downstream served (ADR
 * 0150). The median decides whether a round queued; it is not how many calls were served when a
 * queue drains in waves, as a FIFO pool answered on a loop's timer ticks does: the median then falls
 * on the step of the calls that waited a whole call time, and real-time runs of {@code x3c} cut a
 * pool of 16 to 13-15 calls in every run.
 */
class CallLimitWavesTest {
  static final long MS = 1_000_000L;
  static final long US = 1_000L;

  @Test
  void aQueueThatDrainsInWavesIsCutToWhatTheMeanLatencySaysWasServed() {
    CallLimit limit = CallLimit.learned(256);
    long floor = 2 * MS;
    // Slow start at the floor: waves of 1, 2, 4, 8 and 16 calls of 8 inputs, each wave held back,
    // so the limit doubles to 32 and the floor of 8 inputs is 2 ms.
    long t = 0;
    while (limit.limit() < 32) {
      int n = limit.limit();
      for (int i = 0; i < n; i++) {
        limit.completed(t + i * 10 * US + floor, floor, 8, n, false);
      }
      t += (n - 1) * 10 * US + floor;
    }
    assertEquals(32, limit.limit());
    assertEquals(floor, limit.floorNanos(8));
    // One wave's worth of calls, 23 in flight: 13 served at once, 19 that waited a whole call time
    // behind them. By Little's law on the mean latency (1.59 floors) the downstream served 14.5 calls
    // at once; the median (2 floors) says 11.5.
    long start = t + 10 * US;
    int waited = 0;
    for (int i = 0; i < 32; i++) {
      long latency = i < 13 ? floor : 2 * floor;
      waited += i < 13 ? 0 : 1;
      limit.completed(start + i * 10 * US + latency, latency, 8, 23, false);
    }
    assertEquals(19, waited);
    double served = 23 / ((13 + 2 * 19) / 32.0);
    int expected = (int) Math.ceil(served + Math.min(Math.sqrt(served), CallLimit.TOLERANCE * served));
    assertTrue(limit.limit() < 32, "the round read as a queue: limit " + limit.limit());
    assertEquals(expected, limit.limit(),
        "cut to the calls served on the mean latency (" + String.format("%.1f", served) + ") and the queue allowed;"
            + " on the median (11.5 served) it would be 15");
  }
}
