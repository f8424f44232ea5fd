package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The single-node submit path attacked as careless or hostile users do: bodies the downstream's
 * JSON cannot carry, configs at their edges, two ferries in one Vert.x. Each case is a defect that
 * was found and fixed; the test names say what holds now. No test sleeps or measures time: each
 * waits for the replies it asserts on.
 */
class SubmitHostileTest extends VerticleTestBase {
  /** The batches the HTTP downstream of {@link #httpEcho} received, in arrival order. */
  private final List<JsonObject> posted = new CopyOnWriteArrayList<>();

  /** An HTTP downstream on 127.0.0.1 that records each batch and echoes its inputs; its url. */
  private String httpEcho() {
    HttpServer server = await(vertx.createHttpServer()
        .requestHandler(req -> req.body().onSuccess(body -> {
          JsonObject batch = body.toJsonObject();
          posted.add(batch);
          JsonArray outcomes = new JsonArray();
          batch.getJsonArray("inputs").forEach(i -> outcomes.add(new JsonObject().put("ok", ((JsonObject) i).getValue("input"))));
          req.response().end(new JsonObject().put("outcomes", outcomes).toBuffer());
        }))
        .listen(0, "127.0.0.1"));
    return "http://127.0.0.1:" + server.actualPort() + "/batch";
  }

  private static JsonObject http(String url) {
    return new JsonObject().put("type", "http").put("url", url);
  }

  @Test
  void theLargestMaxInFlightBatchesWithAnHttpDownstreamDeploysAndServesInEitherMode() {
    // The HTTP pool was sized 2 * maxInFlightBatches (fixed slots): past 2^30 that overflowed, the
    // deploy failed with a bare IllegalArgumentException and, thrown after the address was
    // claimed, left the address refused for good. Adaptive, the pool of Integer.MAX_VALUE slots
    // failed every batch with 502 ("Requested array size exceeds VM limit").
    String url = httpEcho();
    int n = 0;
    for (String dispatch : new String[] {"fixed-slots", "adaptive"}) {
      String id = deploy(new JsonObject().put("dispatch", dispatch).put("maxInFlightBatches", Integer.MAX_VALUE)
          .put("downstream", http(url)));
      assertEquals(dispatch, body(send("k", dispatch)), dispatch);
      assertEquals(++n, posted.size());
      await(vertx.undeploy(id));
    }
  }
}
