package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Dispatch;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * Latency noise that does not grow with the calls in flight is not a queue (ADR 0111), with the
 * real engine in virtual time. A FIFO pool of 64 connections far from full (the variant
 * (a), at a quarter and half of what the real-time harness offers it), whose replies come late by
 * a random delay whatever the calls in flight, in spells: every 10 ms the delay's mean is redrawn
 * (exponential around 1 ms), as a loaded machine's spells of having a core or not, timers that
 * wake late, a downstream's own hiccups. The seeds are printed with every figure.
 */
class NoiseIsNotAQueueTest {
  static final long MS = 1_000_000L;

  /** A FIFO pool whose calls take 2 ms + 5 us per input plus the noise, holding their connection through it. */
  static final class NoisyPool {
    final VirtualLoop loop;
    final int size;
    final SplittableRandom noise;
    final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
    int busy;
    long spell = Long.MIN_VALUE;
    double spellMean;

    NoisyPool(VirtualLoop loop, int size, long seed) {
      this.loop = loop;
      this.size = size;
      this.noise = new SplittableRandom(seed);
    }

    Future<Void> call(int inputs) {
      Promise<Void> done = Promise.promise();
      waiting.add(() -> loop.schedule(2 * MS + 5_000L * inputs + delay(), () -> {
        busy--;
        done.complete();
        next();
      }));
      next();
      return done.future();
    }

    /** The reply's delay: exponential around the current spell's mean, itself exponential around 1 ms. */
    private long delay() {
      long at = Math.floorDiv(loop.nanoTime(), 10 * MS);
      if (at != spell) {
        spell = at;
        spellMean = -Math.log(1 - noise.nextDouble()) * MS;
      }
      return (long) (-Math.log(1 - noise.nextDouble()) * spellMean);
    }

    private void next() {
      while (busy < size && !waiting.isEmpty()) {
        busy++;
        waiting.poll().run();
      }
    }
  }

  /**
   * {@code inputsPerSec} over 256 keys for 4 s, against a noisy pool of 64; the p99 in nanos of
   * the inputs submitted after the first second. {@code pinned} 0: the learned limit.
   */
  static long p99(double inputsPerSec, long seed, int pinned) {
    VirtualLoop loop = new VirtualLoop();
    NoisyPool store = new NoisyPool(loop, 64, seed * 31 + 7);
    PerKeyConfig.Builder b = PerKeyConfig.builder().dispatch(Dispatch.ADAPTIVE).maxBatchSize(8)
        .maxQueueing(1_000_000);
    if (pinned > 0) {
      b.maxInFlightBatches(pinned).pinnedLimit(pinned);
    }
    PerKeyFerry<Integer, Long, List<Long>, Long> ferry = new PerKeyFerry<>(loop, b.build(), in -> (int) (in % 256),
        null, null, (k, ins) -> store.call(ins.size()).map(v -> ins), (in, r) -> in);
    SplittableRandom rnd = new SplittableRandom(seed);
    long start = loop.nanoTime();
    long from = start + 1000 * MS;
    long end = start + 4000 * MS;
    long[] lat = new long[(int) (inputsPerSec * 4) + 1024];
    int[] n = {0};
    int[] submitted = {0};
    Runnable[] arrive = new Runnable[1];
    arrive[0] = () -> {
      long t0 = loop.nanoTime();
      boolean counted = t0 - from >= 0;
      if (counted) {
        submitted[0]++;
      }
      // The key in the low bits, the submission time above them.
      ferry.submit(t0 * 256 + rnd.nextInt(256)).onComplete(ar -> {
        if (counted && n[0] < lat.length) {
          lat[n[0]++] = loop.nanoTime() - t0;
        }
      });
      long gap = (long) (-Math.log(1 - rnd.nextDouble()) / inputsPerSec * 1e9);
      if (t0 + gap - end < 0) {
        loop.schedule(Math.max(1, gap), arrive[0]);
      }
    };
    loop.schedule(1, arrive[0]);
    while (loop.nextTimerAt() >= 0 && loop.nanoTime() - (end + 2000 * MS) < 0) {
      loop.advance(Math.max(1, loop.nextTimerAt() - loop.nanoTime()));
    }
    // Inputs still unanswered count as the slowest.
    long[] sorted = Arrays.copyOf(lat, Math.max(n[0], Math.min(lat.length, submitted[0])));
    Arrays.fill(sorted, n[0], sorted.length, Long.MAX_VALUE);
    Arrays.sort(sorted);
    return sorted[Math.min(sorted.length - 1, (int) (sorted.length * 0.99))];
  }

  @Test
  @Disabled("ADR 0111, not adopted: the learned limit reads noise in spells as a queue; fails on main (p99 1.8-3x pinned)")
  void noiseOnAPoolFarFromFullCostsNoMoreThanAPinnedLimit() {
    // The learned limit against the limit pinned at the pool (what a perfect controller would
    // hold here: the pool is never full), on the same arrivals and noise. Before ADR 0111 the
    // noise read as a queue of our calls: a spell's median call 1.3-2x its floor at 20-50 calls
    // in flight is, by Little's law, 5-25 of them queued, over the 4-7 allowed, so the limit was
    // cut to 10-20 where the load needs 20-30 calls out; below capacity such a cut costs no
    // throughput, so no trial undid it, and the inputs it held back waited in the ferry. At 7,500
    // inputs/s (a quarter of what the real-time harness offers this pool), seeds 1-3: p99
    // 21.5-36.4 ms against 11.4-12.2 ms pinned (1.8-3x) before ADR 0111; with its checks
    // 10.2-13.6 ms (at most 1.2x). Bound: a quarter over the pinned limit. (At 15,000/s the checks
    // help less, 17-25 ms against 21-30 before and 11-13 pinned: ADR 0111, what is left.)
    StringBuilder missed = new StringBuilder();
    for (double rate : new double[] {7_500}) {
      for (long seed = 1; seed <= 3; seed++) {
        long learned = p99(rate, seed, 0);
        long pinned = p99(rate, seed, 64);
        String at = String.format("seed %d, %,.0f inputs/s: p99 %.2f ms learned, %.2f ms pinned at the pool", seed, rate,
            learned / 1e6, pinned / 1e6);
        System.out.println(at);
        if (learned > 1.25 * pinned) {
          missed.append(at).append("; ");
        }
      }
    }
    assertTrue(missed.isEmpty(), "over 1.25 x the pinned limit's p99: " + missed);
  }
}
