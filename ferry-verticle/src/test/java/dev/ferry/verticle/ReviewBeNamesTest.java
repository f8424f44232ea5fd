package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Review BE: a verticle or node user set {@code callTimeoutMs}, yet the 502 at that timeout and the
 * WARNING line of the failed batch named {@code callTimeout}, the library builder's name, which is
 * in no config they wrote (ADR 0185). Both now name {@code callTimeoutMs}, whether the verticle was
 * deployed with a JSON config or with {@link FerryVerticleOptions}.
 */
class ReviewBeNamesTest extends VerticleTestBase {
  private final Logger ferryLogs = Logger.getLogger("dev.ferry");
  private final LogCapture capture = new LogCapture(Level.WARNING);

  @BeforeEach
  void captureLogs() {
    ferryLogs.addHandler(capture);
  }

  @AfterEach
  void releaseLogs() {
    ferryLogs.removeHandler(capture);
  }

  @Test
  void theCallTimeoutsAnswerAndLogLineNameCallTimeoutMsWithAJsonConfig() {
    HttpServer silent = await(vertx.createHttpServer().requestHandler(req -> { }).listen(0, "127.0.0.1"));
    deploy(new JsonObject().put("callTimeoutMs", 300).put("downstream", http(silent)));
    assertNamesCallTimeoutMs();
    await(silent.close());
  }

  @Test
  void theCallTimeoutsAnswerAndLogLineNameCallTimeoutMsWithOptions() {
    HttpServer silent = await(vertx.createHttpServer().requestHandler(req -> { }).listen(0, "127.0.0.1"));
    FerryVerticleOptions options = new FerryVerticleOptions(new JsonObject().put("downstream", http(silent)))
        .setCallTimeoutMs(300);
    await(vertx.deployVerticle(new FerryVerticle(options), new DeploymentOptions()));
    assertNamesCallTimeoutMs();
    await(silent.close());
  }

  /** An HTTP downstream whose own timeout is longer, so that the call timeout is the one that passes. */
  private static JsonObject http(HttpServer server) {
    return new JsonObject().put("type", "http").put("url", "http://127.0.0.1:" + server.actualPort() + "/batch")
        .put("timeoutMs", 20_000);
  }

  private void assertNamesCallTimeoutMs() {
    ReplyException failed = (ReplyException) failure(send("k", 1));
    assertEquals(502, failed.failureCode());
    assertEquals("the batch call did not complete within 300 ms (callTimeoutMs)", failed.getMessage());
    // Logged as the callers are failed, on the ferry's loop, before their replies are sent.
    List<String> warnings = capture.lines;
    assertEquals(1, warnings.size(), warnings.toString());
    assertTrue(warnings.get(0).endsWith("failed: java.util.concurrent.TimeoutException: the batch call did not"
        + " complete within 300 ms (callTimeoutMs); it may still be applied"), warnings.get(0));
  }
}
