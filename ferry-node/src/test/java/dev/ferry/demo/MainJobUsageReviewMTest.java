package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Review M: the usage text said --no-compare skips "the run without Ferry", while the job (and the
 * main-job guide) skip the fixed-slots run too; and that --warmup is how long the load warms up,
 * while it is one round, repeated up to 4 times while the JIT still compiles.
 */
class MainJobUsageReviewMTest {
  @Test
  void theUsageTextSaysWhatNoCompareAndWarmupDo() {
    String noCompare = JobOptions.USAGE.lines().filter(l -> l.contains("--no-compare")).findFirst().orElseThrow();
    assertTrue(noCompare.contains("fixed-slots") && noCompare.contains("unbatched"), noCompare);
    String warmup = JobOptions.USAGE.lines().filter(l -> l.contains("--warmup")).findFirst().orElseThrow();
    assertTrue(warmup.contains("round") && warmup.contains("4"), warmup);
  }
}
