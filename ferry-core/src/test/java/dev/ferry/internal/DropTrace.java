package dev.ferry.internal;

import static dev.ferry.internal.OutsideShapes.MS;
import static dev.ferry.internal.OutsideShapes.SEC;

import dev.ferry.Dispatch;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.VirtualLoop;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Review BB's trace of `drop` (docs/performance.md, review AU's outside shapes), skipped unless
 * asked for: {@code -Dferry.droptrace=PREFIX} writes PREFIX.calls (start in us, key, inputs, calls
 * in flight at its start, limit, latency in us), PREFIX.inputs (submitted in us, key, its call's
 * start in us, latency in us) and PREFIX.limit (each change). {@code -Dferry.droptrace.pin},
 * {@code .rate}, {@code .low}, {@code .from}, {@code .to} (ms) and {@code .pool} vary the run.
 */
class DropTrace {
  static OutsideShapes.Downstream down() {
    int low = Integer.getInteger("ferry.droptrace.low", 1);
    long from = Long.getLong("ferry.droptrace.from", 4000) * MS;
    long to = Long.getLong("ferry.droptrace.to", 7000) * MS;
    int pool = Integer.getInteger("ferry.droptrace.pool", 16);
    return new OutsideShapes.Downstream() {
      @Override
      int capacity(long t) {
        return t >= from && t < to ? low : pool;
      }

      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        return 2 * MS + 5_000L * inputs;
      }
    };
  }

  @Test
  @EnabledIfSystemProperty(named = "ferry.droptrace", matches = ".+")
  void trace() throws Exception {
    int pinned = Integer.getInteger("ferry.droptrace.pin", 0);
    double rate = Double.parseDouble(System.getProperty("ferry.droptrace.rate", "3000"));
    String out = System.getProperty("ferry.droptrace");
    VirtualLoop loop = new VirtualLoop();
    long start = loop.nanoTime();
    OutsideShapes.Server server = new OutsideShapes.Server(loop, down(), start, 17 * 31 + 7);
    PerKeyConfig.Builder b = PerKeyConfig.builder().dispatch(Dispatch.ADAPTIVE).maxBatchSize(8);
    if (pinned > 0) {
      b.pinnedLimit(pinned);
    }
    int[] inFlight = {0};
    PrintWriter calls = new PrintWriter(out + ".calls");
    PrintWriter inputs = new PrintWriter(out + ".inputs");
    PrintWriter limits = new PrintWriter(out + ".limit");
    PerKeyFerry<Integer, int[], List<int[]>, Integer>[] f = new PerKeyFerry[1];
    f[0] = new PerKeyFerry<>(loop, b.build(), in -> in[0], null, null,
        (k, ins) -> {
          long t0 = loop.nanoTime();
          inFlight[0]++;
          int at = inFlight[0];
          int lim = f[0].metrics().callLimit();
          return server.call(ins.size()).map(v -> {
            inFlight[0]--;
            calls.printf("%d %d %d %d %d %d%n", (t0 - start) / 1000, k, ins.size(), at, lim, (loop.nanoTime() - t0) / 1000);
            for (int[] in : ins) {
              in[2] = (int) ((t0 - start) / 1000);
            }
            return ins;
          });
        }, (in, r) -> in[1]);
    SplittableRandom rnd = new SplittableRandom(17);
    long end = start + 12 * SEC;
    Runnable[] arrive = new Runnable[1];
    int[] seq = {0};
    arrive[0] = () -> {
      long t0 = loop.nanoTime();
      int[] in = {rnd.nextInt(64), seq[0]++, -1};
      f[0].submit(in).onComplete(ar -> inputs.printf("%d %d %d %d%n", (t0 - start) / 1000, in[0], in[2],
          (loop.nanoTime() - t0) / 1000));
      long gap = (long) (-Math.log(1 - rnd.nextDouble()) / rate * 1e9);
      if (loop.nanoTime() + gap < end) {
        loop.schedule(Math.max(1, gap), arrive[0]);
      }
    };
    loop.schedule(1, arrive[0]);
    int lastLimit = -1;
    while (loop.nextTimerAt() >= 0 && loop.nanoTime() < end + 5 * SEC) {
      int limit = f[0].metrics().callLimit();
      if (limit != lastLimit) {
        limits.printf("%d %d%n", (loop.nanoTime() - start) / 1000, limit);
        lastLimit = limit;
      }
      loop.advance(Math.max(1, loop.nextTimerAt() - loop.nanoTime()));
    }
    calls.close();
    inputs.close();
    limits.close();
  }
}
