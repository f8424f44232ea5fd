package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The undeploy of ADR 0064 attacked the way operators and careless code do: Vert.x closed with a
 * call in flight, an undeploy asked twice, a redeploy at the same address while the old verticle
 * drains. A call in flight is never cut: its caller gets the outcome or
 * 502, never 503, and the address is served by one verticle at a time.
 */
class UndeployHostileTest extends VerticleTestBase {

  @Test
  void vertxClosedWithACallInFlightWaitsForItAndItsCallerGets502() {
    deploy(config(new JsonObject().put("drainTimeoutMs", 0).put("callTimeoutMs", 1_000)));
    Future<Message<Object>> inFlight = send("k", "in flight");
    EbRecorder.Call held = await(downstream.call(0)); // never answered
    Future<Void> closed = vertx.close();
    // Sent, then given up at its call timeout: 502 ("may have been applied"), not 503; the close
    // waited for it (Vert.x undeploys the verticle first).
    assertEquals(502, code(inFlight));
    held.abandoned();
    await(closed);
  }

  @Test
  void vertxClosedWhileTheVerticleUndeploysWaitsForItAndTheCallerOfTheCallInFlightGets502() {
    String id = deploy(config(new JsonObject().put("drainTimeoutMs", 0).put("callTimeoutMs", 1_000)));
    Future<Message<Object>> inFlight = send("k", "in flight");
    EbRecorder.Call held = await(downstream.call(0)); // never answered
    // Watched from now: the close may have ended, and its event loops with it, before they are awaited.
    Ends ends = undeployThenClose(id);
    // Vert.x does not wait for an undeploy under way by itself: the event bus closed with the call
    // in flight and its caller never got a reply. Held until the undeploy is over, it gets 502.
    assertEquals(502, code(inFlight));
    held.abandoned();
    await(ends.undeploy());
    await(ends.closed());
  }

  @Test
  void vertxClosedWhileTheUndeployEndsWaitsUntilVertxHasFinishedIt() {
    OneCall call = oneCallInFlight();
    // After stop() Vert.x closes the verticle's context (runs its close hooks), then completes the
    // undeploy. A hook standing in for a slow one: it lets go when the close of Vert.x completes,
    // or after half a second while that close is held.
    io.vertx.core.Promise<Void> slowHook = io.vertx.core.Promise.promise();
    call.owner().addCloseHook(completion -> slowHook.future().onComplete(ar -> completion.succeed()));
    Ends ends = undeployThenClose(call.id());
    ends.closed().onComplete(ar -> slowHook.tryComplete());
    vertx.setTimer(500, t -> slowHook.tryComplete());
    call.held().echo();
    assertEquals("in flight", body(call.reply()));
    // Released at the end of stop(), the close ran on while the hook was out and shut the event
    // loops the undeploy still needed: it failed (event executor terminated) or never completed.
    await(ends.undeploy());
    await(ends.closed());
  }

  @Test
  void vertxClosedWhileTheVerticleUndeploysStaysHeldWhileTheUndeployRunsOnPastTheContextClose() {
    OneCall call = oneCallInFlight();
    Ends ends = undeployThenClose(call.id());
    // Vert.x goes on with the undeploy (takes the deployment out, answers its caller) in listeners of
    // the context's close that it adds after stop(), so after the verticle's hold. One added now,
    // on the owner's loop after the task that began stop(), stands for them: the close of Vert.x
    // must not have moved on by then, or it can shut the event loops before the undeploy's caller
    // is told (its listener's task would be refused).
    AtomicReference<Boolean> movedOnBefore = new AtomicReference<>();
    Future<Void> closeOfVertx = ((VertxInternal) vertx).closeFuture().future();
    call.owner().runOnContext(v -> call.owner().closeFuture().future().onComplete(ar -> movedOnBefore.set(closeOfVertx.isComplete())));
    call.held().echo();
    assertEquals("in flight", body(call.reply()));
    await(ends.undeploy());
    await(ends.closed());
    assertEquals(Boolean.FALSE, movedOnBefore.get(), "the close of Vert.x went on before the undeploy's own listeners ran");
  }

  /** A deployed verticle (no drain time) with one call in flight that the downstream holds. */
  private record OneCall(String id, Future<Message<Object>> reply, EbRecorder.Call held, ContextInternal owner) {}

  private OneCall oneCallInFlight() {
    String id = deploy(config(new JsonObject().put("drainTimeoutMs", 0)));
    Future<Message<Object>> reply = send("k", "in flight");
    EbRecorder.Call held = await(downstream.call(0));
    ContextInternal owner = (ContextInternal)
        ((VertxInternal) vertx).deploymentManager().deployment(id).deployment().contexts().iterator().next();
    return new OneCall(id, reply, held, owner);
  }

  private record Ends(Future<Void> undeploy, Future<Void> closed) {}

  /**
   * Undeploys {@code id}, and closes Vert.x once the undeploy is under way (Vert.x no longer lists
   * the deployment); both watched from the start.
   */
  private Ends undeployThenClose(String id) {
    Future<Void> undeploy = watched(vertx.undeploy(id));
    awaitDraining();
    return new Ends(undeploy, watched(vertx.close()));
  }

  @Test
  void aSecondUndeployIsRefusedAndTheFirstStillWaitsForTheCallInFlight() {
    String id = deploy(config(new JsonObject().put("drainTimeoutMs", 0)));
    Future<Message<Object>> inFlight = send("k", "in flight");
    EbRecorder.Call held = await(downstream.call(0));
    Future<Void> first = vertx.undeploy(id);
    assertTrue(failure(vertx.undeploy(id)) != null);
    assertFalse(first.isComplete(), "the undeploy completed with a call in flight");
    held.echo();
    await(first);
    assertEquals("in flight", body(inFlight));
  }

  @Test
  void aRedeployAtTheSameAddressWhileTheOldVerticleDrainsIsRefusedThenServesOnceItLeft() {
    JsonObject config = config(new JsonObject().put("drainTimeoutMs", 0));
    String id = deploy(config);
    Future<Message<Object>> inFlight = send("k", "old");
    EbRecorder.Call held = await(downstream.call(0));
    Future<Void> undeploy = vertx.undeploy(id);
    awaitDraining();
    // Two verticles at one address would call the key at once: the new one is refused while the
    // old one still has the key's call in flight.
    Throwable refused = failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(config)));
    assertTrue(String.valueOf(refused.getMessage()).contains("another FerryVerticle already serves it"), String.valueOf(refused));
    held.echo();
    await(undeploy);
    assertEquals("old", body(inFlight));
    deploy(config);
    Future<Message<Object>> next = send("k", "new");
    await(downstream.call(1)).echo();
    assertEquals("new", body(next));
  }
}
