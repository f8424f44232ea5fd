package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
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

  @Test
  void aRunWithoutAnyReplyShowsNoCpuFigure() {
    RunReport empty = new RunReport("Ferry", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        Double.NaN, Double.NaN, Double.NaN, Double.NaN, 2.0, 3.0, 5, 0.0, 0, 9, 0, List.of(),
        0.11, 0.0, 0.1, new JsonObject());
    JobOptions options = JobOptions.parse("--store", "h2", "--no-compare", "--no-report");
    JobReport report = new JobReport(options, "H2", List.of(), 1.0, 2.0, List.of(empty), null);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    report.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String printed = bytes.toString(StandardCharsets.UTF_8);
    String cpu = printed.lines().filter(l -> l.startsWith("CPU, cores")).findFirst().orElseThrow();
    assertTrue(cpu.matches("CPU, cores \\(JVM \\+ database\\)\\s+-"), cpu);
  }
}
