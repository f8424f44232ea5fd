package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** Review G: operating a standalone FerryVerticle (monitoring endpoint, meters, health). */
class OpsReviewGTest extends VerticleTestBase {

  /**
   * One ferry with its monitoring endpoint and its bridge on one port of one host: Vert.x shares the
   * port between the two servers and hands connections to them in turn, so some scrapes reached the
   * bridge (which does not speak HTTP) and some bridge clients the HTTP server. Refused as config.
   */
  @Test
  void monitoringAndBridgeOnOnePortAreRefusedAsConfig() {
    int port = TestPorts.free();
    io.vertx.core.Future<String> one = vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions()
        .setConfig(config(new JsonObject().put("monitoring", new JsonObject().put("port", port))
            .put("bridge", new JsonObject().put("port", port)))));
    await(one.transform(ar -> io.vertx.core.Future.succeededFuture()));
    if (one.succeeded()) {
      java.util.List<String> answers = new java.util.ArrayList<>();
      for (int i = 0; i < 4; i++) {
        String got;
        try {
          got = httpGet(port, "/health");
        } catch (AssertionError e) {
          got = e.getMessage();
        }
        answers.add(got.length() > 40 ? got.substring(0, 40) : got);
      }
      throw new AssertionError("deployed with monitoring and bridge on one port; GET /health answered: " + answers);
    }
    assertTrue(one.cause() instanceof dev.ferry.InvalidConfigException, one.cause().toString());
    assertTrue(one.cause().getMessage().contains("bridge.port"), one.cause().getMessage());
  }
}
