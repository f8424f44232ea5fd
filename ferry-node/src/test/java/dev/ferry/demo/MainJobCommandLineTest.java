package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

  /**
   * A duration is a number with ms, s or m (or a bare number of seconds). Java's number syntax
   * also takes a type suffix: "1d" (one day, say) ran as one second, "5f" as five.
   */
  @Test
  void aDurationWithAnotherUnitIsNotADuration() {
    for (String value : new String[] {"1d", "5f", "2D", "0x1p3"}) {
      JobOptions.BadOptions e = assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse("--duration", value),
          "--duration " + value + " was accepted");
      assertTrue(e.getMessage().contains("--duration " + value + ": not a duration"), e.getMessage());
      assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse("--warmup", value),
          "--warmup " + value + " was accepted");
    }
  }

  /**
   * A report the job cannot write is a bad command line: it was found out only after every run,
   * when the job died with a stack trace instead of its table (a minute and more of load lost).
   */
  @Test
  void aReportPathThatCannotBeWrittenIsRefusedBeforeAnythingStarts(@TempDir Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve("a-file"), "not a folder");
    Path underAFile = file.resolve("report.html");
    JobOptions.BadOptions e = assertThrows(JobOptions.BadOptions.class,
        () -> JobOptions.parse("--report", underAFile.toString()), "a report under a regular file was accepted");
    assertTrue(e.getMessage().contains("--report " + underAFile + ": cannot be written"), e.getMessage());

    JobOptions.BadOptions folder = assertThrows(JobOptions.BadOptions.class,
        () -> JobOptions.parse("--report", dir.toString()), "a folder was accepted as the report file");
    assertTrue(folder.getMessage().contains("--report " + dir + ": cannot be written"), folder.getMessage());

    // A folder that does not exist yet is fine: the job creates it.
    JobOptions.parse("--report", dir.resolve("new").resolve("deeper").resolve("r.html").toString());
  }

  /**
   * An option given twice ran with the last value, silently: a user who added {@code --rate 500}
   * to a command line that already had {@code --rate=20000} further on measured another load
   * than the one they read.
   */
  @Test
  void anOptionGivenTwiceIsRefusedNamingIt() {
    JobOptions.BadOptions e = assertThrows(JobOptions.BadOptions.class,
        () -> JobOptions.parse("--rate", "500", "--hot", "4", "--rate=20000"), "a repeated --rate was accepted");
    org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("--rate: given twice"), e.getMessage());
    // Different options, each once, are fine.
    JobOptions.parse("--rate", "500", "--hot", "4");
  }
}
