package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.InvalidConfigException;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** Review AB: the operations surface as an operator's tools and templates meet it. */
class ReviewABOpsTest extends VerticleTestBase {

  /**
   * A port given as JSON null (a template whose variable was not set) was read as port 0: the
   * endpoint listened on a port the system chose, the deployment succeeded, and the scraper
   * configured for the intended port found nothing. A field set to null is as if absent
   * (contract notes 12.1), and an absent port is an error: so is a null one.
   */
  @Test
  void aNullPortIsMissingNotPortZero() {
    for (String endpoint : new String[] {"monitoring", "bridge"}) {
      JsonObject json = config(new JsonObject().put(endpoint, new JsonObject().putNull("port")));
      InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> VerticleConfig.read(json),
          endpoint + ".port null was accepted");
      assertTrue(e.getMessage().contains(endpoint + ".port: missing (required: 0-65535)"), e.getMessage());
    }
    // Port 0, said as such, still means "the system chooses".
    assertEquals(0, VerticleConfig.read(config(new JsonObject().put("monitoring", new JsonObject().put("port", 0))))
        .ops().monitoring().port());
  }

  /**
   * HEAD is the method a server must answer like GET (RFC 9110, 9.3.2), and some uptime checkers
   * and load balancers probe with it: {@code HEAD /health} answered 405, a node up read as
   * broken, and a node down as broken for the wrong reason. Now the same status as GET, no body.
   */
  @Test
  void headOnHealthAndMetricsAnswersAsGetDoes() {
    int port = TestPorts.free();
    deploy(config(new JsonObject().put("monitoring", new JsonObject().put("port", port))));
    assertTrue(httpGet(port, "/health").startsWith("200\n"));
    assertEquals(200, head(port, "/health"));
    assertEquals(200, head(port, "/metrics"));
    // Other methods are still refused.
    assertEquals(405, request(HttpMethod.POST, port, "/health"));
  }

  private int head(int port, String path) {
    return request(HttpMethod.HEAD, port, path);
  }

  private int request(HttpMethod method, int port, String path) {
    io.vertx.core.http.HttpClient client = vertx.createHttpClient();
    try {
      return await(client.request(new RequestOptions().setMethod(method).setHost("127.0.0.1").setPort(port)
              .setURI(path).setConnectTimeout(4_000).setIdleTimeout(4_000))
          .compose(req -> req.send().compose(resp -> resp.body().map(b -> resp.statusCode()))));
    } finally {
      client.close();
    }
  }

  /**
   * An endpoint that cannot listen (its port taken by another process, a host that does not
   * resolve) failed the deployment with Netty's words alone, "Address already in use" or "Failed
   * to resolve 'x'": with monitoring and a bridge configured, the operator could not tell which
   * field to fix. The failure now names the field, host and port, with the cause kept.
   */
  @Test
  void anEndpointThatCannotListenIsNamed() throws Exception {
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      int free = TestPorts.free();
      Throwable monitoring = failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
          new io.vertx.core.DeploymentOptions().setConfig(config(new JsonObject()
              .put("monitoring", new JsonObject().put("port", port))
              .put("bridge", new JsonObject().put("port", free))))));
      assertTrue(monitoring.getMessage().contains("monitoring (127.0.0.1:" + port + "): cannot listen"),
          String.valueOf(monitoring));
      Throwable bridge = failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
          new io.vertx.core.DeploymentOptions().setConfig(config(new JsonObject()
              .put("monitoring", new JsonObject().put("port", free))
              .put("bridge", new JsonObject().put("port", port))))));
      assertTrue(bridge.getMessage().contains("bridge (127.0.0.1:" + port + "): cannot listen"), String.valueOf(bridge));
    }
  }

  /**
   * A port or frame bound too large for an int was refused with the int's range ("must be from
   * -2147483648 to 2147483647"), not the field's: the message named a rule the field does not
   * have, and a negative port looked allowed. The field's own rule now, whatever the size.
   */
  @Test
  void aHugeValueIsRefusedWithTheFieldsOwnRule() {
    JsonObject json = config(new JsonObject()
        .put("monitoring", new JsonObject().put("port", 10_000_000_000L))
        .put("bridge", new JsonObject().put("port", -10_000_000_000L).put("maxFrameBytes", 1e10)));
    String m = assertThrows(InvalidConfigException.class, () -> VerticleConfig.read(json)).getMessage();
    assertTrue(m.contains("monitoring.port = 10000000000: must be 0-65535"), m);
    assertTrue(m.contains("bridge.port = -10000000000: must be 0-65535"), m);
    assertTrue(m.contains("bridge.maxFrameBytes = 10000000000: must be 4096 to 1073741824"), m);
    assertTrue(!m.contains("2147483647"), m);
  }
}
