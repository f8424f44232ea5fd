package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.verticle.FerryVerticle;
import dev.ferry.verticle.FerryVerticleOptions;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.Status;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Clustered, every node serves the same metrics and health addresses: each answer names the node
 * that gave it ({@code node}, the id the cluster routes by), on the event bus, over HTTP and
 * through {@code healthProcedure()}, with every earlier field still there. One clustered node
 * (two would take turns answering; the field is the same). Before, no answer named its node.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterNamedAnswersTest {
  private ClusterHarness cluster;
  private Vertx node;
  private FerryVerticle verticle;
  private int port;
  private String id;

  @BeforeAll
  void start() {
    cluster = new ClusterHarness();
    node = cluster.start();
    port = ClusterHarness.freePort();
    JsonObject config = ClusterHarness.config("down.named",
        new JsonObject().put("monitoring", new JsonObject().put("port", port)));
    verticle = new FerryVerticle(new FerryVerticleOptions(config));
    await(node.deployVerticle(verticle, new DeploymentOptions()));
    id = ClusterHarness.nodeId(node);
  }

  @AfterAll
  void stop() {
    cluster.close();
  }

  private JsonObject ask(String address) {
    Promise<Message<JsonObject>> reply = Promise.promise();
    cluster.clients.get(0).runOnContext(v -> node.eventBus().<JsonObject>request(address, null).onComplete(reply));
    return await(reply.future()).body();
  }

  @Test
  void theMetricsAnswerNamesTheNodeAndKeepsItsFields() {
    JsonObject m = ask("ferry.metrics");
    assertEquals(id, m.getString("node"), m.encode());
    for (String field : new String[] {"inFlightBatches", "queuedInputs", "queuedWeight", "activeLanes", "submitted",
        "rejected", "batches", "directCalls", "failedBatches"}) {
      assertTrue(m.containsKey(field), field + " missing: " + m.encode());
    }
  }

  @Test
  void theHealthAnswersNameTheNode() {
    JsonObject h = ask("ferry.health");
    JsonObject data = h.getJsonArray("checks").getJsonObject(0).getJsonObject("data");
    assertEquals(id, data.getString("node"), h.encode());
    assertEquals("up", data.getString("state"), h.encode());
    assertEquals("ferry.submit", data.getString("address"), h.encode());

    io.vertx.core.http.HttpClient http = node.createHttpClient();
    try {
      String body = await(http.request(io.vertx.core.http.HttpMethod.GET, port, "127.0.0.1", "/health")
          .compose(req -> req.send()).compose(resp -> resp.body().map(Object::toString)));
      assertTrue(body.contains("\"node\":\"" + id + "\""), body);
    } finally {
      http.close();
    }

    Promise<Status> status = Promise.promise();
    verticle.healthProcedure().handle(status);
    assertEquals(id, await(status.future()).getData().getString("node"));
  }

  @Test
  void theNodeNamedIsTheOneTheClusterRoutesBy() {
    assertEquals(cluster.view(0).getString("node"), ask("ferry.metrics").getString("node"));
  }
}
