package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review K: contract points of the event-bus message format that no other test pinned as written.
 * Each case holds one key's first call open with the recording downstream, so that what follows
 * waits in the lane and leaves in one batch, with no timing involved.
 */
class ContractReviewKTest extends VerticleTestBase {

  /**
   * The contract gives one request body for both downstream types, {"key", "inputs": [{"id": <id
   * or null>, "input": <body>}]}; the HTTP one was pinned field for field, the event bus's only
   * through what the recorder reads back (a missing "id" reads as null there too).
   */
  @Test
  void theEventBusDownstreamGetsTheContractsRequestBodyWithANullIdWhereNoneWasGiven() {
    deploy(config(new JsonObject()));
    send("k", "hold");
    EbRecorder.Call held = await(downstream.call(0));
    Future<Message<Object>> withId = send("k", new JsonObject().put("n", 1), "id", "req-7");
    Future<Message<Object>> withoutId = send("k", 5);
    admitted(3);
    held.echo();
    EbRecorder.Call batch = await(downstream.call(1));
    JsonObject request = batch.request();
    assertEquals(new JsonObject().put("key", "k").put("inputs", new JsonArray()
        .add(new JsonObject().put("id", "req-7").put("input", new JsonObject().put("n", 1)))
        .add(new JsonObject().put("id", null).put("input", 5))), request);
    assertEquals(List.of("key", "inputs"), List.copyOf(request.fieldNames()));
    JsonObject second = request.getJsonArray("inputs").getJsonObject(1);
    // Present and null, not left out: the contract's "id": <id or null>.
    assertEquals(true, second.containsKey("id"), second.encode());
    assertEquals("{\"key\":\"k\",\"inputs\":[{\"id\":\"req-7\",\"input\":{\"n\":1}},{\"id\":null,\"input\":5}]}",
        request.encode());
    batch.echo();
    assertEquals(new JsonObject().put("n", 1), body(withId));
    assertEquals(5, body(withoutId));
  }

  /**
   * The order header is used only when the config says "order": "header"; in the default
   * "submission" mode a key's inputs leave in submission order whatever order headers they carry
   * (guarantee 3), while a malformed one is still 400.
   */
  @Test
  void inSubmissionModeOrderHeadersDoNotReorderAKeysInputs() {
    deploy(config(new JsonObject()));
    send("k", "hold");
    EbRecorder.Call held = await(downstream.call(0));
    send("k", "o9", "order", "9");
    send("k", "o1", "order", "1");
    send("k", "none");
    send("k", "o-5", "order", "-5");
    admitted(5);
    assertEquals(400, code(send("k", "bad", "order", "soon")));
    held.echo();
    assertEquals(List.of("o9", "o1", "none", "o-5"), await(downstream.call(1)).bodies());
  }

  /**
   * The contract's table of defaults, as a deployment reads them from a config that gives only the
   * downstream (the typed options and PerKeyConfig had their own tests; this is what the verticle
   * runs with). maxInFlightBatches follows the dispatch mode (contract-notes 2.2).
   */
  @Test
  void aConfigGivingOnlyTheDownstreamRunsWithTheContractsDefaults() {
    VerticleConfig c = VerticleConfig.read(config(new JsonObject()));
    assertEquals("ferry.submit", c.address());
    assertEquals("ferry.metrics", c.metricsAddress());
    assertEquals(100, c.perKey().maxBatchSize());
    assertEquals(Long.MAX_VALUE, c.perKey().maxBatchWeight(), "unbounded");
    assertEquals(10_000, c.perKey().maxQueueing());
    assertEquals(Long.MAX_VALUE, c.perKey().maxQueuedWeight(), "unbounded");
    assertEquals(Duration.ZERO, c.perKey().maxBatchDelay());
    assertEquals(true, c.perKey().directIdleKeys());
    assertEquals(false, c.headerOrder(), "order: submission");
    assertEquals(Duration.ofMillis(30_000), c.perKey().callTimeout());
    assertEquals(10_000, c.drainTimeoutMs());
    assertEquals(Duration.ofMillis(10_000), c.perKey().drainTimeout());
    assertEquals(16, VerticleConfig.read(config(new JsonObject().put("dispatch", "fixed-slots")))
        .perKey().maxInFlightBatches(), "the contract's 16 in the seeds' mode");
    assertEquals(DOWN, c.downstream().address());
  }
}
