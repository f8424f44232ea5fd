package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The main job end to end, in process, with tiny options: every submission is answered and the
 * database matches what the callers were told. Asserts counts and consistency, never timing.
 */
class DemoMainJobTest {

  @Test
  void aShortRunAnswersEverySubmissionAndLeavesTheDatabaseConsistent() throws Exception {
    JobOptions options = JobOptions.parse("--duration", "1500ms", "--hot", "2", "--quiet", "50",
        "--rate", "2000", "--quiet-rate", "200", "--import-window", "200", "--seed", "7", "--no-progress");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    JobReport report;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      report = MainJob.run(options, out);
    }
    String printed = bytes.toString(StandardCharsets.UTF_8);

    assertTrue(report.busyInputs() > 0, printed);
    assertTrue(report.quietInputs() > 0, printed);
    assertEquals(0, report.unanswered(), printed);
    assertEquals(report.inputs(),
        report.acknowledged() + report.refused() + report.rejected() + report.failed() + report.other(), printed);
    assertTrue(report.acknowledged() > 0, printed);
    // Every input that was not refused by the ferry itself was carried to the store, exactly once.
    assertEquals(report.inputs() - report.rejected() - report.other(), report.carried(), printed);
    assertEquals(report.calls(), report.busyCalls() + report.quietCalls(), printed);
    assertTrue(report.mismatches().isEmpty(), printed);
    assertEquals(options.hot() + options.quiet(), report.accountsChecked() + report.accountsUnverifiable(), printed);
    assertTrue(report.ok(), printed);
    assertTrue(printed.contains("consistent: yes"), printed);
    assertTrue(printed.contains("busy keys (2)") && printed.contains("quiet keys (50)"), printed);
  }

  @Test
  void optionsHaveDefaultsThatFinishWellUnderAMinute() {
    JobOptions d = JobOptions.parse();
    assertEquals(JobOptions.defaults(), d);
    assertTrue(d.duration().compareTo(Duration.ofSeconds(30)) <= 0);
    assertEquals(Duration.ofMillis(2500), JobOptions.parse("--duration=2.5s").duration());
    assertEquals(Duration.ofMinutes(1), JobOptions.parse("--duration", "1m").duration());
    assertEquals(300, JobOptions.parse("--duration", "300ms", "--rate", "300").rate());
    assertFalse(JobOptions.parse("--no-progress").progress());
    assertEquals(0, JobOptions.parse("--quiet", "0").quietRate(), "no quiet accounts, no quiet traffic");
  }

  @Test
  void badOptionsAreAllNamedInOneError() {
    JobOptions.BadOptions e = assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse(
        "--duration", "soon", "--hot", "0", "--rate", "fast", "--bogus", "--quiet-rate", "-1", "--seed"));
    String m = e.getMessage();
    assertTrue(m.contains("--duration soon: not a duration"), m);
    assertTrue(m.contains("--hot 0: must be between 1"), m);
    assertTrue(m.contains("--rate fast: not a whole number"), m);
    assertTrue(m.contains("--bogus: unknown option"), m);
    assertTrue(m.contains("--quiet-rate -1: must be between 0"), m);
    assertTrue(m.contains("--seed: missing value"), m);
    assertTrue(assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse("--duration", "20m"))
        .getMessage().contains("must be between 100ms and 10m"));
    assertTrue(assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse("--quiet", "0", "--quiet-rate", "5"))
        .getMessage().contains("needs quiet accounts"));
    assertThrows(JobOptions.HelpRequested.class, () -> JobOptions.parse("--help"));
  }
}
