package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.InvalidConfigException;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Deployment config: every violation in one message; defaults; the shipped conf/ferry.json. */
class FerryVerticleConfigTest extends VerticleTestBase {

  private String deployFailure(JsonObject config) {
    Throwable t = failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(config)));
    assertTrue(t instanceof InvalidConfigException, "not an InvalidConfigException: " + t);
    return t.getMessage();
  }

  @Test
  void everyBadFieldIsNamedInOneMessage() {
    String message = deployFailure(new JsonObject()
        .put("maxBatchSize", 0)
        .put("maxQueueing", "ten")
        .put("maxBatchDelayMs", -5)
        .put("callTimeoutMs", 0)
        .put("drainTimeoutMs", -1)
        .put("order", "random")
        .put("directIdleKeys", "yes")
        .put("maxBatchSzie", 10));
    for (String field : new String[] {"maxBatchSize = 0", "maxQueueing = \"ten\"", "maxBatchDelayMs = -5",
        "callTimeoutMs = 0", "drainTimeoutMs = -1", "order = \"random\"", "directIdleKeys = \"yes\"",
        "maxBatchSzie: unknown field", "downstream: missing"}) {
      assertTrue(message.contains(field), "no \"" + field + "\" in: " + message);
    }
    // One line each: the Duration-named rules of PerKeyConfig do not repeat them.
    assertTrue(!message.contains("maxBatchDelay =") && !message.contains("callTimeout ="), message);
  }

  @Test
  void badDownstreamsAreNamed() {
    assertTrue(deployFailure(new JsonObject().put("downstream", new JsonObject().put("type", "ftp")))
        .contains("downstream.type = \"ftp\""));
    assertTrue(deployFailure(new JsonObject().put("downstream", "ferry.downstream"))
        .contains("downstream = \"ferry.downstream\": must be a JSON object"));
    String http = deployFailure(new JsonObject().put("downstream",
        new JsonObject().put("type", "http").put("url", "localhost:8080").put("timeoutMs", 0).put("retries", 3)));
    for (String part : new String[] {"downstream.url = \"localhost:8080\"", "downstream.timeoutMs = 0",
        "downstream.retries: unknown field"}) {
      assertTrue(http.contains(part), "no \"" + part + "\" in: " + http);
    }
    String loop = deployFailure(new JsonObject().put("downstream",
        new JsonObject().put("type", "eventbus").put("address", "ferry.submit")));
    assertTrue(loop.contains("downstream.address = \"ferry.submit\": must differ from address"), loop);
  }

  @Test
  void defaultsNeedOnlyADownstreamAndMetricsAnswer() {
    deploy(config(new JsonObject()));
    JsonObject m = metrics();
    for (String field : new String[] {"inFlightBatches", "queuedInputs", "queuedWeight", "activeLanes",
        "submitted", "rejected", "batches", "directCalls", "failedBatches"}) {
      assertTrue(m.containsKey(field), field + " missing from " + m.encode());
    }
  }

  @Test
  void theShippedConfDeploysAndServes() throws Exception {
    JsonObject conf = new JsonObject(Files.readString(Path.of("../conf/ferry.json")));
    assertEquals("ferry.downstream", conf.getJsonObject("downstream").getString("address"));
    conf.getJsonObject("downstream").put("address", DOWN);
    deploy(conf);
    var reply = send("k", new JsonObject().put("n", 1));
    await(downstream.call(0)).echo();
    assertEquals(new JsonObject().put("n", 1), body(reply));
  }
}
