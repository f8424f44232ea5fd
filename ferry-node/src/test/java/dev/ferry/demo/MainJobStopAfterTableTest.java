package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stop (SIGTERM) after the table is out, while the job shuts its database and Vert.x down, said
 * "stopped before it finished ... no table and no report" under the table the user had just read.
 * It now says the stop came after the table and that the figures stand.
 */
class MainJobStopAfterTableTest {

  static final String TABLE_OUT = "the test's job: table out, now shutting down";

  /** A JVM of its own: the stop message comes from a shutdown hook. Prints the table, then "shuts down" slowly. */
  public static void main(String[] args) {
    System.exit(MainJob.runSayingHow(() -> {
      MainJob.finish(JobReportEmptyRunTest.emptyRunReport(), System.out, null);
      System.out.println(TABLE_OUT);
      System.out.flush();
      Thread.sleep(TimeUnit.MINUTES.toMillis(5)); // stands for a database and a Vert.x that take long to close
      return true;
    }));
  }

  @Test
  void aStopAfterTheTableSaysTheFiguresStand(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("out.txt");
    Path err = dir.resolve("err.txt");
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), MainJobStopAfterTableTest.class.getName())
        .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!Files.readString(out).contains(TABLE_OUT)) {
        assertTrue(p.isAlive(), "the job ended early: " + Files.readString(out) + Files.readString(err));
        assertTrue(System.nanoTime() < deadline, "no table within 60 s: " + Files.readString(out));
        Thread.sleep(50);
      }
      p.destroy(); // SIGTERM
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the job did not stop on SIGTERM");
      String said = Files.readString(err);
      assertTrue(said.contains("stopped (SIGTERM or Ctrl-C) while it shut down, after its table was printed"), said);
      assertFalse(said.contains("no table"), said);
      assertEquals(143, p.exitValue(), said);
    } finally {
      p.destroyForcibly();
    }
  }
}
