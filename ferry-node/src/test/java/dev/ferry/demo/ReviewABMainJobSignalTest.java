package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review AB: the main job stopped with SIGTERM (or Ctrl-C) in the middle of a run, on embedded
 * PostgreSQL. It left nothing behind (the server's own shutdown hook stops it and deletes its
 * folder), but all it said was a PostgreSQL error, "terminating connection due to administrator
 * command", which reads as the database failing. It now says it was stopped, and that there is
 * no table and no report.
 */
class ReviewABMainJobSignalTest {

  @Test
  void aJobStoppedMidRunSaysSoAndLeavesNoServerBehind(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("out.txt");
    Path err = dir.resolve("err.txt");
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        // The server's data folder in this test's folder, so that its process is told apart from
        // any other main job's on the machine; its unpacked binaries where they are usually kept.
        "-Djava.io.tmpdir=" + dir,
        "-Dot.epg.working-dir=" + Path.of(System.getProperty("java.io.tmpdir"), "embedded-pg"),
        "-cp", System.getProperty("java.class.path"), MainJob.class.getName(),
        "--store", "pg", "--duration", "10m", "--warmup", "0", "--no-compare", "--no-progress", "--no-report",
        "--hot", "1", "--rate", "200", "--quiet", "10", "--quiet-rate", "10")
        .directory(dir.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    try {
      // The "Path:" line is printed once the database is up: the run is under way from then on.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (!Files.readString(out).contains("Path: ")) {
        assertTrue(p.isAlive(), "the job ended before its run: " + Files.readString(out) + Files.readString(err));
        assertTrue(System.nanoTime() < deadline, "no run within 90 s: " + Files.readString(out));
        Thread.sleep(50); // a spin here took a core from the job it waits for, on a 2-core CI machine
      }
      boolean onPg = Files.readString(out).contains("embedded PostgreSQL");
      // pg_ctl starts the server detached: it is no descendant of the job, found by its folder.
      List<ProcessHandle> servers = ProcessHandle.allProcesses()
          .filter(h -> h.info().arguments().map(a -> String.join(" ", a).contains(dir.toString())).orElse(false))
          .collect(Collectors.toList());

      p.destroy(); // SIGTERM
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the job did not stop on SIGTERM");
      String said = Files.readString(err);
      assertTrue(said.contains("the main job was stopped before it finished"), "no word of the stop: " + said);
      assertFalse(Files.readString(out).contains("consistent"), "a table after a stop");
      if (onPg) {
        assertFalse(servers.isEmpty(), "no server process seen under the job");
        for (ProcessHandle server : servers) {
          server.onExit().get(30, TimeUnit.SECONDS);
          assertFalse(server.isAlive(), "left running: " + server.info());
        }
        try (var left = Files.list(dir)) {
          List<Path> folders = left.filter(f -> f.getFileName().toString().startsWith("ferry-main-job-pg"))
              .collect(Collectors.toList());
          assertTrue(folders.isEmpty(), "data folder left behind: " + folders);
        }
      }
      assertEquals(143, p.exitValue(), said);
    } finally {
      p.destroyForcibly();
    }
  }
}
