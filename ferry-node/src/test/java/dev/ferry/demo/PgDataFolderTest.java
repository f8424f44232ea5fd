package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The main job's embedded PostgreSQL data folder (some 42 MB once initialised) does not outlive a
 * start that failed: the job then runs on H2, and the folder was left in the temporary folder
 * (a hostile review).
 */
class PgDataFolderTest {
  @TempDir
  Path parent;

  @Test
  void aServerThatDoesNotStartLeavesNoDataFolderBehind() throws Exception {
    // No binaries for this platform, as on one the bundled ones do not cover: the start fails at
    // once, before any process runs (the vertx is never reached).
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> Database.Pg.start(null, 1, parent, b -> b.setPgBinaryResolver((system, machine) -> null)));
    assertTrue(e.getMessage().startsWith("the embedded PostgreSQL server did not start"), e.getMessage());
    try (Stream<Path> left = Files.list(parent)) {
      assertEquals(List.of(), left.toList(), "the data folder of a server that never started is still there");
    }
  }

  /**
   * Binaries the library cannot unpack or read (a read-only or full cache folder) fail its class's
   * static set-up: an ExceptionInInitializerError, and a NoClassDefFoundError at every later try.
   * Neither is an exception, so the start let it through and the job died with a stack trace
   * instead of running on H2 (review I).
   */
  @Test
  void binariesThatFailTheLibrarysSetUpAreAFailedStartToo() throws Exception {
    for (LinkageError broken : List.of(
        new ExceptionInInitializerError(new java.io.IOException("cannot unpack the binaries")),
        new NoClassDefFoundError("Could not initialize class io.zonky.test.db.postgres.embedded.EmbeddedPostgres"))) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> Database.Pg.start(null, 1, parent, b -> {
        throw broken;
      }));
      assertTrue(e.getMessage().startsWith("the embedded PostgreSQL server did not start: "), e.getMessage());
      assertTrue(!e.getMessage().endsWith("null"), "says why: " + e.getMessage());
      try (Stream<Path> left = Files.list(parent)) {
        assertEquals(List.of(), left.toList(), "the data folder of a server that never started is still there");
      }
    }
  }
}
