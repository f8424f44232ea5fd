package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.InvalidConfigException;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.json.JsonArray;
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
    // Its own metrics or health endpoint: every batch would fail as malformed, found only at run time.
    for (String own : new String[] {"ferry.metrics", "ferry.health"}) {
      String self = deployFailure(new JsonObject().put("downstream",
          new JsonObject().put("type", "eventbus").put("address", own)));
      assertTrue(self.contains("downstream.address = \"" + own + "\": must differ from metricsAddress and healthAddress"), self);
    }
  }

  @Test
  void badHttpHeadersTlsAndResponseBoundAreNamedAndSecretsNeverQuoted() {
    String http = deployFailure(new JsonObject().put("downstream", new JsonObject().put("type", "http")
        .put("url", "http://localhost:8080/batch")
        .put("headers", new JsonObject().put("Authorization", 42).put("Content-Type", "text/plain")
            .put("bad name", "v").put("X-Split", "secret\r\nInjected: 1"))
        .put("maxResponseBytes", 0)
        .put("tls", new JsonObject().put("trustAll", "yes"))));
    for (String part : new String[] {"downstream.headers.Authorization = 42: must be a string",
        "downstream.headers.Content-Type = \"...\": is set by the ferry", "downstream.headers.bad name",
        "downstream.headers.X-Split = \"...\": must be a string without line breaks",
        "downstream.maxResponseBytes = 0", "downstream.tls = {...}: only with an https:// url",
        "downstream.tls.trustAll = \"yes\""}) {
      assertTrue(http.contains(part), "no \"" + part + "\" in: " + http);
    }
    assertTrue(!http.contains("secret") && !http.contains("text/plain"), "a header value was quoted: " + http);
    String tls = deployFailure(new JsonObject().put("downstream", new JsonObject().put("type", "http")
        .put("url", "https://localhost:8443/batch")
        .put("tls", new JsonObject().put("trustPem", new JsonArray()).put("trustStore", new JsonObject()
                .put("path", "t.p12").put("type", "pem").put("pasword", "x"))
            .put("certPem", "c.pem").put("verify", true))));
    for (String part : new String[] {"downstream.tls.trustPem = []", "downstream.tls.trustStore.type = \"pem\"",
        "downstream.tls.trustStore.pasword: unknown field", "give trustPem or trustStore, not both",
        "downstream.tls.certPem/keyPem", "downstream.tls.verify: unknown field"}) {
      assertTrue(tls.contains(part), "no \"" + part + "\" in: " + tls);
    }
    // The event-bus downstream has none of these.
    assertTrue(deployFailure(new JsonObject().put("downstream", new JsonObject().put("type", "eventbus")
        .put("address", "d").put("headers", new JsonObject()))).contains("downstream.headers: unknown field"));
  }

  /** ADR 0016: a deployment that names no mode runs adaptive dispatch, its limit learned under a ceiling of 256. */
  @Test
  void withNoDispatchGivenTheVerticleRunsAdaptiveDispatch() {
    dev.ferry.PerKeyConfig perKey = VerticleConfig.read(config(new JsonObject())).perKey();
    assertEquals(dev.ferry.Dispatch.ADAPTIVE, perKey.dispatch());
    assertEquals(256, perKey.maxInFlightBatches());
    assertEquals(0, perKey.pinnedLimit());
    String id = deploy(config(new JsonObject()));
    // A learned limit starts at 1 (fixed slots would report their 16 batch slots).
    assertEquals(1, metrics().getInteger("callLimit"), "the learned limit at its start");
    await(vertx.undeploy(id));
    deploy(config(new JsonObject().put("dispatch", "fixed-slots")));
    assertEquals(16, metrics().getInteger("callLimit"), "the seeds' mode, asked for by name");
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
