package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review AO: with the call limit at one call, a node in front of a downstream that hangs read UP
 * for five call lifetimes (150 s with the defaults) while every input got 502. Health now also
 * judges in time (ADR 0172): no call served for a further callTimeoutMs after a failed call, with
 * work waiting. The first two tests run in real time and wait for events, not for a time; the
 * others move health's clock by hand ({@link Operations#clock}) where the point is time passing
 * with nothing happening.
 */
class ReviewAOHealthTest extends VerticleTestBase {
  private static final int CALL_TIMEOUT_MS = 500;
  /** Health's clock when a test sets it (nanoseconds). */
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

  /** An HTTP downstream whose own timeout (a minute) is far past callTimeoutMs, behind one call slot. */
  private void deployHttp(HostileHttpServer server, int limit) {
    deploy(new JsonObject()
        .put("downstream", new JsonObject().put("type", "http").put("url", server.url()).put("timeoutMs", 60_000))
        .put("callTimeoutMs", CALL_TIMEOUT_MS)
        .put("pinnedLimit", limit));
  }

  private static JsonObject data(JsonObject health) {
    return health.getJsonArray("checks").getJsonObject(0).getJsonObject("data");
  }

  /** Asks for health until it is DOWN (each round a real round trip); UP meanwhile. */
  private JsonObject healthUntilDown() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
    JsonObject h = health();
    while (!"DOWN".equals(h.getString("status"))) {
      assertEquals("up", data(h).getString("state"), h.encode());
      if (System.nanoTime() > deadline) {
        fail("the node never read DOWN: " + h.encode());
      }
      h = health();
    }
    return h;
  }

  /**
   * The one call slot is held by a call that hangs (HTTP timeoutMs a minute): its caller gets 502
   * at callTimeoutMs, the next input waits behind it. The node reads degraded a callTimeoutMs
   * later, long before the hung call ends (it read UP until four more such calls had ended). Then
   * UP again at the first call served.
   */
  @Test
  void aHungCallHoldingTheOnlySlotTurnsTheNodeDegradedLongBeforeItEnds() {
    // Requests after the first are answered at once.
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      if (r.index() > 0) {
        r.socket().write(HostileHttpServer.ok(r.input(0)));
      }
    });
    deployHttp(server, 1);
    assertEquals("UP", health().getString("status"));
    assertEquals(502, code(send("a", 1))); // at callTimeoutMs; the call still holds the slot
    Future<Message<Object>> waiting = send("b", 2);
    metricsUntil(m -> m.getInteger("queuedInputs") == 1);
    JsonObject h = healthUntilDown();
    assertEquals("degraded", data(h).getString("state"), h.encode());
    assertEquals(1, data(h).getInteger("failedBatchesInARow"), h.encode());
    assertEquals(1, data(h).getInteger("callsPastTimeout"), h.encode());
    assertTrue(data(h).getLong("failingForMs") >= CALL_TIMEOUT_MS, h.encode());
    assertEquals(1, metrics().getInteger("inFlightBatches"), "the hung call is still on the wire");
    // The hung call ends (failed, counted already); the next is served.
    await(server.request(0)).socket().close();
    settle60(waiting); // 2, or 502 on a machine slow enough
    assertEquals(3, answeredDespiteSlowness("c", 3));
    JsonObject up = health();
    assertEquals("UP", up.getString("status"), up.encode());
    assertFalse(data(up).containsKey("callsPastTimeout"), up.encode());
  }

  /**
   * The limit at one call, an event-bus downstream that never answers: each call ends at its
   * timeout, the next (whose input waited) starts then. Degraded at the second failure, a
   * callTimeoutMs after the first, not at the fifth.
   */
  @Test
  void callsThatEachEndAtTheirTimeoutTurnTheNodeDegradedAtTheSecond() {
    deploy(config(new JsonObject().put("callTimeoutMs", CALL_TIMEOUT_MS).put("pinnedLimit", 1)));
    Future<Message<Object>> first = send("a", 1);
    await(downstream.call(0));
    Future<Message<Object>> second = send("b", 2);
    metricsUntil(m -> m.getInteger("queuedInputs") == 1);
    assertEquals(502, code(first));
    assertEquals(502, code(second));
    JsonObject h = health();
    assertEquals("DOWN", h.getString("status"), h.encode());
    assertEquals("degraded", data(h).getString("state"), h.encode());
    assertEquals(2, data(h).getInteger("failedBatchesInARow"), h.encode());
  }

  /**
   * A downstream that serves, one of whose calls is lost (it hangs to the HTTP timeout, its key's
   * next input waiting behind it): other keys are served, so however long the lost call stays on
   * the wire, the node reads UP, and says how many calls are past their timeout.
   */
  @Test
  void oneLostCallOnADownstreamThatServesDoesNotTurnTheNodeDegraded() {
    manualClock();
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      if (!"a".equals(r.batch().getString("key"))) {
        r.socket().write(HostileHttpServer.ok(r.input(0)));
      }
    });
    deployHttp(server, 4);
    assertEquals(502, code(send("a", 1)));
    Future<Message<Object>> behind = send("a", 2); // waits for its key's call
    metricsUntil(m -> m.getInteger("queuedInputs") == 1);
    assertEquals("UP", health().getString("status"));
    advanceMs(CALL_TIMEOUT_MS / 2);
    assertEquals(3, answeredDespiteSlowness("b", 3));
    // Only the lost call left on the wire (an attempt at b that a slow machine timed out ends as
    // its answer comes in).
    metricsUntil(m -> m.getInteger("inFlightBatches") == 1);
    advanceMs(100L * CALL_TIMEOUT_MS);
    JsonObject h = health();
    assertEquals("UP", h.getString("status"), h.encode());
    assertEquals(1, data(h).getInteger("callsPastTimeout"), h.encode());
    // The lost call ends; its key's next call (request 2: b's was 1) is lost too: ended the same way.
    await(server.request(0)).socket().close();
    await(server.request(2)).socket().close();
    settle60(behind);
    metricsUntil(m -> m.getInteger("inFlightBatches") == 0);
  }

  /**
   * A call that hangs, then nothing more: the node has nothing to serve and reads UP however long
   * it stays idle. An input that then waits behind the hung call turns it degraded at once: the
   * call has been past its timeout far longer than a callTimeoutMs.
   */
  @Test
  void anIdleNodeIsNotDegradedByTheCallItLastSent() {
    manualClock();
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> { });
    deployHttp(server, 1);
    assertEquals(502, code(send("a", 1)));
    advanceMs(100L * CALL_TIMEOUT_MS);
    JsonObject idle = health();
    assertEquals("UP", idle.getString("status"), idle.encode());
    assertEquals(1, data(idle).getInteger("callsPastTimeout"), idle.encode());
    Future<Message<Object>> waiting = send("b", 2);
    metricsUntil(m -> m.getInteger("queuedInputs") == 1);
    JsonObject h = health();
    assertEquals("degraded", data(h).getString("state"), h.encode());
    await(server.request(0)).socket().close();
    await(server.request(1)).socket().close();
    settle60(waiting);
    metricsUntil(m -> m.getInteger("inFlightBatches") == 0);
  }

  /**
   * A call that fails now and then on a quiet node (nothing sent between): failures far apart are
   * no stall, so the node reads UP until the rule in calls (five in a row) says otherwise.
   */
  @Test
  void failedCallsFarApartOnAQuietNodeDoNotTurnItDegraded() {
    manualClock();
    deploy(config(new JsonObject().put("callTimeoutMs", CALL_TIMEOUT_MS)));
    downstream.auto(call -> call.fail(500, "store down"));
    for (int i = 0; i < Operations.DEGRADED_AFTER - 1; i++) {
      assertEquals(502, code(send("k", i)));
      advanceMs(10L * CALL_TIMEOUT_MS);
      JsonObject h = health();
      assertEquals("UP", h.getString("status"), h.encode());
    }
    assertEquals(502, code(send("k", "fifth")));
    assertEquals("DOWN", health().getString("status"));
  }

  /**
   * Review AQ: the data says callsPastTimeout "in every state with data" (operations.md), and a
   * drain held by a hung call is where an operator most needs it; it was added only once the node
   * read up, so a draining node never said it. It now does while draining, too.
   */
  @Test
  void aDrainingNodeSaysHowManyCallsPastTheirTimeoutHoldIt() {
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> { }); // never answers
    String id = deploy(new JsonObject()
        .put("downstream", new JsonObject().put("type", "http").put("url", server.url()).put("timeoutMs", 60_000))
        .put("callTimeoutMs", CALL_TIMEOUT_MS).put("drainTimeoutMs", 60_000));
    assertEquals(502, code(send("a", 1))); // at callTimeoutMs; the call stays on the wire
    Future<Void> undeployed = vertx.undeploy(id);
    awaitDraining(); // the drain waits for the hung call
    JsonObject h = health();
    assertEquals("draining", data(h).getString("state"), h.encode());
    assertEquals(1, data(h).getInteger("callsPastTimeout"), h.encode());
    await(server.request(0)).socket().close();
    await(undeployed);
  }
}
