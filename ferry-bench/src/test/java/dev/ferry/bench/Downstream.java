package dev.ferry.bench;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * One downstream shape and key mix of the adaptive-dispatch scenarios: a pool of {@code pool}
 * connections, a call costing {@code roundTripNanos + n x perInputNanos}, {@code keys} keys drawn
 * uniformly or Zipf(1.0), and the batch limit {@code maxBatchSize} every contender is given.
 */
record Downstream(String id, String title, int pool, long roundTripNanos, long perInputNanos, int keys, boolean zipf,
    int maxBatchSize) {

  /** The most inputs per second the generator is asked for: beyond it the load generator, not the contender, is measured. */
  static final double MAX_RATE = 30_000;

  /** Nominal capacity with full batches: pool x batch / call time (capped at {@link #MAX_RATE}). */
  double capacity() {
    double full = pool * (double) maxBatchSize / ((roundTripNanos + maxBatchSize * perInputNanos) / 1e9);
    return Math.min(full, MAX_RATE);
  }

  boolean capped() {
    return pool * (double) maxBatchSize / ((roundTripNanos + maxBatchSize * perInputNanos) / 1e9) > MAX_RATE;
  }

  String describe() {
    return String.format("pool %d, call %.2f ms + %.1f us/input, %,d keys %s, maxBatchSize %d", pool,
        roundTripNanos / 1e6, perInputNanos / 1e3, keys, zipf ? "Zipf(1.0)" : "uniform", maxBatchSize);
  }

  /** {@code count} key indexes, the same for every contender of a run (seeded). */
  int[] draw(int count, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    if (!zipf) {
      return random.ints(count, 0, keys).toArray();
    }
    double[] cdf = new double[keys];
    double sum = 0;
    for (int k = 0; k < keys; k++) {
      sum += 1.0 / (k + 1);
      cdf[k] = sum;
    }
    int[] out = new int[count];
    for (int i = 0; i < count; i++) {
      double u = random.nextDouble() * sum;
      int k = Arrays.binarySearch(cdf, u);
      out[i] = Math.min(keys - 1, k >= 0 ? k : -k - 1);
    }
    return out;
  }

  /** Share of the inputs that go to the hottest key. */
  double hottestShare() {
    if (!zipf) {
      return 1.0 / keys;
    }
    double sum = 0;
    for (int k = 0; k < keys; k++) {
      sum += 1.0 / (k + 1);
    }
    return 1 / sum;
  }
}
