package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every failure code of the contract (400, 422, 429, 502, 503, 504), each produced here. */
class FerryVerticleFailuresTest extends VerticleTestBase {

  @Test
  void badInputIs400AtOnceAndTouchesNothing() {
    deploy(config(new JsonObject()));
    assertEquals(400, code(send(null, "x")));
    assertEquals(400, code(send("", "x")));
    assertEquals(400, code(send("k".repeat(1025), "x")));
    assertEquals(400, code(send("k\uD800", "x")), "a lone surrogate: it would reach other nodes as \"k?\"");
    assertEquals(400, code(send("\uDC00k", "x")));
    assertEquals(400, code(send("k", Buffer.buffer("raw"))));
    assertEquals(400, code(send("k", new byte[] {1})));
    assertEquals(400, code(send("k", Double.NaN)));
    assertEquals(400, code(send("k", "x", "timeout-ms", "soon")));
    assertEquals(400, code(send("k", "x", "timeout-ms", "0")));
    assertEquals(400, code(send("k", "x", "order", "1.5")));
    JsonObject m = metrics();
    assertEquals(0, m.getLong("submitted"), m.encode());
    assertEquals(0, downstream.count());
    // A key of exactly 1024 characters is fine, and so is one with a well-formed surrogate pair.
    Future<Message<Object>> pair = send("k\uD83D\uDE00", "pair");
    await(downstream.call(0)).echo();
    assertEquals("pair", body(pair));
    Future<Message<Object>> ok = send("k".repeat(1024), new JsonArray().add(1));
    await(downstream.call(1)).echo();
    assertEquals(new JsonArray().add(1), body(ok));
  }

  @Test
  void theNodesOwnHeadersAre400AtThePublicAddressAndTouchNothing() {
    // The ferry-* headers carry what only a node may say of a forward (its hops, the nodes it
    // passed, its hand-off class) or a release: a client that sends one gets 400 at once, in any
    // case, clustered or not (ADR 0103). Only ferry-origin is a client's to send (ADR 0098).
    deploy(config(new JsonObject()));
    for (String header : java.util.List.of("ferry-handoff", "ferry-hop", "ferry-visited", "ferry-from", "ferry-view",
        "ferry-ctl", "FERRY-HandOff", "ferry-next-thing")) {
      ReplyException e = (ReplyException) failure(send("k", "x", header, "1"));
      assertEquals(400, e.failureCode(), header);
      assertTrue(e.getMessage().contains("\"" + header + "\" is reserved"), e.getMessage());
    }
    JsonObject m = metrics();
    assertEquals(0, m.getLong("submitted"), m.encode());
    assertEquals(0, downstream.count());
    Future<Message<Object>> ok = send("k", "fine", "ferry-origin", "client-1#1");
    await(downstream.call(0)).echo();
    assertEquals("fine", body(ok));
  }

  @Test
  void aNullBodyIsTheJsonNullInputNotBadInput() {
    // JSON null is a JSON value: it is sent as {"input": null} and its outcome comes back as is.
    deploy(config(new JsonObject()));
    Future<Message<Object>> nothing = send("k", null);
    EbRecorder.Call call = await(downstream.call(0));
    assertEquals(java.util.Arrays.asList((Object) null), call.bodies());
    call.echo();
    assertEquals(null, body(nothing));
  }

  @Test
  void aRejectedInputIs422WithItsReasonAndTheRestSucceed() {
    deploy(config(new JsonObject()));
    send("k", "hold");
    EbRecorder.Call held = await(downstream.call(0));
    Future<Message<Object>> a = send("k", "a");
    Future<Message<Object>> b = send("k", "b");
    Future<Message<Object>> c = send("k", "c");
    admitted(4);
    held.echo();
    EbRecorder.Call batch = await(downstream.call(1));
    batch.reply(new JsonObject().put("outcomes", new JsonArray()
        .add(new JsonObject().put("ok", 1))
        .add(new JsonObject().put("error", "b is not allowed"))
        .add(new JsonObject().put("ok", new JsonObject().put("v", 3)))));
    assertEquals(1, body(a));
    ReplyException rejected = (ReplyException) failure(b);
    assertEquals(422, rejected.failureCode());
    assertEquals("b is not allowed", rejected.getMessage());
    assertEquals(new JsonObject().put("v", 3), body(c));
  }

  @Test
  void aFullWaitingRoomIs429AtOnce() {
    deploy(config(new JsonObject().put("maxQueueing", 2)));
    send("k", 0);
    await(downstream.call(0));
    send("k", 1);
    send("k", 2);
    assertEquals(429, code(send("k", 3)));
    assertEquals(1, metrics().getLong("rejected"));
  }

  @Test
  void aFullWaitingRoomByWeightIs429() {
    deploy(config(new JsonObject().put("maxQueuedWeight", 10)));
    send("k", 0);
    await(downstream.call(0));
    send("k", "abcd"); // 6 bytes as JSON
    assertEquals(429, code(send("k", "abcd")));
  }

  @Test
  void aFailingDownstreamIs502ForEveryCallerOfTheBatch() {
    assertBatchFails502(call -> call.fail(500, "database down"));
  }

  @Test
  void wrongOutcomeCountIs502() {
    assertBatchFails502(call -> call.reply(new JsonObject().put("outcomes",
        new JsonArray().add(new JsonObject().put("ok", 1)))));
  }

  @Test
  void nonJsonAnswerIs502() {
    assertBatchFails502(call -> call.reply("not json at all"));
  }

  @Test
  void malformedOutcomeIs502() {
    assertBatchFails502(call -> call.reply(new JsonObject().put("outcomes", new JsonArray()
        .add(new JsonObject().put("ok", 1)).add(new JsonObject().put("error", 7)))));
  }

  @Test
  void aDownstreamHangingPastCallTimeoutIs502AndTheKeyMovesOnAfterwards() {
    deploy(config(new JsonObject().put("callTimeoutMs", 200)));
    downstream.givenUpCallsAreOver();
    Future<Message<Object>> first = send("k", 0);
    EbRecorder.Call hung = await(downstream.call(0));
    // Later calls are answered where they arrive, not after a trip through the test's thread.
    downstream.auto(EbRecorder.Call::echo);
    Future<Message<Object>> next = send("k", 1);
    assertEquals(502, code(first));
    // The send timeout (= callTimeoutMs) fails the call too; only then may the key's next batch
    // leave, so the recorder never sees two calls of k open at once. That next call has the same
    // 200 ms, real time: a loaded machine can stretch its round trip past them (it did: 502 where
    // the echo was expected). Then the key must move on again, so slowness only costs another
    // round; a key that stays stuck fails at the first, and one whose answers are lost at the last.
    for (int i = 1; ; i++) {
      EbRecorder.Call call = await(downstream.call(i));
      assertEquals(List.of(i), call.bodies());
      Throwable failed = await(next.transform(ar -> Future.succeededFuture(ar.failed() ? ar.cause() : null)));
      if (failed == null) {
        assertEquals(i, body(next));
        break;
      }
      assertEquals(502, ((ReplyException) failed).failureCode(), failed.toString());
      assertTrue(i < 20, "the key's calls kept failing after the hung one: " + failed);
      next = send("k", i + 1);
    }
    assertTrue(metrics().getLong("failedBatches") >= 1);
    assertFalse(hung.inputs.isEmpty());
  }

  @Test
  void noDownstreamListeningIs502() {
    deploy(new JsonObject().put("downstream",
        new JsonObject().put("type", "eventbus").put("address", "nobody.here")));
    ReplyException e = (ReplyException) failure(send("k", 1));
    assertEquals(502, e.failureCode());
  }

  @Test
  void aDeadlineThatPassesWhileWaitingIs504AtThatMomentAndTheInputIsNeverSent() {
    deploy(config(new JsonObject()));
    send("k", "hold");
    EbRecorder.Call held = await(downstream.call(0));
    Future<Message<Object>> late = send("k", "late", "timeout-ms", "100");
    Future<Message<Object>> patient = send("k", "patient", "timeout-ms", "60000");
    // 504 arrives while the key's call is still held: at the deadline, not when the lane moves.
    assertEquals(504, code(late));
    held.echo();
    EbRecorder.Call next = await(downstream.call(1));
    assertEquals(List.of("patient"), next.bodies());
    next.echo();
    assertEquals("patient", body(patient));
    assertEquals(1, metrics().getLong("timedOut"));
  }

  @Test
  void submissionsDuringUndeployAre503() {
    String id = deploy(config(new JsonObject()));
    send("k", "in flight");
    EbRecorder.Call held = await(downstream.call(0));
    Future<Void> undeploy = vertx.undeploy(id);
    // The consumer stays registered while draining: a late arrival gets 503, not NO_HANDLERS.
    assertEquals(503, codeEventually503());
    held.echo();
    await(undeploy);
  }

  /**
   * Submits to fresh keys until the ferry answers one with a failure (undeploy runs on the
   * verticle's context at some point after the request): returns that failure's code. Inputs that
   * reach the ferry before it starts closing go direct and are echoed.
   */
  private int codeEventually503() {
    downstream.auto(c -> {
      if (!c.key.equals("k")) {
        c.echo();
      }
    });
    for (int i = 0; i < 1000; i++) {
      Future<Message<Object>> r = send("other" + i, "x");
      Throwable t = await(r.transform(ar -> Future.succeededFuture(ar.failed() ? ar.cause() : null)));
      if (t != null) {
        return ((ReplyException) t).failureCode();
      }
    }
    throw new AssertionError("never saw the ferry closing");
  }

  private void assertBatchFails502(java.util.function.Consumer<EbRecorder.Call> answer) {
    deploy(config(new JsonObject()));
    send("k", "hold");
    EbRecorder.Call held = await(downstream.call(0));
    Future<Message<Object>> a = send("k", "a");
    Future<Message<Object>> b = send("k", "b");
    admitted(3);
    held.echo();
    EbRecorder.Call batch = await(downstream.call(1));
    assertEquals(2, batch.inputs.size());
    answer.accept(batch);
    assertEquals(502, code(a));
    assertEquals(502, code(b));
    assertEquals(1, metrics().getLong("failedBatches"));
    // The key is free again: its next input is called at once.
    Future<Message<Object>> after = send("k", "after");
    await(downstream.call(2)).echo();
    assertEquals("after", body(after));
  }
}
