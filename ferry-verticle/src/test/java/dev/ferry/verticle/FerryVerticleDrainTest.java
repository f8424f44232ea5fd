package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Undeploy drains: waiting inputs still leave within drainTimeoutMs, the rest get 503. */
class FerryVerticleDrainTest extends VerticleTestBase {

  @Test
  void waitingInputsAreStillSentAndStopWaitsForTheLastCall() {
    // The seeds' back-of-the-line order (fixed slots), so the order of the drained calls is known.
    String id = deploy(config(new JsonObject().put("maxInFlightBatches", 1).put("directIdleKeys", false)
        .put("dispatch", "fixed-slots")));
    Future<Message<Object>> a1 = send("a", "a1");
    EbRecorder.Call first = await(downstream.call(0));
    Future<Message<Object>> a2 = send("a", "a2");
    Future<Message<Object>> b1 = send("b", "b1");
    admitted(3);
    Future<Void> undeploy = vertx.undeploy(id);
    // Once the drain has begun, submissions are refused with 503 (the consumer is still there).
    awaitDraining();
    assertEquals(503, code(send("late", "x")));
    first.echo();
    EbRecorder.Call second = await(downstream.call(1));
    second.echo();
    EbRecorder.Call third = await(downstream.call(2));
    assertEquals(List.of(List.of("b1"), List.of("a2")), List.of(second.bodies(), third.bodies()));
    assertFalse(undeploy.isComplete(), "stop completed with a call still in flight");
    third.echo();
    await(undeploy);
    assertEquals(List.of("a1", "a2", "b1"), List.of(body(a1), body(a2), body(b1)));
  }

  @Test
  void atTheDrainTimeoutWhatWaitsGets503AndTheUndeployWaitsForTheCallInFlightWhoseCallerGetsItsOutcome() {
    String id = deploy(config(new JsonObject().put("drainTimeoutMs", 150)));
    Future<Message<Object>> inFlight = send("k", 0);
    EbRecorder.Call held = await(downstream.call(0));
    Future<Message<Object>> w1 = send("k", 1);
    Future<Message<Object>> w2 = send("k", 2);
    admitted(3);
    Future<Void> undeploy = vertx.undeploy(id);
    // The key's call is held past the drain timeout: its waiting inputs can never leave, so they
    // get 503 at the drain deadline.
    assertEquals(503, code(w1));
    assertEquals(503, code(w2));
    // The call itself is not cut (ADR 0064, superseding 0061's cut with 502): the undeploy waits
    // for it, so that a redeployed verticle cannot call the key while it still runs, and its
    // caller gets the downstream's real answer.
    assertFalse(undeploy.isComplete(), "the undeploy completed with a call still in flight");
    assertFalse(inFlight.isComplete(), "the caller of a call in flight was answered before the call ended");
    held.echo();
    await(undeploy);
    assertEquals(0, body(inFlight));
    assertEquals(1, downstream.count());
  }

  @Test
  void aRedeployedVerticleCallsAKeyOnlyAfterTheOldVerticlesCallEndedAtItsCallTimeout() {
    long callTimeoutMs = 2_000;
    JsonObject config = config(new JsonObject().put("drainTimeoutMs", 0).put("callTimeoutMs", callTimeoutMs));
    String id = deploy(config);
    long sentAt = System.nanoTime();
    Future<Message<Object>> first = send("k", "first");
    EbRecorder.Call hung = await(downstream.call(0)); // never answered: the downstream hangs
    // Undeploy (drainTimeoutMs 0) and redeploy at once, as a rolling restart does.
    String again = await(vertx.undeploy(id).compose(v -> vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
        new io.vertx.core.DeploymentOptions().setConfig(config))));
    // The old verticle gave the call up at its call timeout (502), not before: only then did its
    // undeploy end. The downstream may still be working on it; the new verticle's call for the key
    // must not come earlier than that, exactly as within one verticle (ADR 0005).
    assertEquals(502, code(first));
    hung.abandoned();
    Future<Message<Object>> next = send("k", "next");
    EbRecorder.Call second = await(downstream.call(1));
    // The old call's send timeout was armed after sentAt, and a timer never fires early: a sound
    // bound whatever the machine's speed. Cutting the call at the drain deadline (0 ms) broke it.
    assertTrue(second.arrivedAt - sentAt >= java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(callTimeoutMs),
        "the redeployed verticle called the key " + (second.arrivedAt - sentAt) / 1_000_000
            + " ms after the old call was sent, before the old call's timeout of " + callTimeoutMs + " ms");
    second.echo();
    assertEquals("next", body(next));
    await(vertx.undeploy(again));
  }

  @Test
  void afterUndeployTheAddressHasNoHandler() {
    String id = deploy(config(new JsonObject()));
    await(vertx.undeploy(id));
    io.vertx.core.eventbus.ReplyException e =
        (io.vertx.core.eventbus.ReplyException) failure(send("k", 1));
    assertEquals(io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS, e.failureType());
  }
}
