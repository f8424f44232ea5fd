package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

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
  void atTheDrainTimeoutWhatWaitsGets503AndCallsInFlightAreCutWith502() {
    String id = deploy(config(new JsonObject().put("drainTimeoutMs", 150)));
    Future<Message<Object>> inFlight = send("k", 0);
    EbRecorder.Call held = await(downstream.call(0));
    Future<Message<Object>> w1 = send("k", 1);
    Future<Message<Object>> w2 = send("k", 2);
    admitted(3);
    Future<Void> undeploy = vertx.undeploy(id);
    // The key's call is held past the drain timeout: its waiting inputs can never leave, and the
    // call itself is cut, so the undeploy ends at the drain deadline (ADR 0061), long before the
    // 30 s call timeout.
    assertEquals(503, code(w1));
    assertEquals(503, code(w2));
    assertEquals(502, code(inFlight));
    await(undeploy);
    held.echo(); // too late: nobody is left to answer
    assertEquals(1, downstream.count());
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
