package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.ferry.InvalidConfigException;
import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Review AD: the operator surface (config errors, health, the monitoring endpoint) reviewed again. */
class ReviewADOpsTest extends VerticleTestBase {

  /**
   * A FerryVerticle config whose per-key fields are past their Java type named the type's range
   * ("must be from -2147483648 to 2147483647"), not the field's rule; and a port or frame bound past
   * a long named a long's (review AB had fixed them only up to a long). Each now names its own
   * rule, with the value as given, all in one error.
   */
  @Test
  void aFieldPastItsTypeNamesItsOwnRule() {
    JsonObject json = config(new JsonObject()
        .put("maxBatchSize", 3_000_000_000L)
        .put("callTimeoutMs", 1e30)
        .put("monitoring", new JsonObject().put("port", 1e30))
        .put("bridge", new JsonObject().put("port", 9_000).put("maxFrameBytes", -1e30)));
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> VerticleConfig.read(json));
    assertEquals(List.of(
        "bridge.maxFrameBytes = -1.0E30: must be 4096 to 1073741824",
        "callTimeoutMs = 1.0E30: must be >= 1 and <= 9223372036854",
        "maxBatchSize = 3000000000: must be >= 1 and <= 2147483647",
        "monitoring.port = 1.0E30: must be 0-65535"),
        e.violations().stream().sorted().toList(), e.getMessage());
    assertFalse(e.getMessage().contains("must be from"), e.getMessage());
  }

  /**
   * Against a downstream that hangs, a call failed its callers at callTimeoutMs but counted toward
   * {@code degraded} only when it ended, at the HTTP downstream's own timeout (here a minute): the
   * node read UP all that while, every input answered 502. Now the five calls count as their
   * callers fail, and once more when they end does not count them twice.
   */
  @Test
  void aCallPastItsTimeoutCountsTowardDegradedAtItsTimeout() {
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> { }); // never answers
    int n = Operations.DEGRADED_AFTER;
    deploy(new JsonObject()
        .put("downstream", new JsonObject().put("type", "http").put("url", server.url()).put("timeoutMs", 60_000))
        .put("callTimeoutMs", 200)
        .put("pinnedLimit", n)); // n calls at once: n connections, each hung
    assertEquals("UP", health().getString("status"));
    List<Future<Message<Object>>> sent = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      sent.add(send("k" + i, i));
    }
    for (Future<Message<Object>> reply : sent) {
      assertEquals(502, code(reply)); // at callTimeoutMs; the calls are still in flight
    }
    JsonObject hung = health();
    assertEquals("DOWN", hung.getString("status"), hung.encode());
    assertEquals(n, data(hung).getInteger("failedBatchesInARow", -1), hung.encode());
    // The calls end (their connections closed): failed, counted already.
    for (int i = 0; i < n; i++) {
      await(server.request(i)).socket().close();
    }
    metricsUntil(m -> m.getLong("inFlightBatches") == 0);
    JsonObject ended = health();
    assertEquals("DOWN", ended.getString("status"), ended.encode());
    assertEquals(n, data(ended).getInteger("failedBatchesInARow", -1), ended.encode());
  }

  /**
   * The monitoring server had no idle timeout: a client that connected and never sent a byte held
   * its connection (and a file descriptor) for ever, and so did as many more as it opened. The
   * server now closes a connection idle for {@link MeterSupport#IDLE_TIMEOUT_MS}, lowered here;
   * the test waits for the close (a read that ends), bounded at 10 s, not for a time. (The other
   * tests' GETs show that clients that ask are answered, at the real timeout: at this one a slow
   * health check may outlast it.)
   */
  @Test
  void theMonitoringServerClosesAConnectionThatSendsNothing() throws Exception {
    MeterSupport.idleTimeoutMs = 300;
    try {
      int port = TestPorts.free();
      deploy(config(new JsonObject().put("monitoring", new JsonObject().put("port", port))));
      try (java.net.Socket silent = new java.net.Socket("127.0.0.1", port)) {
        silent.setSoTimeout(10_000);
        assertEquals(-1, silent.getInputStream().read(), "the server closed the idle connection");
      }
    } finally {
      MeterSupport.idleTimeoutMs = MeterSupport.IDLE_TIMEOUT_MS;
    }
  }

  private static JsonObject data(JsonObject health) {
    return health.getJsonArray("checks").getJsonObject(0).getJsonObject("data");
  }
}
