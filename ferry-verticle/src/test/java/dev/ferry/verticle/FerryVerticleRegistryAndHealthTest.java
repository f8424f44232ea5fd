package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.CheckResult;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Meters in the registry the application names; health as a procedure in the application's checks. */
class FerryVerticleRegistryAndHealthTest extends VerticleTestBase {

  /** A Vert.x whose meters go to {@code registry}, shared by that name with the verticles it runs. */
  private static Vertx vertxWithRegistry(MeterRegistry registry, String name) {
    return Vertx.builder()
        .with(new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true).setRegistryName(name)))
        .withMetrics(new MicrometerMetricsFactory(registry))
        .build();
  }

  @Test
  void theMetersLandInTheRegistryTheApplicationNamed() {
    MeterRegistry registry = new SimpleMeterRegistry();
    Vertx app = vertxWithRegistry(registry, "app");
    try {
      JsonObject config = new JsonObject()
          .put("downstream", new JsonObject().put("type", "eventbus").put("address", "nowhere"))
          .put("metricsRegistry", "app");
      await(app.deployVerticle(FerryVerticle.class.getName(), new DeploymentOptions().setConfig(config)));
      assertNotNull(registry.find("ferry.submitted").meter(),
          () -> "meters: " + registry.getMeters().stream().map(m -> m.getId().getName()).toList());
    } finally {
      await(app.close());
    }
  }

  @Test
  void aSecondVertxSharingTheRegistryCannotPutAFerryOfTheSameAddressInItAndTheFirstKeepsItsMeters() {
    MeterRegistry registry = new SimpleMeterRegistry();
    // Vert.x's registries are JVM-wide by name: two instances naming one share it (as the default
    // registry is shared by every instance that does not name one).
    java.util.function.Supplier<Vertx> node = () -> vertxWithRegistry(registry, "shared");
    Vertx one = node.get();
    Vertx two = node.get();
    try {
      JsonObject config = new JsonObject()
          .put("downstream", new JsonObject().put("type", "eventbus").put("address", "nowhere"))
          .put("metricsRegistry", "shared");
      await(one.deployVerticle(FerryVerticle.class.getName(), new DeploymentOptions().setConfig(config)));
      Throwable refused = failure(two.deployVerticle(FerryVerticle.class.getName(),
          new DeploymentOptions().setConfig(config)));
      assertTrue(refused.getMessage().contains("address = \"ferry.submit\"")
          && refused.getMessage().contains("metricsRegistry"), refused.getMessage());
      assertEquals(1, registry.find("ferry.submitted").tag("ferry", "ferry.submit").meters().size(),
          "the first ferry's meters stay, and are its own");
      assertEquals(0.0, registry.get("ferry.queued.inputs").tag("ferry", "ferry.submit").gauge().value());
    } finally {
      await(two.close());
      await(one.close());
    }
  }

  /**
   * A registry that refuses one of the ferry's meters for its own reason (here Prometheus: a meter
   * of that name and another type exists) fails the deployment with that reason, not with a claim
   * that a ferry of the same address is bound there: the registry refuses with an
   * IllegalArgumentException too, which the deployment took for the name being taken.
   */
  @Test
  void aRegistryThatRefusesAMeterFailsTheDeploymentWithItsOwnReason() {
    io.micrometer.prometheusmetrics.PrometheusMeterRegistry registry =
        new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
    registry.throwExceptionOnRegistrationFailure();
    io.micrometer.core.instrument.Gauge.builder("ferry.batches", () -> 1).register(registry); // the application's own
    Vertx app = vertxWithRegistry(registry, "strict");
    try {
      JsonObject config = new JsonObject()
          .put("downstream", new JsonObject().put("type", "eventbus").put("address", "nowhere"))
          .put("metricsRegistry", "strict");
      Throwable refused = failure(app.deployVerticle(FerryVerticle.class.getName(), new DeploymentOptions().setConfig(config)));
      assertTrue(refused.getMessage().contains("same type"), "the registry's own reason: " + refused.getMessage());
      assertTrue(!refused.getMessage().contains("already has its meters"), "no ferry of that name is bound: " + refused.getMessage());
      assertEquals(List.of("ferry.batches"), registry.getMeters().stream().map(m -> m.getId().getName()).toList().stream()
          .filter(n -> n.startsWith("ferry.")).toList(), "the application's meter alone; none of the ferry's is left");
    } finally {
      await(app.close());
    }
  }

  @Test
  void aRegistryNameWithoutARegistryFailsTheDeploymentNamingIt() {
    Throwable e = failure(vertx.deployVerticle(FerryVerticle.class.getName(),
        new DeploymentOptions().setConfig(config(new JsonObject().put("metricsRegistry", "no-such-registry")))));
    assertTrue(e.getMessage().contains("metricsRegistry = \"no-such-registry\""), e.getMessage());
    // Nothing stays behind: the address is free for the next deployment.
    deploy(config(new JsonObject()));
  }

  @Test
  void theHealthProcedureJoinsTheApplicationsOwnChecks() {
    FerryVerticle verticle = new FerryVerticle();
    HealthChecks checks = HealthChecks.create(vertx);
    checks.register("ferry", verticle.healthProcedure());
    assertEquals("DOWN", await(checks.checkStatus()).getUp() ? "UP" : "DOWN", "not deployed yet");
    String id = await(vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config(new JsonObject()))));
    assertTrue(await(checks.checkStatus()).getUp());
    await(vertx.undeploy(id));
    JsonObject after = await(checks.checkStatus()).toJson();
    assertEquals("DOWN", after.getString("status"), after.encode());
    assertTrue(after.encode().contains("closed"), after.encode());
  }

  @Test
  void theHealthProcedureSaysClosedOnceTheNodesVertxIsClosed() {
    Vertx node = Vertx.vertx();
    FerryVerticle verticle = new FerryVerticle();
    HealthChecks checks = HealthChecks.create(vertx); // the application's checks, on another Vert.x
    checks.register("ferry", verticle.healthProcedure());
    await(node.deployVerticle(verticle, new DeploymentOptions().setConfig(config(new JsonObject()))));
    assertTrue(await(checks.checkStatus()).getUp());
    await(node.close());
    JsonObject after = await(checks.checkStatus()).toJson();
    assertEquals("DOWN", after.getString("status"), after.encode());
    assertTrue(after.encode().contains("\"closed\""), "closed, not an error or a timeout: " + after.encode());
  }
}
