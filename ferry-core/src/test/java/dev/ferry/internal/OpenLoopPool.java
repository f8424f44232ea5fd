package dev.ferry.internal;

import dev.ferry.Dispatch;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The learned limit fed by the real engine in virtual time: inputs arrive at random (Poisson,
 * seeded) over some keys, the engine batches them (at most 8 a call) and calls a FIFO pool of
 * connections whose calls cost what a {@link Cost} says. Shared by the tests of the limit's floors.
 */
final class OpenLoopPool {
  static final long MS = 1_000_000L;

  private OpenLoopPool() {}

  /** The cost of a call: at {@code now} since the start, of {@code inputs}, the {@code index}-th call. */
  interface Cost {
    long nanos(long now, int inputs, long index, SplittableRandom rnd);
  }

  /** Told the limit in force over each step of virtual time from {@code from} on. */
  interface Observer {
    void limit(int limit, long nanos);
  }

  /** Runs {@code rate} inputs a second over {@code keys} keys against {@code pool} connections until {@code until}. */
  static void run(int pool, int keys, double rate, Cost cost, long from, long until, long seed, Observer observer) {
    run(pool, keys, rate, cost, 0, from, until, seed, observer);
  }

  /**
   * As above, on a loop that runs every posted task {@code loopLagNanos} late, the pool's
   * completions included; returns the ferry as the run left it.
   */
  static PerKeyFerry<Integer, Integer, List<Integer>, Integer> run(int pool, int keys, double rate, Cost cost,
      long loopLagNanos, long from, long until, long seed, Observer observer) {
    VirtualLoop loop = new VirtualLoop();
    loop.delayPostedTasks(loopLagNanos);
    long start = loop.nanoTime();
    Pool store = new Pool(loop, pool, cost, start, seed * 31 + 7);
    store.throughTheLoop = loopLagNanos > 0;
    PerKeyConfig config = PerKeyConfig.builder().dispatch(Dispatch.ADAPTIVE).maxBatchSize(8).build();
    PerKeyFerry<Integer, Integer, List<Integer>, Integer> ferry = new PerKeyFerry<>(loop, config, k -> k, null, null,
        (k, ins) -> store.call(ins.size()).map(v -> ins), (in, r) -> in);
    SplittableRandom rnd = new SplittableRandom(seed);
    long end = start + until;
    Runnable[] arrive = new Runnable[1];
    arrive[0] = () -> {
      ferry.submit(rnd.nextInt(keys));
      long gap = (long) (-Math.log(1 - rnd.nextDouble()) / rate * 1e9);
      if (loop.nanoTime() + gap < end) {
        loop.schedule(Math.max(1, gap), arrive[0]);
      }
    };
    loop.schedule(1, arrive[0]);
    long since = start + from;
    long last = since;
    while (loop.nextTimerAt() >= 0 && loop.nanoTime() < end) {
      int limit = ferry.metrics().callLimit();
      loop.advance(Math.max(1, loop.nextTimerAt() - loop.nanoTime()));
      long now = Math.min(loop.nanoTime(), end);
      if (now > since) {
        observer.limit(limit, now - last);
        last = now;
      }
    }
    return ferry;
  }

  /** A FIFO pool of {@code size} connections. */
  static final class Pool {
    final VirtualLoop loop;
    final int size;
    final Cost cost;
    final long start;
    final SplittableRandom rnd;
    final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
    int busy;
    long calls;
    /** Completions reach the ferry through its loop's queue (a real client's callbacks do), not inline. */
    boolean throughTheLoop;

    Pool(VirtualLoop loop, int size, Cost cost, long start, long seed) {
      this.loop = loop;
      this.size = size;
      this.cost = cost;
      this.start = start;
      this.rnd = new SplittableRandom(seed);
    }

    Future<Void> call(int inputs) {
      Promise<Void> done = Promise.promise();
      long nanos = Math.max(1, cost.nanos(loop.nanoTime() - start, inputs, calls++, rnd));
      waiting.add(() -> loop.schedule(nanos, () -> {
        busy--;
        if (throughTheLoop) {
          loop.execute(done::complete);
        } else {
          done.complete();
        }
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
}
