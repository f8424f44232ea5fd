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

  /**
   * Two ferries of one Vert.x at distinct addresses but one monitoring port: Vert.x shares a port
   * between servers of one instance and hands requests to them in turn, so the second ferry's
   * deployment succeeded and every other scrape of that port answered with the other ferry's
   * meters and health. The second deployment must be refused, naming the field.
   */
  @Test
  void aSecondFerryOnAMonitoringPortTakenInTheSameVertxIsRefusedAndTheFirstAnswersAlone() {
    int port = TestPorts.free();
    deploy(config(new JsonObject().put("monitoring", new JsonObject().put("port", port))));
    io.vertx.core.Future<String> second = vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions()
        .setConfig(config(new JsonObject().put("address", "second.submit").put("metricsAddress", "second.metrics")
            .put("healthAddress", "second.health").put("monitoring", new JsonObject().put("port", port)))));
    await(second.transform(ar -> io.vertx.core.Future.succeededFuture()));
    if (second.succeeded()) {
      java.util.List<Boolean> others = new java.util.ArrayList<>();
      for (int i = 0; i < 4; i++) {
        others.add(httpGet(port, "/metrics").contains("ferry=\"second.submit\""));
      }
      throw new AssertionError("the second ferry deployed on the first one's monitoring port; scrapes that"
          + " answered with the second ferry's meters: " + others);
    }
    Throwable refused = second.cause();
    assertTrue(refused.getMessage().contains("monitoring"), refused.toString());
    assertEquals(1, vertx.deploymentIDs().size(), "only the first ferry is deployed");
    for (int i = 0; i < 4; i++) {
      String scrape = httpGet(port, "/metrics");
      assertTrue(scrape.contains("ferry=\"ferry.submit\""), scrape);
      assertTrue(!scrape.contains("second.submit"), "a scrape answered with the other ferry's meters: " + scrape);
    }
    // The first one's undeploy gives the port back: the second ferry may take it then.
    await(vertx.undeploy(vertx.deploymentIDs().iterator().next()));
    deploy(config(new JsonObject().put("address", "second.submit").put("metricsAddress", "second.metrics")
        .put("healthAddress", "second.health").put("monitoring", new JsonObject().put("port", port))));
    assertTrue(httpGet(port, "/metrics").contains("ferry=\"second.submit\""));
  }

  /**
   * A registry whose meter-removed listener throws (FerryMeterBinder's close still removes every
   * meter, then rethrows) made Operations.stop throw before it closed anything else: a start failing
   * on a port in use left its health consumer registered at ferry.health, answering "closed" to every
   * other health request of the ferry deployed next.
   */
  @Test
  void aMeterRemovalThatThrowsStillStopsTheHealthEndpointOfAFailedStart() throws Exception {
    io.micrometer.core.instrument.MeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    registry.config().onMeterRemoved(m -> {
      if (m.getId().getName().startsWith("ferry.")) {
        throw new IllegalStateException("listener refuses");
      }
    });
    io.vertx.core.Vertx app = io.vertx.core.Vertx.builder()
        .with(new io.vertx.core.VertxOptions().setMetricsOptions(
            new io.vertx.micrometer.MicrometerMetricsOptions().setEnabled(true).setRegistryName("review-g-throwing")))
        .withMetrics(new io.vertx.micrometer.MicrometerMetricsFactory(registry))
        .build();
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      JsonObject config = new JsonObject()
          .put("downstream", new JsonObject().put("type", "eventbus").put("address", "nowhere"))
          .put("metricsRegistry", "review-g-throwing")
          .put("monitoring", new JsonObject().put("port", taken.getLocalPort()));
      Throwable e = failure(app.deployVerticle(FerryVerticle.class.getName(), new DeploymentOptions().setConfig(config)));
      assertTrue(String.valueOf(e.getMessage()).toLowerCase().contains("address already in use"), e.toString());
      Throwable none = failure(app.eventBus().request("ferry.health", null));
      assertTrue(none instanceof io.vertx.core.eventbus.ReplyException re
          && re.failureType() == io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS,
          "the failed start left a health consumer behind: " + none);
    } finally {
      await(app.close());
    }
  }
}
