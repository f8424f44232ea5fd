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
 * Review AP: the HTTP downstream's storm fixes (reviews AC and AE) pinned by tests whose verdict
 * does not hang on timing. The server answers nothing by itself: every answer is written when the
 * test says, and the test moves on only once the server saw the request it expects next. So which
 * batch waits for the pool, in which order, and which connection each answer closes are the
 * test's choice, not the scheduler's. {@link ReviewAcHttpDownstreamTest} keeps the storm run at
 * full speed, for the interleavings these scripts do not choose.
 *
 * <p>What each test leans on in Vert.x (5.0.7), checked by the test itself rather than assumed:
 * the pool hands a connection back to its first waiter as an answer's last byte is parsed, a
 * batch that asks again queues behind those already waiting, and a freed pool slot opens a
 * connection for the first waiter. Each step asserts which request the server saw next, and on
 * which connection, so that a change there fails the test with what happened instead of letting
 * it pass with nothing shown.
 */
class ReviewApStormPinTest extends VerticleTestBase {
  private HttpDownstream down;
  private HostileHttpServer server;

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

  /**
   * Calls a batch of the one input {@code input} on the client's context and returns once that
   * task ran: the batch is then in the pool, holding a connection or queued for one.
   */
  private Future<JsonArray> call(String input) {
    Promise<JsonArray> result = Promise.promise();
    Promise<Void> called = Promise.promise();
    client.runOnContext(v -> {
      down.call(batch("k-" + input, input)).onComplete(result);
      called.complete();
    });
    await(called.future());
    return result.future();
  }

  /**
   * The {@code n}-th request, which must carry {@code input} on connection {@code connection}; or,
   * if {@code watched} completes first (a batch failed where it should have waited), a failure
   * that says so at once instead of at the hang guard.
   */
  private HostileHttpServer.Request expect(int n, String input, int connection, Future<JsonArray> watched) {
    Future<HostileHttpServer.Request> next = server.request(n);
    Promise<Void> either = Promise.promise(); // Future.any waits for a success: a failure must end it too
    next.onComplete(r -> either.tryComplete());
    watched.onComplete(r -> either.tryComplete());
    await(either.future());
    if (!next.isComplete()) {
      Throwable why = watched.failed() ? watched.cause() : null;
      throw new AssertionError("request " + n + " (" + input + ") never came: the batch "
          + (why != null ? "failed unsent: " + why : "ended with " + watched.result()), why);
    }
    HostileHttpServer.Request r = next.result();
    assertEquals(input, r.input(0), "request " + n + "'s batch");
    assertEquals(connection, r.connection(), "the connection request " + n + " (" + input + ") came on");
    return r;
  }

  /**
   * Review AC. One pooled connection, busy with batch A; batch B queued for it. A's answer is
   * wrong (a 503, a 2xx that is not its outcomes), so this downstream closes A's connection: B must
   * be written on a new connection and get its own outcomes. Vert.x hands A's connection to B as
   * the answer's last byte is parsed, in the same read in which A's handlers close it; B written on
   * it failed "Connection was closed", a batch lost that never reached the server. (A 1xx taken as
   * final, which closes the connection too, is left to ReviewAcHttpDownstreamTest: Vert.x does not
   * hand that connection over, the final answer being still to come, so it pins nothing here.)
   */
  @Test
  void aBatchQueuedBehindAWrongAnswerIsWrittenOnANewConnection() {
    String[] wrong = {
        HostileHttpServer.response(503, "", ""),
        HostileHttpServer.response(200, "Content-Type: application/json\r\n", "[]"),
    };
    StringBuilder failed = new StringBuilder();
    for (String answer : wrong) {
      String what = answer.lines().findFirst().orElse("");
      server = HostileHttpServer.start(vertx, r -> { }); // answers only when the test writes
      down = new HttpDownstream(vertx, server.url(), 20_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, null, null, 1);
      Future<JsonArray> a = call("a");
      HostileHttpServer.Request ra = expect(0, "a", 0, a);
      Future<JsonArray> b = call("b"); // queued: the pool's one connection is A's
      ra.socket().write(answer);
      try {
        HostileHttpServer.Request rb = expect(1, "b", 1, b);
        rb.socket().write(ok("b"));
        assertEquals(oks("b"), await(b), "the queued batch");
        failure(a); // A's own wrong answer fails A
        await(server.closed(0)); // the wrong answer's connection is closed, not pooled
      } catch (AssertionError e) {
        failed.append(what).append(": ").append(e.getMessage()).append('\n');
      }
      await(down.close());
      down = null;
    }
    assertEquals("", failed.toString());
  }

  /**
   * Review AC, the other way a queued batch meets a closed connection: one Vert.x closed, not this
   * downstream. A's answer comes with a second answer behind it in one write; the pool hands A's
   * connection to B as A's answer ends, and Vert.x closes it on reading the answer nobody asked
   * for, before B is written. B, never sent, must ask for another connection and get its own
   * outcomes, not fail "Connection was closed".
   */
  @Test
  void aBatchQueuedBehindASecondAnswerIsWrittenOnANewConnection() {
    server = HostileHttpServer.start(vertx, r -> { }); // answers only when the test writes
    down = new HttpDownstream(vertx, server.url(), 20_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, null, null, 1);
    Future<JsonArray> a = call("a");
    HostileHttpServer.Request ra = expect(0, "a", 0, a);
    Future<JsonArray> b = call("b"); // queued: the pool's one connection is A's
    ra.socket().write(ok("a") + ok("a-second-answer"));
    HostileHttpServer.Request rb = expect(1, "b", 1, b);
    rb.socket().write(ok("b"));
    assertEquals(oks("a"), await(a));
    assertEquals(oks("b"), await(b), "the queued batch");
    await(server.closed(0));
  }

  /**
   * Review AE. A pool of 2 in a 5xx storm, scripted so that one batch, V, is first in the pool's
   * queue each time an answer is a 503: Vert.x hands V four connections in a row that this
   * downstream closes after those 503s, and V must still be written (on a fifth) and get its own
   * outcomes. Each such connection stands for an answer the server gave, not for a server that
   * refuses connections; counted toward the 3 asks a batch has, the fourth failed V unsent.
   *
   * <p>The choreography: A1 and A2 hold both connections (0 and 1); V, then W, wait. A1's 503
   * hands connection 0 to V, which asks again behind W; connection 0's slot, once closed, opens
   * connection 2 for W. X is queued behind V, A2's 503 hands connection 1 to V, connection 3 opens
   * for X; Y likewise after W's 503 (connection 2 to V, 4 for Y); X's 503 hands V connection 3,
   * the fourth, and connection 5 opens for V at last.
   */
  @Test
  void aBatchHandedFourConnectionsClosedAfter503sInARowIsStillSent() {
    String unavailable = HostileHttpServer.response(503, "", "");
    server = HostileHttpServer.start(vertx, r -> { }); // answers only when the test writes
    down = new HttpDownstream(vertx, server.url(), 20_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, null, null, 2);
    Future<JsonArray> a1 = call("a1");
    HostileHttpServer.Request ra1 = expect(0, "a1", 0, a1);
    Future<JsonArray> a2 = call("a2");
    HostileHttpServer.Request ra2 = expect(1, "a2", 1, a2);
    Future<JsonArray> v = call("v");
    Future<JsonArray> w = call("w");

    ra1.socket().write(unavailable); // connection 0 to V: the first closed one it is handed
    HostileHttpServer.Request rw = expect(2, "w", 2, v);
    Future<JsonArray> x = call("x");
    ra2.socket().write(unavailable); // connection 1 to V: the second
    HostileHttpServer.Request rx = expect(3, "x", 3, v);
    Future<JsonArray> y = call("y");
    rw.socket().write(unavailable); // connection 2 to V: the third
    HostileHttpServer.Request ry = expect(4, "y", 4, v);
    rx.socket().write(unavailable); // connection 3 to V: the fourth
    HostileHttpServer.Request rv = expect(5, "v", 5, v);

    rv.socket().write(ok("v"));
    ry.socket().write(ok("y"));
    assertEquals(oks("v"), await(v), "V, handed four closed connections, is sent once and answered");
    assertEquals(oks("y"), await(y));
    for (Future<JsonArray> f : java.util.List.of(a1, a2, w, x)) {
      assertTrue(failure(f).getMessage().contains("HTTP 503"), "a 503's own batch: " + failure(f));
    }
    for (int c = 0; c < 4; c++) {
      await(server.closed(c)); // each 503's connection closed, never written on again
    }
    assertEquals(java.util.List.of("a1", "a2", "w", "x", "y", "v"), await(server.firstInputs()),
        "each batch sent once");
  }
}
