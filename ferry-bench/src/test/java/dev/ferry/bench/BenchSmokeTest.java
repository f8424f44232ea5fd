package dev.ferry.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The harness still runs end to end: scenario 1 at --quick size produces its results, summary and
 * plot. Nothing is timed or compared here; benchmarks are not tests.
 */
class BenchSmokeTest {
  @Test
  void quickSaturationRunWritesResultsAndPlot(@TempDir Path out) throws Exception {
    System.setProperty("java.awt.headless", "true");
    List<Scenario.Row> rows = Bench.run(out, true, Set.of("s1"));
    assertFalse(rows.isEmpty());
    assertTrue(Files.size(out.resolve("results.json")) > 0);
    assertTrue(Files.size(out.resolve("summary.md")) > 0);
    assertTrue(Files.size(out.resolve("s1-saturation.png")) > 0);
  }
}
