package dev.ferry.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's launcher stops on a JSON option it cannot read, instead of deploying with an empty
 * config as Vert.x's launcher does (a mistyped {@code -conf} path then failed on "downstream:
 * missing", a hostile review's find).
 */
class NodeLauncherTest {
  @TempDir
  Path dir;

  @Test
  void aConfThatIsNeitherAFileNorJsonIsNamedWithItsReason() throws Exception {
    Path notAnObject = Files.writeString(dir.resolve("array.json"), "[1, 2]");
    Path broken = Files.writeString(dir.resolve("broken.json"), "{\"maxBatchSize\": ");

    String missing = NodeLauncher.problem(new String[] {"-conf", "conf/ferry.jsn"});
    assertNotNull(missing);
    assertTrue(missing.startsWith("-conf conf/ferry.jsn: no such file"), missing);
    assertTrue(NodeLauncher.problem(new String[] {"-conf", notAnObject.toString()}).contains("does not hold a JSON object"));
    assertTrue(NodeLauncher.problem(new String[] {"--conf=" + broken}).contains("does not hold a JSON object"));
    assertTrue(NodeLauncher.problem(new String[] {"-conf", "{\"maxBatchSize\": 5"}).contains("not a valid JSON object"));
    assertTrue(NodeLauncher.problem(new String[] {"-cluster", "-Options", "{metricsOptions"}).startsWith("-options "));
    assertTrue(NodeLauncher.problem(new String[] {"-deployment-options", dir.toString()}).contains("cannot read the file"));
  }

  @Test
  void readableOptionsAndOtherArgumentsPass() throws Exception {
    Path conf = Files.writeString(dir.resolve("ferry.json"), "{\"downstream\": {\"type\": \"eventbus\", \"address\": \"d\"}}");
    assertNull(NodeLauncher.problem(new String[] {}));
    assertNull(NodeLauncher.problem(new String[] {"-cluster", "-conf", conf.toString()}));
    assertNull(NodeLauncher.problem(new String[] {"-conf=" + conf, "-options", "{\"eventLoopPoolSize\": 2}"}));
    assertNull(NodeLauncher.problem(new String[] {"-instances", "1"}));
    assertNull(NodeLauncher.problem(new String[] {"-conf"}), "a missing value is the launcher's to report");
    // picocli expands an argument file (@path) before the launcher reads the option: not a path here.
    assertNull(NodeLauncher.problem(new String[] {"-conf", "@" + dir.resolve("args.txt")}), "an argument file");
  }

  /**
   * Review J: Vert.x's launcher reads the file as bytes, which Jackson decodes whatever the Unicode
   * encoding, a byte order mark included; the check read it as UTF-8 text, and stopped the node on
   * a config Vert.x reads: one saved with a BOM (Notepad, Windows PowerShell's Set-Content) or as
   * UTF-16 (Windows PowerShell's {@code >}).
   */
  @Test
  void aConfVertxReadsWithAByteOrderMarkOrAsUtf16Passes() throws Exception {
    String conf = "{\"downstream\": {\"type\": \"eventbus\", \"address\": \"d\"}}";
    Path bom = Files.writeString(dir.resolve("bom.json"), "\uFEFF" + conf);
    Path utf16 = Files.writeString(dir.resolve("utf16.json"), "\uFEFF" + conf, java.nio.charset.StandardCharsets.UTF_16LE);

    assertNull(NodeLauncher.problem(new String[] {"-conf", bom.toString()}));
    assertNull(NodeLauncher.problem(new String[] {"-conf", utf16.toString()}));
  }

  @Test
  void theJarsEntryPointExitsWithTheUsageCodeAndStartsNothing() throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), NodeLauncher.class.getName(), "-conf", "no/such/ferry.json")
        .redirectErrorStream(true).redirectOutput(dir.resolve("out.txt").toFile()).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the launcher did not stop");
    String out = Files.readString(dir.resolve("out.txt"));
    assertEquals(2, p.exitValue(), out);
    assertTrue(out.contains("ferry: -conf no/such/ferry.json: no such file"), out);
    assertTrue(!out.contains("Failed in deploying"), "a verticle was deployed: " + out);
  }
}
