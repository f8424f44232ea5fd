package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * Review of ADR 0155 (stop() made to run once): the verticle's lifecycle across deploys of one
 * instance and closes of Vert.x during its start.
 */
class LifecycleReviewTest extends VerticleTestBase {

  @Test
  void theSameInstanceDeployedAgainDrainsAndReleasesItsAddressAtItsSecondUndeploy() {
    // The guide: "once it is undeployed it may be deployed again". stop() remembered its first
    // run: the second undeploy returned that completed future, without draining, without waiting
    // for the call in flight, without giving the address back.
    FerryVerticle verticle = new FerryVerticle(new FerryVerticleOptions(config(new JsonObject().put("drainTimeoutMs", 0))));
    await(vertx.deployVerticle(verticle));
    await(vertx.undeploy(verticle.deploymentID()));
    await(vertx.deployVerticle(verticle));
    Future<Message<Object>> inFlight = send("k", "in flight");
    EbRecorder.Call held = await(downstream.call(0));
    Future<Void> undeploy = vertx.undeploy(verticle.deploymentID());
    try {
      Thread.sleep(300);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    assertFalse(undeploy.isComplete(), "the undeploy completed with a call in flight (ADR 0064)");
    held.echo();
    await(undeploy);
    assertEquals("in flight", body(inFlight));
    // The address is free again: a new instance serves it.
    deploy(config(new JsonObject()));
    Future<Message<Object>> next = send("k", "next");
    await(downstream.call(1)).echo();
    assertEquals("next", body(next));
  }
}
