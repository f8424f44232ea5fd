package dev.ferry.internal;

import static dev.ferry.internal.OutsideShapes.MS;
import static dev.ferry.internal.OutsideShapes.SEC;

import dev.ferry.internal.OutsideShapes.Downstream;
import dev.ferry.internal.OutsideShapes.Run;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Review AU's measurement of the learned limit against downstream shapes from outside the
 * repository, skipped unless asked for: {@code mvn -o verify -pl ferry-core -am
 * -Dtest=OutsideShapesReport -Dferry.outside=all} (or a shape's name). Prints, per shape, the
 * learned limit's run and pinned limits' runs on the same arrivals.
 */
class OutsideShapesReport {

  record Case(String name, Supplier<Downstream> down, Supplier<Run> run, int[] pins) {}

  static Run run(int keys, double rate, int seconds) {
    Run r = new Run();
    r.keys = keys;
    r.rate = rate;
    r.seconds = seconds;
    return r;
  }

  static Downstream pool(int size, long base, long perInput) {
    return new Downstream() {
      @Override
      int capacity(long t) {
        return size;
      }

      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        return base + perInput * inputs;
      }
    };
  }

  /** A remote downstream: 50 ms round trip and 5 us an input, no capacity bound. */
  static Downstream remote() {
    return new Downstream() {
      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        return 50 * MS + 5_000L * inputs;
      }
    };
  }

  /** A pool of 16 at 2 ms + 5 us an input that drops to 1 from 4 s to 7 s. */
  static Downstream dropping() {
    return new Downstream() {
      @Override
      int capacity(long t) {
        return t >= 4 * SEC && t < 7 * SEC ? 1 : 16;
      }

      @Override
      long cost(long t, int inputs, int busy, SplittableRandom rnd) {
        return 2 * MS + 5_000L * inputs;
      }
    };
  }

  static Case[] cases() {
    return new Case[] {
      // Flat up to 16 calls at once, then each call slower by the square of the excess share.
      new Case("knee", () -> new Downstream() {
        @Override
        long cost(long t, int inputs, int busy, SplittableRandom rnd) {
          double x = Math.max(1, busy / 16.0);
          return (long) (2 * MS * x * x);
        }
      }, () -> run(256, 40_000, 10), new int[] {16, 24}),
      new Case("knee-over", () -> new Downstream() {
        @Override
        long cost(long t, int inputs, int busy, SplittableRandom rnd) {
          double x = Math.max(1, busy / 16.0);
          return (long) (2 * MS * x * x);
        }
      }, () -> run(256, 70_000, 10), new int[] {16, 24}),
      // A remote downstream: 50 ms round trip, no capacity bound.
      new Case("remote", OutsideShapesReport::remote, () -> run(1024, 20_000, 20), new int[] {128, 256}),
      new Case("remote-light", OutsideShapesReport::remote, () -> run(1024, 2_000, 20), new int[] {32, 256}),
      // 90% of calls 2 ms, 10% 40 ms, whatever the load; a pool of 16.
      new Case("bimodal", () -> new Downstream() {
        @Override
        int capacity(long t) {
          return 16;
        }

        @Override
        long cost(long t, int inputs, int busy, SplittableRandom rnd) {
          return rnd.nextInt(10) == 0 ? 40 * MS : 2 * MS;
        }
      }, () -> run(256, 11_000, 10), new int[] {16, 32}),
      // Cost per call constant whatever the batch, and cost linear in the batch; a pool of 8.
      new Case("per-call", () -> pool(8, 2 * MS, 0), () -> run(64, 16_000, 10), new int[] {8, 16}),
      new Case("per-input", () -> pool(8, 0, 250_000L), () -> run(64, 16_000, 10), new int[] {8, 16}),
      // A pool of 16 that drops to 1 from 4 s to 7 s.
      new Case("drop", OutsideShapesReport::dropping, () -> run(64, 3_000, 12), new int[] {1, 16}),
      new Case("drop-busy", OutsideShapesReport::dropping, () -> run(256, 30_000, 12), new int[] {16, 32}),
      // 30% of calls refused at once (0.1 ms); a pool of 16.
      new Case("fail30", OutsideShapesTest::failingAThird, () -> run(256, 30_000, 10), new int[] {16, 32}),
      // A pool growing from 2 to 32 over a minute.
      new Case("ramp", () -> new Downstream() {
        @Override
        int capacity(long t) {
          return (int) Math.min(32, 2 + 30 * t / (60 * SEC));
        }

        @Override
        long cost(long t, int inputs, int busy, SplittableRandom rnd) {
          return 2 * MS + 5_000L * inputs;
        }
      }, () -> {
        Run r = run(512, 100_000, 60);
        r.band = t -> {
          int p = (int) Math.min(32, 2 + 30 * Math.max(0, t - 2 * SEC) / (60 * SEC));
          return new int[] {p, 2 * Math.min(32, 2 + (int) (30 * t / (60 * SEC)))};
        };
        return r;
      }, new int[] {32}),
      // Calls 5x slower at the end of a minute than at its start (a pool of 16).
      new Case("drift", () -> OutsideShapesTest.drifting(true), () -> {
        Run r = run(256, 8_000, 60);
        r.band = t -> new int[] {16, 32};
        return r;
      }, new int[] {16, 32}),
      // At most 2,000 calls a second (a bucket of 20), the rest refused at once (0.2 ms).
      new Case("ratelimit", OutsideShapesTest::rateLimited, () -> run(256, 10_000, 10), new int[] {4, 8, 16}),
      new Case("max1", () -> pool(16, 2 * MS, 5_000L), () -> {
        Run r = run(64, 2_000, 10);
        r.maxInFlight = 1;
        return r;
      }, new int[] {1}),
      new Case("maxhuge", () -> pool(16, 2 * MS, 5_000L), () -> {
        Run r = run(256, 30_000, 10);
        r.maxInFlight = 1 << 20;
        return r;
      }, new int[] {16, 32}),
      new Case("batch1", () -> pool(16, 2 * MS, 5_000L), () -> {
        Run r = run(256, 6_000, 10);
        r.maxBatchSize = 1;
        return r;
      }, new int[] {16, 32}),
      new Case("batch1-over", () -> pool(16, 2 * MS, 5_000L), () -> {
        Run r = run(256, 9_000, 10);
        r.maxBatchSize = 1;
        return r;
      }, new int[] {16, 32}),
    };
  }

  @Test
  @EnabledIfSystemProperty(named = "ferry.outside", matches = ".+")
  void report() {
    String only = System.getProperty("ferry.outside");
    long seed = Long.getLong("ferry.outside.seed", 17);
    for (Case c : cases()) {
      if (!only.equals("all") && !java.util.Arrays.asList(only.split(",")).contains(c.name())) {
        continue;
      }
      Run r = c.run().get();
      r.seed = seed;
      OutsideShapes.Result learned = OutsideShapes.run(c.down().get(), r);
      System.out.println(c.name() + " learned: " + learned);
      System.out.println(c.name() + "   trace: " + learned.trace);
      for (int pin : c.pins()) {
        Run p = c.run().get();
        p.seed = seed;
        p.pinned = Math.min(pin, p.maxInFlight > 0 ? p.maxInFlight : 256);
        System.out.println(c.name() + " pinned " + pin + ": " + OutsideShapes.run(c.down().get(), p));
      }
    }
  }
}
