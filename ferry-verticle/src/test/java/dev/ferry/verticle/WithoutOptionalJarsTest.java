package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * ferry-verticle without its optional jars (Hazelcast, Micrometer, Prometheus, Vert.x Web, the
 * TCP bridge), as a user who asked for none of them has it: a plain node deploys and answers, and
 * enabling monitoring fails the deployment with a message naming the jars. Runs {@link
 * LeanNodeMain} in a child JVM on this test's class path minus those jars.
 */
class WithoutOptionalJarsTest {
  /** Path fragments of the optional jars and what only they pull in. */
  private static final List<String> OPTIONAL = List.of("/com/hazelcast/", "/vertx-hazelcast/", "/io/micrometer/",
      "/vertx-micrometer-metrics/", "/io/prometheus/", "/org/hdrhistogram/", "/org/latencyutils/", "/vertx-web/",
      "/vertx-tcp-eventbus-bridge/");

  @Test
  void aPlainNodeRunsWithoutThemAndMonitoringNamesWhatIsMissing() throws Exception {
    String full = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    String lean = Arrays.stream(full.split(File.pathSeparator))
        .filter(entry -> OPTIONAL.stream().noneMatch(entry.replace('\\', '/')::contains))
        .collect(Collectors.joining(File.pathSeparator));
    assertTrue(lean.length() < full.length(), "nothing was removed from the class path: " + full);
    Path out = Files.createTempFile("lean-node", ".log");
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", lean, LeanNodeMain.class.getName()));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    // Generous: a JVM start on a loaded CI machine; the child exits by itself when done.
    assertTrue(p.waitFor(180, TimeUnit.SECONDS), "child JVM did not finish; output in " + out);
    String log = Files.readString(out, StandardCharsets.UTF_8);
    Map<String, String> found = new HashMap<>();
    for (String line : log.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0 && !line.startsWith(" ")) {
        found.putIfAbsent(line.substring(0, eq), line.substring(eq + 1).trim());
      }
    }
    assertEquals(0, p.exitValue(), log);
    assertEquals("true", found.get("web-absent"), log);
    assertEquals("true", found.get("hazelcast-absent"), log);
    assertEquals("hello", found.get("submit"), log);
    String monitoring = found.get("monitoring");
    assertTrue(monitoring != null && monitoring.contains("monitoring: needs io.vertx:vertx-web")
        && monitoring.contains("io.vertx:vertx-micrometer-metrics"), log);
    Files.deleteIfExists(out);
  }
}
