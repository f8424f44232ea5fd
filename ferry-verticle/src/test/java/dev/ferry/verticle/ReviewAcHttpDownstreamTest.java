package dev.ferry.verticle;

import static dev.ferry.verticle.HostileHttpServer.batch;
import static dev.ferry.verticle.HostileHttpServer.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.downstream.HttpDownstream;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review AC: review AA's fixes to the HTTP downstream, attacked. A connection closed after a wrong
 * answer must cost only that answer's batch, never a batch waiting in the pool for it.
 */
class ReviewAcHttpDownstreamTest extends VerticleTestBase {
  private HttpDownstream down;

  @AfterEach
  void closeDownstream() {
    if (down != null) {
      await(down.close());
    }
  }

  private static JsonArray oks(Object... values) {
    JsonArray a = new JsonArray();
    for (Object v : values) {
      a.add(new JsonObject().put("ok", v));
    }
    return a;
  }

  /** Two batches called in one task of the client's context: the second waits for the pool. */
  private Future<JsonArray>[] callTwo() {
    Promise<JsonArray> a = Promise.promise();
    Promise<JsonArray> b = Promise.promise();
    client.runOnContext(v -> {
      down.call(batch("a", "A")).onComplete(a);
      down.call(batch("b", "B")).onComplete(b);
    });
    @SuppressWarnings("unchecked")
    Future<JsonArray>[] both = new Future[] {a.future(), b.future()};
    return both;
  }

  /**
   * One pooled connection, a second batch waiting for it, the first answered with something that
   * closes the connection (a 5xx, a 2xx that is not its outcomes, a 1xx): the waiting batch gets a
   * new connection and its own outcomes, not a failure for a batch it never was. Vert.x hands the
   * connection back when the answer's last byte is parsed, before the first batch's handlers ran
   * and closed it: the second batch got a connection about to close and failed with "Connection
   * was closed", its write begun on the closing connection (a 5xx) or not (a 2xx that is not the
   * outcomes); the server never received it.
   */
  @Test
  void aBatchWaitingInThePoolIsNotFailedByTheConnectionAWrongAnswerClosed() {
    String[] wrong = {
        HostileHttpServer.response(503, "", ""),
        HostileHttpServer.response(200, "Content-Type: application/json\r\n", "[]"),
        "HTTP/1.1 102 Processing\r\n\r\n",
    };
    StringBuilder failed = new StringBuilder();
    for (String first : wrong) {
      HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
        if (r.index() == 0) {
          r.socket().write(first);
        } else {
          r.socket().write(ok(r.input(0)));
        }
      });
      down = new HttpDownstream(vertx, server.url(), 10_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, null, null, 1);
      Future<JsonArray>[] both = callTwo();
      failure(both[0]);
      String what = first.lines().findFirst().orElse("");
      try {
        assertEquals(oks("B"), await(both[1]), what + ": the waiting batch");
      } catch (AssertionError e) {
        failed.append(what).append(" -> ").append(e.getMessage()).append('\n');
      }
      // Sent once, and not on the connection the wrong answer came on.
      assertEquals(java.util.List.of("A", "B"), await(server.firstInputs()), what);
      assertTrue(await(server.request(1)).connection() > 0, what + ": B was written on the closed connection");
      await(down.close());
      down = null;
    }
    assertEquals("", failed.toString());
  }

  /**
   * A storm of 5xx on a small pool: every batch ends with its own answer, its outcomes or its own
   * 503, never a failure for a connection another batch's 503 closed, and none is sent twice.
   */
  @Test
  void aServerErrorStormFailsOnlyTheBatchesItAnswered() {
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> r.socket().write(
        r.input(0).toString().endsWith("5") || r.index() % 2 == 0
            ? HostileHttpServer.response(503, "", "") : ok(r.input(0))));
    down = new HttpDownstream(vertx, server.url(), 10_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, null, null, 2);
    int n = 40;
    java.util.List<Promise<JsonArray>> calls = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      calls.add(Promise.promise());
    }
    client.runOnContext(v -> {
      for (int i = 0; i < n; i++) {
        down.call(batch("k" + i, "i" + i)).onComplete(calls.get(i));
      }
    });
    await(Future.join(calls.stream().map(Promise::future).toList()).otherwiseEmpty());
    StringBuilder wrong = new StringBuilder();
    for (int i = 0; i < n; i++) {
      Future<JsonArray> f = calls.get(i).future();
      if (f.succeeded() ? !f.result().equals(oks("i" + i)) : !f.cause().getMessage().contains("HTTP 503")) {
        wrong.append("i").append(i).append(": ").append(f.succeeded() ? f.result() : f.cause()).append('\n');
      }
    }
    assertEquals("", wrong.toString());
    java.util.List<Object> sent = await(server.firstInputs());
    assertEquals(new java.util.HashSet<>(sent).size(), sent.size(), "a batch sent twice: " + sent);
    assertEquals(n, sent.size(), "a batch never sent: " + sent);
  }
}
