package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What a newcomer may type on the main job's command line, and what it must refuse up front. */
class MainJobCommandLineTest {

  /**
   * The smallest long is a number like any other: out of range for every bounded option. It was
   * taken for "already reported as malformed" and let through, then cast to 0 (--hot 0 divided by
   * zero on the load's context and the job hung).
   */
  @Test
  void theSmallestLongIsOutOfRangeNotAccepted() {
    String min = Long.toString(Long.MIN_VALUE);
    for (String option : new String[] {"--hot", "--quiet", "--rate", "--quiet-rate", "--import-window"}) {
      JobOptions.BadOptions e = assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse(option, min),
          option + " " + min + " was accepted");
      assertTrue(e.getMessage().contains(option + " " + min + ": must be between"), e.getMessage());
    }
  }
}
