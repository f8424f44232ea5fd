package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Dispatch;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The learned limit against a downstream whose calls cost a heavy-tailed time at a steady mean
 * (lognormal, sigma 1: the median call takes 0.6 of the mean, one in a hundred 6 times it), fed by
 * the real engine under an open-loop load in virtual time (ADR 0152). The mean of a round's calls
 * of one batch size varies by about half from round to round, so a floor taken as the lowest of
 * such means sits far below the typical call.
 */
class CallLimitHeavyTailTest {
  static final long MS = 1_000_000L;

  /** A FIFO pool of {@code size} connections, each call costing 2 ms x lognormal(sigma 1, mean 1). */
  static final class Pool {
    final VirtualLoop loop;
    final int size;
    final SplittableRandom rnd;
    final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
    int busy;

    Pool(VirtualLoop loop, int size, long seed) {
      this.loop = loop;
      this.size = size;
      this.rnd = new SplittableRandom(seed);
    }

    Future<Void> call() {
      Promise<Void> done = Promise.promise();
      double gaussian = Math.sqrt(-2 * Math.log(1 - rnd.nextDouble())) * Math.cos(2 * Math.PI * rnd.nextDouble());
      long cost = Math.max(1, (long) (2 * MS * Math.exp(gaussian - 0.5)));
      waiting.add(() -> loop.schedule(cost, () -> {
        busy--;
        done.complete();
        next();
      }));
      next();
      return done.future();
    }

    private void next() {
      while (busy < size && !waiting.isEmpty()) {
        busy++;
        waiting.poll().run();
      }
    }
  }

  /**
   * A pool of 64 at 2 ms a call, 256 keys, inputs at a quarter and at half of what the pool carries:
   * the pool always has room, so no call need wait at it, and the limit must stay near or above
   * what the load keeps in flight. Before ADR 0152 the floors sat at a lucky round's mean (a third
   * of the typical call), about every other round read as a queue, and small cuts drove the limit
   * down to 1 or 2 within a second.
   */
  @Test
  void heavyTailedCostsAtAPoolWithRoomDoNotDriveTheLimitDown() {
    for (double rate : new double[] {30_000, 60_000}) {
      for (long seed = 1; seed <= 3; seed++) {
        int[] seen = run(64, 256, rate, seed);
        String at = String.format("seed %d, %,.0f inputs/s: lowest limit %d, below 24 for %.1f%% of the time", seed,
            rate, seen[0], seen[1] / 10.0);
        assertTrue(seen[0] >= 8, at);
        assertTrue(seen[1] <= 50, at);
      }
    }
  }

  /**
   * Runs {@code rate} inputs a second over {@code keys} keys against {@code pool} connections for 6
   * s; returns the lowest limit in force after the first 2 s and the per mille of that time it was
   * below 24 (what a quarter of the pool's capacity keeps in flight, batches of 1 to 3 aside).
   */
  static int[] run(int pool, int keys, double rate, long seed) {
    VirtualLoop loop = new VirtualLoop();
    Pool store = new Pool(loop, pool, seed * 31 + 7);
    PerKeyConfig config = PerKeyConfig.builder().dispatch(Dispatch.ADAPTIVE).maxBatchSize(8).build();
    PerKeyFerry<Integer, Integer, List<Integer>, Integer> ferry = new PerKeyFerry<>(loop, config, k -> k, null,
        null, (k, ins) -> store.call().map(v -> ins), (in, r) -> in);
    SplittableRandom rnd = new SplittableRandom(seed);
    long end = loop.nanoTime() + 6_000 * MS;
    Runnable[] arrive = new Runnable[1];
    arrive[0] = () -> {
      ferry.submit(rnd.nextInt(keys));
      long gap = (long) (-Math.log(1 - rnd.nextDouble()) / rate * 1e9);
      if (loop.nanoTime() + gap < end) {
        loop.schedule(Math.max(1, gap), arrive[0]);
      }
    };
    loop.schedule(1, arrive[0]);
    long since = loop.nanoTime() + 2_000 * MS;
    long below = 0;
    long last = since;
    int lowest = Integer.MAX_VALUE;
    while (loop.nextTimerAt() >= 0 && loop.nanoTime() < end) {
      int limit = ferry.metrics().callLimit();
      loop.advance(Math.max(1, loop.nextTimerAt() - loop.nanoTime()));
      long now = Math.min(loop.nanoTime(), end);
      if (now > since) {
        below += limit < 24 ? now - last : 0;
        last = now;
        lowest = Math.min(lowest, limit);
      }
    }
    return new int[] {lowest, (int) (1000 * below / (end - since))};
  }
}
