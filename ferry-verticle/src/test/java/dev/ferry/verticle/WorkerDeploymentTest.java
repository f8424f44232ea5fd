package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.InvalidConfigException;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.ThreadingModel;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A FerryVerticle deployed as a worker was refused deep in the engine, "a ferry needs an event-loop
 * context, got io.vertx.core.impl.ContextImpl@...": true, but naming no option the user set. It is
 * refused as a deployment error naming the threading model, before anything is claimed, so the
 * same address then deploys on an event loop and answers.
 */
class WorkerDeploymentTest extends VerticleTestBase {

  @Test
  void aWorkerDeploymentIsRefusedNamingTheThreadingModelAndLeavesNothingBehind() {
    Throwable refused = failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
        new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER).setConfig(config(new JsonObject()))));
    assertTrue(refused instanceof InvalidConfigException, String.valueOf(refused));
    assertEquals(List.of("threadingModel = WORKER: must be EVENT_LOOP (the default; the ferry's lanes live on one event"
        + " loop, without locks)"), ((InvalidConfigException) refused).violations());
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject()));
    assertEquals("x", body(send("k", "x")));
  }
}
