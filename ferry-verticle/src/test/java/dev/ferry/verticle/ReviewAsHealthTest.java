package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review AS: the calls past their timeout are one count, the ferry's, read alike by {@code
 * ferry.metrics} and health (ADR 0170). Real time for the calls, health's own clock moved by hand ({@link Operations#clock}) where
 * the point is time passing.
 */
class ReviewAsHealthTest extends VerticleTestBase {
  private static final int CALL_TIMEOUT_MS = 500;
  private final AtomicLong now = new AtomicLong(1_000_000_000L);

  @AfterEach
  void realClockAgain() {
    Operations.clock = System::nanoTime;
  }

  private void manualClock() {
    Operations.clock = now::get;
  }

  private void advanceMs(long ms) {
    now.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
  }

  private static JsonObject data(JsonObject health) {
    return health.getJsonArray("checks").getJsonObject(0).getJsonObject("data");
  }

  /** An HTTP downstream whose own timeout (a minute) is far past callTimeoutMs, behind one call slot. */
  private void deployHttp(HostileHttpServer server) {
    deploy(new JsonObject()
        .put("downstream", new JsonObject().put("type", "http").put("url", server.url()).put("timeoutMs", 60_000))
        .put("callTimeoutMs", CALL_TIMEOUT_MS)
        .put("pinnedLimit", 1));
  }

  /**
   * A call hangs past its timeout; {@code ferry.metrics} says so as health does, from the same count
   * (health's own copy of it is gone), and both say 0 once it ends.
   */
  @Test
  void theMetricsAnswerAndHealthSayTheSameCallsPastTimeout() {
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> { }); // never answers
    deployHttp(server);
    assertEquals(0, metrics().getInteger("callsPastTimeout"), "the field is there at 0 too");
    assertEquals(502, code(send("a", 1))); // at callTimeoutMs; the call stays on the wire
    JsonObject m = metricsUntil(x -> x.getInteger("callsPastTimeout") == 1);
    assertEquals(1, m.getInteger("inFlightBatches"), m.encode());
    JsonObject h = health();
    assertEquals(1, data(h).getInteger("callsPastTimeout"), h.encode());
    assertEquals(1, data(h).getJsonObject("metrics").getInteger("callsPastTimeout"), h.encode());
    await(server.request(0)).socket().close();
    metricsUntil(x -> x.getInteger("callsPastTimeout") == 0 && x.getInteger("inFlightBatches") == 0);
  }
}
