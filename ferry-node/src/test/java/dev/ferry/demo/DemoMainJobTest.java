package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The main job end to end, in process, with tiny options: every submission is answered in every
 * run and the database matches what the callers were told. Asserts counts and consistency, never
 * timing.
 */
class DemoMainJobTest {

  /** The default path: embedded PostgreSQL, a warm-up, the run through Ferry and the one without. */
  @Test
  void aShortRunOnPostgresAnswersEverySubmissionWithAndWithoutFerry(@TempDir Path dir) throws Exception {
    Path html = dir.resolve("nested").resolve("report.html");
    JobOptions options = JobOptions.parse("--duration", "1500ms", "--warmup", "500ms", "--hot", "2", "--quiet", "50",
        "--rate", "2000", "--quiet-rate", "200", "--import-window", "200", "--seed", "7", "--no-progress",
        "--report", html.toString());
    assertEquals(JobOptions.StoreKind.PG, options.store());
    Outcome o = run(options);

    // Ferry with the defaults (adaptive dispatch), with the seeds' fixed slots, and the run without Ferry
    assertEquals(3, o.job.runs().size(), o.printed);
    RunReport ferry = o.job.ferry();
    assertAnsweredAndConsistent(ferry, options, o.printed);
    // Every input that was not refused by the ferry itself was carried to the store, exactly once.
    assertEquals(ferry.inputs() - ferry.rejected() - ferry.other(), ferry.carried(), o.printed);
    assertEquals(ferry.calls(), ferry.busyCalls() + ferry.quietCalls(), o.printed);

    RunReport fixed = o.job.runs().get(1);
    assertEquals(MainJob.FIXED_SLOTS_RUN, fixed.label());
    assertAnsweredAndConsistent(fixed, options, o.printed);
    assertEquals(fixed.calls(), fixed.busyCalls() + fixed.quietCalls(), o.printed);
    RunReport unbatched = o.job.runs().get(o.job.runs().size() - 1);
    assertEquals("unbatched", unbatched.label());
    assertAnsweredAndConsistent(unbatched, options, o.printed);
    assertEquals(unbatched.inputs(), unbatched.calls(), "one call per input: " + o.printed);
    assertEquals(unbatched.calls(), unbatched.carried(), o.printed);

    // Both modes warm up before any measured run, each in rounds until the JIT settles, the
    // default last (right before it is measured).
    assertEquals(java.util.List.of("warm-up, fixed slots", "warm-up, Ferry"),
        o.job.warmups().stream().map(r -> r.label().replaceAll(" \\(\\d\\)$", "")).distinct().toList(), o.printed);
    assertTrue(o.job.warmups().size() <= 2 * MainJob.MAX_WARMUP_ROUNDS, o.printed);
    for (int i = 0; i + 1 < o.job.warmups().size(); i++) {
      RunReport round = o.job.warmups().get(i);
      boolean sameMode = o.job.warmups().get(i + 1).label().startsWith(round.label().replaceAll(" \\(\\d\\)$", ""));
      // A mode gets another round exactly when the JIT still compiled for 5% of the last one,
      // unless that was its last round.
      boolean last = round.label().endsWith("(" + MainJob.MAX_WARMUP_ROUNDS + ")");
      assertEquals(sameMode, MainJob.jitStillCompiling(round) && !last, o.printed);
    }
    for (RunReport warmup : o.job.warmups()) {
      assertTrue(warmup.inputs() > 0 && warmup.ok(), o.printed);
    }
    assertTrue(o.job.storeRoundTripP50Ms() > 0, o.printed);
    assertTrue(o.job.ok(), o.printed);
    assertTrue(o.printed.contains("embedded PostgreSQL"), o.printed);
    assertTrue(o.printed.contains("warm-up, fixed slots (not in the table)"), o.printed);
    assertTrue(o.printed.contains("warm-up, Ferry (not in the table)"), o.printed);
    assertTrue(o.printed.contains("Ferry") && o.printed.contains("unbatched"), o.printed);
    assertTrue(o.printed.contains("quiet p50 / store round trip"), o.printed);
    assertTrue(o.printed.contains("report: " + html.toAbsolutePath().normalize()), o.printed);
    String page = Files.readString(html);
    assertTrue(page.contains("uPlot") && page.contains("\"label\":\"unbatched\""), "the report holds the runs");
  }

  /** H2 in this JVM, the Ferry run alone, no warm-up, no report. */
  @Test
  void aShortRunOnH2WithoutComparisonOrReport() throws Exception {
    JobOptions options = JobOptions.parse("--store", "h2", "--duration", "1s", "--warmup", "0", "--hot", "2",
        "--quiet", "30", "--rate", "1000", "--quiet-rate", "100", "--no-compare", "--no-report", "--no-progress");
    Outcome o = run(options);
    assertEquals(1, o.job.runs().size(), o.printed);
    assertTrue(o.job.warmups().isEmpty(), o.printed);
    assertNull(o.job.html(), o.printed);
    assertAnsweredAndConsistent(o.job.ferry(), options, o.printed);
    assertTrue(o.job.ok(), o.printed);
    assertTrue(o.printed.contains("embedded H2"), o.printed);
    assertFalse(o.printed.contains("report:"), o.printed);
  }

  private record Outcome(JobReport job, String printed) {}

  private static Outcome run(JobOptions options) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    JobReport job;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      job = MainJob.run(options, out);
    }
    return new Outcome(job, bytes.toString(StandardCharsets.UTF_8));
  }

  private static void assertAnsweredAndConsistent(RunReport run, JobOptions options, String printed) {
    assertTrue(run.busyInputs() > 0, printed);
    assertTrue(run.quietInputs() > 0, printed);
    assertEquals(0, run.unanswered(), printed);
    assertEquals(run.inputs(), run.acknowledged() + run.refused() + run.rejected() + run.failed() + run.other(), printed);
    assertTrue(run.acknowledged() > 0, printed);
    assertTrue(run.mismatches().isEmpty(), printed);
    // Every account the load touched, and every fresh account of the one-input calls made
    // straight to the store beside it (the yardstick measured under the same load).
    assertTrue(run.storeProbes() > 0 && run.storeP50Ms() > 0, printed);
    assertEquals(options.hot() + options.quiet() + run.storeProbes(), run.accountsChecked() + run.accountsUnverifiable(),
        printed);
    assertTrue(run.ok(), printed);
  }

  @Test
  void optionsHaveDefaultsThatFinishWellUnderAMinute() {
    JobOptions d = JobOptions.parse();
    assertEquals(JobOptions.defaults(), d);
    // Three measured runs and two warm-ups (one per Ferry mode).
    assertTrue(d.duration().multipliedBy(3).plus(d.warmup().multipliedBy(2)).compareTo(Duration.ofSeconds(45)) <= 0);
    assertEquals(JobOptions.StoreKind.PG, d.store());
    assertTrue(d.compare());
    assertEquals(JobOptions.DEFAULT_REPORT, d.report());
    assertEquals(Duration.ofMillis(2500), JobOptions.parse("--duration=2.5s").duration());
    assertEquals(Duration.ofMinutes(1), JobOptions.parse("--duration", "1m").duration());
    assertEquals(Duration.ZERO, JobOptions.parse("--warmup", "0").warmup());
    assertEquals(JobOptions.StoreKind.H2, JobOptions.parse("--store=h2").store());
    assertEquals(Path.of("x.html"), JobOptions.parse("--report", "x.html").report());
    assertNull(JobOptions.parse("--no-report").report());
    assertFalse(JobOptions.parse("--no-compare").compare());
    assertEquals(300, JobOptions.parse("--duration", "300ms", "--rate", "300").rate());
    assertFalse(JobOptions.parse("--no-progress").progress());
    assertEquals(0, JobOptions.parse("--quiet", "0").quietRate(), "no quiet accounts, no quiet traffic");
  }

  @Test
  void badOptionsAreAllNamedInOneError() {
    JobOptions.BadOptions e = assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse(
        "--duration", "soon", "--hot", "0", "--rate", "fast", "--bogus", "--quiet-rate", "-1", "--store", "mysql",
        "--warmup", "later", "--seed"));
    String m = e.getMessage();
    assertTrue(m.contains("--duration soon: not a duration"), m);
    assertTrue(m.contains("--hot 0: must be between 1"), m);
    assertTrue(m.contains("--rate fast: not a whole number"), m);
    assertTrue(m.contains("--bogus: unknown option"), m);
    assertTrue(m.contains("--quiet-rate -1: must be between 0"), m);
    assertTrue(m.contains("--store mysql: must be pg or h2"), m);
    assertTrue(m.contains("--warmup later: not a duration"), m);
    assertTrue(m.contains("--seed: missing value"), m);
    assertTrue(assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse("--duration", "20m"))
        .getMessage().contains("must be between 100ms and 10m"));
    assertTrue(assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse("--warmup", "11m"))
        .getMessage().contains("--warmup 660s: must be between 0 and 10m"));
    assertTrue(assertThrows(JobOptions.BadOptions.class, () -> JobOptions.parse("--quiet", "0", "--quiet-rate", "5"))
        .getMessage().contains("needs quiet accounts"));
    assertThrows(JobOptions.HelpRequested.class, () -> JobOptions.parse("--help"));
  }
}
