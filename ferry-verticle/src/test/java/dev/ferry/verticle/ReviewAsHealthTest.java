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
 * ferry.metrics} and health (ADR 0170); and health's stall latches when it held, not only when
 * someone asked while it did (ADR 0171). Real time for the calls, health's own clock moved by hand ({@link Operations#clock}) where
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

  /**
   * A hung call holds the only slot past its timeout; a callTimeoutMs later an input waits behind
   * it and reaches its own deadline (504). Nobody asked for health while it waited. Health asked
   * afterwards read UP (nothing waits now), although the stall held exactly as in the AQ case
   * where an answer in between latched it: which answer a load balancer got hung on whether
   * someone else had asked before. It now reads degraded, and stays so until a call is served.
   */
  @Test
  void aStallNobodyAskedAboutWhileItHeldReadsDegradedAfterwards() {
    manualClock();
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      if (r.index() > 0) {
        r.socket().write(HostileHttpServer.ok(r.input(0)));
      }
    });
    deployHttp(server);
    assertEquals(502, code(send("a", 1))); // at callTimeoutMs; the call holds the only slot
    advanceMs(CALL_TIMEOUT_MS); // health's clock: the stall has lasted callTimeoutMs
    assertEquals(504, code(send("b", 2, "timeout-ms", "200")), "waited behind the hung call, unsent");
    JsonObject h = health();
    assertEquals("degraded", data(h).getString("state"), h.encode());
    assertEquals(1, data(h).getInteger("callsPastTimeout"), h.encode());
    // The hung call ends, failed: still no call served, still degraded.
    await(server.request(0)).socket().close();
    metricsUntil(m -> m.getInteger("inFlightBatches") == 0);
    assertEquals("degraded", data(health()).getString("state"));
    assertEquals(3, answeredDespiteSlowness("c", 3));
    JsonObject up = health();
    assertEquals("UP", up.getString("status"), up.encode());
  }
}
