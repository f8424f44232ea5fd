package dev.ferry.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * The seeds of a randomized test, and how a failure names its seed: every run of a test can be
 * replayed alone with {@code -Dferry.seed=N}.
 */
public final class Seeds {
  private Seeds() {}

  /** {@code count} seeds ({@code step}, twice {@code step}, ...), or only the one given by {@code -Dferry.seed}. */
  public static List<Long> of(int count, long step) {
    String one = System.getProperty("ferry.seed");
    if (one != null) {
      return List.of(Long.parseLong(one));
    }
    List<Long> seeds = new ArrayList<>();
    for (long s = 1; s <= count; s++) {
      seeds.add(s * step);
    }
    return seeds;
  }

  /** Runs {@code run}, the test of {@code seed}; a failed assertion names the seed and how to rerun it. */
  public static void check(long seed, Runnable run) {
    try {
      run.run();
    } catch (AssertionError e) {
      throw new AssertionError("seed " + seed + " (rerun with -Dferry.seed=" + seed + "): " + e.getMessage(), e);
    }
  }
}
