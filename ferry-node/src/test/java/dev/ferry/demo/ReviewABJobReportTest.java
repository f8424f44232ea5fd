package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Review AB: the table's last lines for a run without quiet traffic. */
class ReviewABJobReportTest {

  /**
   * With {@code --quiet 0} the quiet keys have no latency: the table shows "-" for them, but the
   * targets line printed "quiet p99 / quiet p50 = NaN" and "= NaN against the round trip", a
   * figure of the program's own rather than a word a reader can take.
   */
  @Test
  void targetsWithoutQuietTrafficReadDashNotNaN() {
    RunReport run = new RunReport("Ferry", 100, 0, 100, 0, 0, 0, 0, 0, 10, 10, 100, 0, 0,
        2.0, 4.0, Double.NaN, Double.NaN, 1.0, 2.0, 5, 1.0, 100, 6, 0, List.of(),
        0.5, 0.1, 0.1, new JsonObject());
    JobOptions options = JobOptions.parse("--store", "h2", "--no-compare", "--no-report", "--quiet", "0");
    JobReport report = new JobReport(options, "H2", List.of(), 1.0, 2.0, List.of(run), null);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    report.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String targets = bytes.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("targets"))
        .findFirst().orElseThrow();
    assertFalse(targets.contains("NaN"), targets);
    assertTrue(targets.contains("quiet p99 / quiet p50 = - "), targets);
  }
}
