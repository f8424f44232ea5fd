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
 * Review AC: the main job's stop message (review AB) is for a SIGTERM or Ctrl-C only. A run that
 * ends in an Error (an OutOfMemoryError, say) is a failure of the job: said as one, exit code 1,
 * not "stopped (SIGTERM or Ctrl-C)", which sent the user looking for who had stopped it.
 */
class ReviewAcMainJobErrorTest {

  /** A JVM of its own: the stop message comes from a shutdown hook, at that JVM's exit. */
  public static void main(String[] args) {
    System.exit(MainJob.runSayingHow(() -> {
      throw new OutOfMemoryError("review AC: an Error out of the run");
    }));
  }

  @Test
  void aRunEndingInAnErrorIsAFailureNotAStop(@TempDir Path dir) throws Exception {
    Path err = dir.resolve("err.txt");
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), ReviewAcMainJobErrorTest.class.getName())
        .redirectOutput(dir.resolve("out.txt").toFile()).redirectError(err.toFile()).start();
    try {
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the job did not end");
      String said = Files.readString(err);
      assertFalse(said.contains("the main job was stopped"), said);
      assertTrue(said.contains("the main job failed: java.lang.OutOfMemoryError"), said);
      assertEquals(1, p.exitValue(), said);
    } finally {
      p.destroyForcibly();
    }
  }
}
