package dev.ferry.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code java -jar target/ferry.jar} starts through {@link NodeLauncher}: a mistyped {@code -conf} path stops it at once. */
class NodeJarIT {
  @TempDir
  Path dir;

  @Test
  void aMistypedConfPathStopsTheJarWithTheUsageCode() throws Exception {
    Assumptions.assumeTrue(System.getProperty("ferry.jar") != null, "run by failsafe: mvn verify");
    Path out = dir.resolve("out.txt");
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-jar", System.getProperty("ferry.jar"), "-conf", "conf/ferry.jsn")
        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the node did not stop");
    String text = Files.readString(out);
    assertEquals(2, p.exitValue(), text);
    assertTrue(text.contains("ferry: -conf conf/ferry.jsn: no such file"), text);
  }

  /** The launcher is a subclass of Vert.x's: it finds the manifest's Main-Verticle and deploys it. */
  @Test
  void aGoodConfDeploysTheMainVerticle() throws Exception {
    Assumptions.assumeTrue(System.getProperty("ferry.jar") != null, "run by failsafe: mvn verify");
    Path conf = Files.writeString(dir.resolve("ferry.json"),
        "{\"downstream\": {\"type\": \"eventbus\", \"address\": \"ferry.downstream\"}}");
    Path out = dir.resolve("out.txt");
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-jar", System.getProperty("ferry.jar"), "-conf", conf.toString())
        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
    try {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!Files.readString(out).contains("Succeeded in deploying verticle")) {
        assertTrue(p.isAlive(), "the node stopped: " + Files.readString(out));
        assertTrue(System.nanoTime() < until, "not deployed within 60 s: " + Files.readString(out));
        Thread.sleep(100); // a test thread waiting for another process, not an event loop
      }
    } finally {
      p.destroy();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
