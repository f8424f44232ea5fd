package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A run that answered nothing (a load too thin for its duration, such as --rate 1 --duration
 * 100ms --quiet 0, plans no input) has no length: its CPU row is undefined, not a hundred million
 * cores.
 */
class JobReportEmptyRunTest {

  /** The report of a job whose one run answered nothing. */
  static JobReport emptyRunReport() {
    RunReport empty = new RunReport("Ferry", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        Double.NaN, Double.NaN, Double.NaN, Double.NaN, 2.0, 3.0, 5, 0.0, 0, 9, 0, List.of(),
        0.11, 0.0, 0.1, new JsonObject());
    JobOptions options = JobOptions.parse("--store", "h2", "--no-compare", "--no-report");
    return new JobReport(options, "H2", List.of(), 1.0, 2.0, List.of(empty), null);
  }

  @Test
  void aRunWithoutAnyReplyShowsNoCpuFigure() {
    JobReport report = emptyRunReport();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    report.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String printed = bytes.toString(StandardCharsets.UTF_8);
    String cpu = printed.lines().filter(l -> l.startsWith("CPU, cores")).findFirst().orElseThrow();
    assertTrue(cpu.matches("CPU, cores \\(JVM \\+ database\\)\\s+-"), cpu);
  }

  /**
   * An HTML report that cannot be written at the end of the job (the path was checked up front,
   * then the disk filled) fails the job after the table is printed: it was written first, and its
   * failure lost every run's figures (review H).
   */
  @Test
  void aReportThatCannotBeWrittenAtTheEndLeavesTheTablePrinted() {
    JobReport report = emptyRunReport();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    UncheckedIOException full = new UncheckedIOException("cannot write the HTML report r.html",
        new IOException("No space left on device"));
    UncheckedIOException thrown = assertThrows(UncheckedIOException.class,
        () -> MainJob.finish(report, new PrintStream(bytes, true, StandardCharsets.UTF_8), () -> {
          throw full;
        }));
    assertSame(full, thrown);
    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(printed.lines().anyMatch(l -> l.startsWith("CPU, cores")), "the table was lost: " + printed);
  }
}
