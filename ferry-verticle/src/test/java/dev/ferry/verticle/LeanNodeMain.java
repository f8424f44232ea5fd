package dev.ferry.verticle;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Run by {@link WithoutOptionalJarsTest} in a JVM whose class path lacks ferry-verticle's optional
 * jars: a plain node must deploy and serve; a feature that needs a missing jar must fail the
 * deployment naming it. Prints one {@code name=value} line per finding.
 */
public final class LeanNodeMain {
  private LeanNodeMain() {}

  public static void main(String[] args) throws Exception {
    System.out.println("web-absent=" + !OptionalJars.present(OptionalJars.WEB.probeClass()));
    System.out.println("hazelcast-absent=" + !OptionalJars.present(OptionalJars.HAZELCAST.probeClass()));
    Vertx vertx = Vertx.vertx();
    try {
      vertx.eventBus().<JsonObject>consumer("lean.down", m -> {
        JsonArray outcomes = new JsonArray();
        m.body().getJsonArray("inputs").forEach(i -> outcomes.add(new JsonObject().put("ok", ((JsonObject) i).getValue("input"))));
        m.reply(new JsonObject().put("outcomes", outcomes));
      });
      JsonObject plain = new JsonObject().put("downstream", new JsonObject().put("type", "eventbus").put("address", "lean.down"));
      get(vertx.deployVerticle(FerryVerticle.class.getName(), new DeploymentOptions().setConfig(plain)));
      Object reply = get(vertx.eventBus().request("ferry.submit", "hello", new DeliveryOptions().addHeader("key", "k"))).body();
      System.out.println("submit=" + reply);
      JsonObject monitored = plain.copy().put("address", "lean.other").put("metricsAddress", "lean.metrics")
          .put("healthAddress", "lean.health").put("monitoring", new JsonObject().put("port", 0));
      try {
        get(vertx.deployVerticle(FerryVerticle.class.getName(), new DeploymentOptions().setConfig(monitored)));
        System.out.println("monitoring=deployed");
      } catch (ExecutionException e) {
        System.out.println("monitoring=" + e.getCause().getMessage());
      }
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
