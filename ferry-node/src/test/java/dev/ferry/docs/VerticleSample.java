package dev.ferry.docs;

import dev.ferry.FerryException;
import dev.ferry.verticle.FerryClient;
import dev.ferry.verticle.FerryVerticle;
import dev.ferry.verticle.FerryVerticleOptions;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import java.time.Duration;

/** The samples of docs/guide/verticle.md (compiled here, checked by DocsSamplesTest). */
final class VerticleSample {
  private VerticleSample() {}

  static void deploy(Vertx vertx) {
    // [deploy]
    JsonObject cfg = new JsonObject()
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", "ferry.downstream"));
    vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(cfg));
    // [/deploy]
  }

  static void options(Vertx vertx, HealthChecks checks) {
    // [options]
    FerryVerticleOptions options = new FerryVerticleOptions()
        .setEventBusDownstream("ferry.downstream")
        .setMaxBatchSize(50)
        .setCallTimeoutMs(5_000);
    FerryVerticle verticle = new FerryVerticle(options);
    vertx.deployVerticle(verticle).onSuccess(id -> checks.register("ferry", verticle.healthProcedure()));
    // [/options]
  }

  static void submit(Vertx vertx) {
    // [submit]
    vertx.eventBus().request("ferry.submit", new JsonObject().put("amount", 5),
        new DeliveryOptions().addHeader("key", "account-42").addHeader("timeout-ms", "2000"));
    // [/submit]
  }

  static void client(Vertx vertx, JsonObject body) {
    // [client]
    FerryClient client = FerryClient.create(vertx);            // or create(vertx, "my.address")
    Future<JsonObject> r = client.submit("account-42", body,
        new FerryClient.SubmitOptions().id("req-7").timeout(Duration.ofSeconds(2)));
    r.onFailure(e -> System.out.println(((FerryException) e).kind())); // REJECTED, FAILED, CLOSED, ...
    // [/client]
  }

  static void eventBusDownstream(Vertx vertx) {
    // [downstream-eventbus]
    vertx.eventBus().<JsonObject>consumer("ferry.downstream", msg -> {
      JsonArray outcomes = new JsonArray();
      for (Object o : msg.body().getJsonArray("inputs")) {
        outcomes.add(new JsonObject().put("ok", ((JsonObject) o).getValue("input")));
      }
      msg.reply(new JsonObject().put("outcomes", outcomes));
    });
    // [/downstream-eventbus]
  }

  static void httpDownstream(Vertx vertx) {
    // [downstream-http]
    vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(b -> {
      JsonArray outcomes = new JsonArray();
      for (Object o : b.toJsonObject().getJsonArray("inputs")) {
        outcomes.add(new JsonObject().put("ok", ((JsonObject) o).getValue("input")));
      }
      req.response().putHeader("Content-Type", "application/json")
          .end(new JsonObject().put("outcomes", outcomes).encode());
    })).listen(8080, "127.0.0.1");
    // [/downstream-http]
  }
}
