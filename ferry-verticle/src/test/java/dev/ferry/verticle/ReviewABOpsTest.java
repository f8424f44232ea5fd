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
}
