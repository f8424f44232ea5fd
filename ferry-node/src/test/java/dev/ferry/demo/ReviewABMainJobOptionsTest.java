package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Review AB: command lines a careless user types, which the main job ran as something else. */
class ReviewABMainJobOptionsTest {

  /**
   * {@code --report --no-compare} (the file name forgotten) wrote the report to a file named
   * "--no-compare" and ran the comparison runs the user had just turned off: the next option was
   * taken for the file name. An option is never another option's value in the spaced form
   * ({@code --report=--odd-name} still says it on purpose).
   */
  @Test
  void theNextOptionIsNotAValue() {
    JobOptions.BadOptions e = assertThrows(JobOptions.BadOptions.class,
        () -> JobOptions.parse("--report", "--no-compare"), "--report took --no-compare for its file");
    assertTrue(e.getMessage().contains("--report: missing value"), e.getMessage());
    JobOptions.BadOptions d = assertThrows(JobOptions.BadOptions.class,
        () -> JobOptions.parse("--duration", "--hot", "5"));
    assertTrue(d.getMessage().contains("--duration: missing value"), d.getMessage());
    // A negative number is a value, not an option (refused for its range, not as missing).
    JobOptions.BadOptions n = assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse("--hot", "-3"));
    assertTrue(n.getMessage().contains("--hot -3: must be between"), n.getMessage());
  }

  /**
   * {@code --report x.html --no-report} ran with no report, {@code --no-report --report x.html}
   * with one: whichever came last, silently, as a repeated option did before it was refused.
   */
  @Test
  void reportAndNoReportTogetherAreRefused() {
    for (String[] args : new String[][] {{"--report", "x.html", "--no-report"}, {"--no-report", "--report=x.html"}}) {
      JobOptions.BadOptions e = assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse(args),
          String.join(" ", args) + " was accepted");
      assertTrue(e.getMessage().contains("--report and --no-report: give one"), e.getMessage());
    }
  }

  /**
   * A duration under half a millisecond rounded to zero: {@code --warmup 0.0004s} (or {@code 0.3ms}
   * written as seconds) ran with no warm-up at all, which zero means, instead of a short one.
   */
  @Test
  void aPositiveDurationThatRoundsToZeroIsRefused() {
    JobOptions.BadOptions e = assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse("--warmup", "0.0004s"),
        "--warmup 0.0004s ran without warm-up");
    assertTrue(e.getMessage().contains("--warmup 0.0004s: under 1ms"), e.getMessage());
    assertEquals(Duration.ZERO, JobOptions.parse("--warmup", "0").warmup());
    assertEquals(Duration.ZERO, JobOptions.parse("--warmup", "0.0s").warmup());
    assertEquals(Duration.ofMillis(1), JobOptions.parse("--warmup", "0.001s").warmup());
  }

  /**
   * The default report, target/main-job.html, was not checked up front as {@code --report} is:
   * run where {@code target} is a regular file (or cannot be written), the job ran every run and
   * then died with a stack trace and exit code 1. Now it is a bad command line, exit 2, before
   * anything starts.
   */
  @Test
  void theDefaultReportPathIsCheckedBeforeAnythingStarts(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("target"), "a file, not the build folder");
    Path out = dir.resolve("out.txt");
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), MainJob.class.getName(),
        "--store", "h2", "--duration", "100ms", "--warmup", "0", "--no-compare", "--no-progress",
        "--hot", "1", "--rate", "10", "--quiet", "0")
        .directory(dir.toFile()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the main job did not stop");
    String text = Files.readString(out);
    assertEquals(2, p.exitValue(), text);
    assertTrue(text.contains("target/main-job.html (the default report): cannot be written"), text);
    assertTrue(!text.contains("Ferry main job:"), "the job started: " + text);
  }

  /**
   * The usage text gave only a lower bound for the counts ("--hot N ... >= 1"), while the job
   * refuses more than 10,000 hot accounts, and so on: each line now gives the range the job
   * checks, which this test takes from the job's own refusal.
   */
  @Test
  void theUsageTextGivesEachRangeTheJobChecks() {
    for (String option : new String[] {"--hot", "--quiet", "--rate", "--quiet-rate", "--import-window"}) {
      JobOptions.BadOptions e = assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse(option, "-99999999"));
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("must be between (\\d+) and (\\d+)").matcher(e.getMessage());
      assertTrue(m.find(), e.getMessage());
      String range = m.group(1) + " to " + m.group(2);
      String line = JobOptions.USAGE.lines().filter(l -> l.trim().startsWith(option + " ")).findFirst().orElseThrow();
      assertTrue(line.contains(range), option + ": the usage says \"" + line.trim() + "\", the job checks " + range);
    }
  }
}
