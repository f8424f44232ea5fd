package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

/** The HTTP downstream against a real Vert.x HTTP server on 127.0.0.1, port 0. */
class FerryVerticleHttpTest extends VerticleTestBase {
  private final List<JsonObject> requests = new CopyOnWriteArrayList<>();
  private final List<String> contentTypes = new CopyOnWriteArrayList<>();

  /** Starts a server that records each batch and lets {@code answer} respond; deploys the ferry at it. */
  private void serve(BiConsumer<HttpServerRequest, JsonObject> answer, JsonObject extra) {
    HttpServer server = await(vertx.createHttpServer()
        .requestHandler(req -> req.body().onSuccess(body -> {
          JsonObject batch = body.toJsonObject();
          requests.add(batch);
          contentTypes.add(req.getHeader("Content-Type"));
          answer.accept(req, batch);
        }))
        .listen(0, "127.0.0.1"));
    JsonObject downstream = new JsonObject().put("type", "http")
        .put("url", "http://127.0.0.1:" + server.actualPort() + "/batch").mergeIn(extra);
    deploy(new JsonObject().put("downstream", downstream));
  }

  private static JsonObject echo(JsonObject batch) {
    JsonArray outcomes = new JsonArray();
    batch.getJsonArray("inputs").forEach(i -> outcomes.add(new JsonObject().put("ok", ((JsonObject) i).getValue("input"))));
    return new JsonObject().put("outcomes", outcomes);
  }

  @Test
  void postsOneJsonBatchPerCallAndRepliesEachCaller() {
    serve((req, batch) -> req.response().end(echo(batch).toBuffer()), new JsonObject());
    Future<Message<Object>> r = send("k", new JsonObject().put("n", 1), "id", "req-1");
    assertEquals(new JsonObject().put("n", 1), body(r));
    assertEquals(new JsonObject().put("key", "k").put("inputs", new JsonArray()
        .add(new JsonObject().put("id", "req-1").put("input", new JsonObject().put("n", 1)))), requests.get(0));
    assertEquals("application/json", contentTypes.get(0));
    assertEquals("yes", body(send("k", "yes")));
  }

  @Test
  void non2xxIs502() {
    serve((req, batch) -> req.response().setStatusCode(500).end(echo(batch).toBuffer()), new JsonObject());
    assertEquals(502, code(send("k", 1)));
  }

  @Test
  void nonJsonBodyIs502() {
    serve((req, batch) -> req.response().end("<html>oops</html>"), new JsonObject());
    assertEquals(502, code(send("k", 1)));
  }

  @Test
  void aServerHangingPastTimeoutMsIs502() {
    serve((req, batch) -> { /* never answers */ }, new JsonObject().put("timeoutMs", 150));
    assertEquals(502, code(send("k", 1)));
  }
}
