package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Keys, payloads and a downstream's failure text come from outside: none of them may reach a log
 * line unescaped (a line break in a key once forged a SEVERE record).
 */
class FerryVerticleLogTest extends VerticleTestBase {
  private static final String FORGED = "\nSEVERE: forged record\r\n";
  /** Ferry's loggers all sit under {@code dev.ferry} (System.Logger maps to java.util.logging here). */
  private final Logger ferryLogs = Logger.getLogger("dev.ferry");
  private final LogCapture capture = new LogCapture(Level.ALL);
  private final List<String> lines = capture.lines;
  private Level levelBefore;

  @BeforeEach
  void captureLogs() {
    levelBefore = ferryLogs.getLevel();
    ferryLogs.setLevel(Level.ALL);
    ferryLogs.addHandler(capture);
  }

  @AfterEach
  void restoreLogs() {
    ferryLogs.removeHandler(capture);
    ferryLogs.setLevel(levelBefore);
  }

  @Test
  void keysPayloadsAndDownstreamTextNeverBreakALogLine() {
    deploy(config(new JsonObject().put("logPayloads", true)));
    String key = "k" + FORGED + "\u2028\u001b[31m\"";
    Future<Message<Object>> r = send(key, "payload" + FORGED);
    await(downstream.call(0)).fail(500, "database down" + FORGED);
    assertEquals(502, code(r));

    // The batch's warning and its debug line with the payloads: both logged, each one line.
    assertEquals(2, lines.size(), lines.toString());
    for (String line : lines) {
      assertFalse(line.contains("\n") || line.contains("\r") || line.contains("\u2028") || line.contains("\u001b"),
          "a raw control character reached the log: " + line);
    }
    String warning = lines.get(0);
    assertTrue(warning.contains("key \"k\\nSEVERE: forged record\\r\\n\\u2028\\u001b[31m\\\"\""), warning);
    assertTrue(warning.contains("database down\\nSEVERE"), warning);
    assertTrue(lines.get(1).contains("payload\\nSEVERE: forged record\\r\\n"), lines.get(1));
  }
}
