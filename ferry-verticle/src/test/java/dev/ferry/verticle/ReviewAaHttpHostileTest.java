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
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review AA: the HTTP downstream against a server that misbehaves on purpose (a raw socket, see
 * {@link HostileHttpServer}). What must never happen: a batch's call completing with another
 * batch's outcomes, a call that never completes, or a batch sent twice. A failure (502 for its
 * callers: the batch may have been applied) is acceptable.
 */
class ReviewAaHttpHostileTest extends VerticleTestBase {
  private HttpDownstream down;

  @AfterEach
  void closeDownstream() {
    if (down != null) {
      await(down.close());
    }
  }

  /** A downstream with one pooled connection, so that every batch would reuse the last one's. */
  /**
   * A server that answers the first request with {@code first}, and then writes {@code behind}
   * ahead of each answer on that first connection: bytes a client that pooled it would read as the
   * next batch's answer. Requests on later connections get their plain outcomes.
   */
  private HostileHttpServer leftBehind(String first, String behind) {
    return HostileHttpServer.start(vertx, r -> {
      if (r.index() == 0) {
        r.socket().write(first);
      } else if (r.connection() == 0) {
        r.socket().write(behind + ok(r.input(0)));
      } else {
        r.socket().write(ok(r.input(0)));
      }
    });
  }

  /** A server that writes its first answer twice, back to back in one write. */
  private HostileHttpServer answersTheFirstTwice() {
    return HostileHttpServer.start(vertx, r -> {
      if (r.index() == 0) {
        r.socket().write(ok(r.input(0)) + ok("a-second-answer"));
      } else {
        r.socket().write(ok(r.input(0)));
      }
    });
  }

  /** Closes this round's downstream, for a test that tries one status after another. */
  private void endRound() {
    await(down.close());
    down = null;
  }

  private HttpDownstream downstream(HostileHttpServer server, long maxResponseBytes) {
    down = new HttpDownstream(vertx, server.url(), 10_000, maxResponseBytes, null, null, 1);
    return down;
  }

  /** Calls the downstream from the test's one context, as the ferry calls it from its own. */
  private Future<JsonArray> call(String key, Object... inputs) {
    Promise<JsonArray> p = Promise.promise();
    client.runOnContext(v -> down.call(batch(key, inputs)).onComplete(p));
    return p.future();
  }

  private static JsonArray oks(Object... values) {
    JsonArray a = new JsonArray();
    for (Object v : values) {
      a.add(new JsonObject().put("ok", v));
    }
    return a;
  }

  /**
   * Open question of earlier reviews: an answer whose Content-Length is over maxResponseBytes is
   * failed at its head and its request reset. In Vert.x 5.0.7 a reset of an HTTP/1.1 request whose
   * answer has begun closes the connection (Http1xClientConnection.reset: the stream is among those
   * awaiting an answer); were it pooled again instead, the rest of the declared body would be read
   * on it. The server holds the body back and gives it (a whole response in itself) only to a
   * request that comes on the same connection: the next batch must come on a new one.
   */
  @Test
  void anAnswerDeclaredTooLongClosesItsConnectionSoItsBodyIsNeverTheNextAnswer() {
    String body = ok("a-body-read-as-the-next-answer");
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      if (r.index() == 0) {
        r.socket().write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n");
      } else if (r.connection() == 0) {
        r.socket().write(body + ok("b-on-the-old-connection"));
      } else {
        r.socket().write(ok(r.input(0)));
      }
    });
    downstream(server, 64);
    // The failure is the batch's: Vert.x logged the reset of an answer that had no exception
    // handler yet at SEVERE, "Stream reset: 0", with no key or cause.
    java.util.logging.Logger vertxLogs = java.util.logging.Logger.getLogger("io.vertx");
    LogCapture severe = new LogCapture(java.util.logging.Level.SEVERE);
    vertxLogs.addHandler(severe);
    try {
      Throwable a = failure(call("a", "A"));
      assertTrue(a.getMessage().contains("longer than maxResponseBytes"), a.getMessage());
      await(server.closed(0)); // the client closed it: nothing more is read on it
      assertEquals(oks("B"), await(call("b", "B")));
      assertEquals(1, await(server.request(1)).connection(), "the next batch came on the old connection");
    } finally {
      vertxLogs.removeHandler(severe);
    }
    assertEquals(List.of(), severe.lines);
  }

  /**
   * Open question of earlier reviews: a server that writes a second whole answer right behind the
   * first (both in one write). The ferry sends a key's next batch as soon as its call completes,
   * from within that completion; with one pooled connection the next batch must not read the
   * second answer as its own.
   */
  @Test
  void aSecondAnswerInTheSameWriteIsNeverTheNextBatchsAnswer() {
    HostileHttpServer server = answersTheFirstTwice();
    downstream(server, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES);
    Promise<JsonArray> b = Promise.promise();
    Promise<JsonArray> a = Promise.promise();
    client.runOnContext(v -> down.call(batch("a", "A")).onComplete(ar -> {
      a.handle(ar);
      down.call(batch("b", "B")).onComplete(b); // inline, as the ferry sends what waited
    }));
    assertEquals(oks("A"), await(a.future()));
    Object bAnswer = await(b.future().map(x -> (Object) x).recover(e -> Future.succeededFuture(e.getMessage())));
    assertTrue(oks("B").equals(bAnswer) || bAnswer instanceof String, "b got " + bAnswer);
  }

  /**
   * The same, with the next batch sent after the first call completed (its completion gone by):
   * the second answer reaches an idle pooled connection.
   */
  @Test
  void aSecondAnswerOnAnIdleConnectionIsNeverTheNextBatchsAnswer() {
    HostileHttpServer server = answersTheFirstTwice();
    downstream(server, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES);
    assertEquals(oks("A"), await(call("a", "A")));
    Object bAnswer = await(call("b", "B").map(x -> (Object) x).recover(e -> Future.succeededFuture(e.getMessage())));
    assertTrue(oks("B").equals(bAnswer) || bAnswer instanceof String, "b got " + bAnswer);
  }

  /**
   * The same attack seen by the ferry's callers: key "a"'s answer comes with a second one behind
   * it while key "b"'s input waits for the one call the ferry may have out (and the one connection
   * its pool then holds); "b"'s batch leaves as "a"'s call completes. "b"'s caller was answered
   * with the second answer, an outcome of no input of its own.
   */
  @Test
  void aSecondAnswerNeverReachesAnotherKeysCaller() {
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      if (r.index() > 0) {
        r.socket().write(ok(r.input(0)));
      } // the first is answered by the test, once "b" waits
    });
    deploy(new JsonObject().put("maxInFlightBatches", 1).put("downstream", new JsonObject().put("type", "http")
        .put("url", server.url()).put("timeoutMs", 600_000)));
    Future<io.vertx.core.eventbus.Message<Object>> a = send("a", "A");
    HostileHttpServer.Request first = await(server.request(0));
    Future<io.vertx.core.eventbus.Message<Object>> b = send("b", "B");
    admitted(2);
    first.socket().write(ok("A") + ok("a-second-answer"));
    assertEquals("A", body(a));
    Object bAnswer = await(b.map(m -> m.body()).recover(e -> Future.succeededFuture(
        ((io.vertx.core.eventbus.ReplyException) e).failureCode())));
    assertTrue("B".equals(bAnswer) || Integer.valueOf(502).equals(bAnswer), "b's caller got " + bAnswer);
  }

  /**
   * A second answer that arrives only once the next batch is on the wire is that batch's answer to
   * any HTTP/1.1 client (ADR 0162). Here it holds one outcome for two inputs, so that batch fails;
   * its own answer then follows on the connection. Pooled again, the connection gave that answer
   * to the batch after: key "c"'s call completed with key "b"'s outcomes.
   */
  @Test
  void anAnswerThatIsNotTheBatchsClosesItsConnectionSoTheAnswerBehindItIsNeverTheNextBatchs() {
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      if (r.index() == 0) {
        r.socket().write(ok("A"));
      } else if (r.connection() == 0 && r.index() == 1) {
        r.socket().write(ok("a-second-answer")); // "b"'s own answer is held back ...
      } else if (r.connection() == 0) {
        r.socket().write(ok("B1", "B2") + ok(r.input(0), r.input(1))); // ... until a request follows
      } else {
        r.socket().write(ok(r.input(0), r.input(1)));
      }
    });
    downstream(server, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES);
    assertEquals(oks("A"), await(call("a", "A")));
    Throwable b = failure(call("b", "B1", "B2"));
    assertTrue(b.getMessage().contains("1 outcomes for 2 inputs"), b.getMessage());
    Object c = await(call("c", "C1", "C2").map(x -> (Object) x).recover(e -> Future.succeededFuture(e.getMessage())));
    assertEquals(oks("C1", "C2"), c, "c's call completed with another batch's answer (or failed)");
  }

  /**
   * 204 and 304 answers have no body by HTTP's rule, whatever their Content-Length says, and
   * neither is outcomes: the batch fails. A body sent anyway (here a whole answer in itself, sent
   * once a next request comes on the connection) was read as the next batch's answer.
   */
  @Test
  void aBodylessAnswerClosesItsConnectionSoABodySentAnywayIsNeverTheNextAnswer() {
    for (int status : new int[] {204, 304}) {
      String body = ok("a-body-read-as-the-next-answer");
      HostileHttpServer server = leftBehind("HTTP/1.1 " + status + " X\r\nContent-Length: " + body.length() + "\r\n\r\n", body);
      downstream(server, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES);
      failure(call("a", "A"));
      assertEquals(oks("B"), await(call("b", "B")), status + ": the next batch read another answer");
      assertEquals(1, await(server.request(1)).connection(), status + ": the next batch came on the old connection");
      endRound();
    }
  }

  /**
   * Guarantee 7, an input is sent at most once, against a server that reads a batch and closes
   * the connection without answering (as one does when it drops a keep-alive connection the
   * client has just written on): the batch fails, 502 for its callers (it may have been applied),
   * and is never written again on a new connection.
   */
  @Test
  void aConnectionClosedWithNoAnswerFailsTheBatchAndNeverSendsItAgain() {
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      if (r.index() == 1) {
        r.socket().close();
      } else {
        r.socket().write(ok(r.input(0)));
      }
    });
    downstream(server, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES);
    assertEquals(oks("A"), await(call("a", "A")));
    failure(call("b", "B"));
    assertEquals(oks("C"), await(call("c", "C")));
    await(server.request(2));
    assertEquals(List.of("A", "B", "C"), await(server.firstInputs()), "the failed batch was sent again");
  }

  /**
   * The same after an idle connection the server closed between two batches: the next batch goes
   * on a new connection, or, if it was written before the client saw the close, fails; it is
   * never sent twice.
   */
  @Test
  void aPooledConnectionTheServerClosedIsNeverABatchSentTwice() {
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      if (r.index() == 0) {
        r.socket().write(ok(r.input(0))).onComplete(v -> r.socket().close());
      } else {
        r.socket().write(ok(r.input(0)));
      }
    });
    downstream(server, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES);
    assertEquals(oks("A"), await(call("a", "A")));
    await(server.closed(0));
    Object b = await(call("b", "B").map(x -> (Object) x).recover(e -> Future.succeededFuture(e.getMessage())));
    assertTrue(oks("B").equals(b) || b instanceof String, "b: " + b);
    assertEquals(oks("C"), await(call("c", "C")));
    List<Object> sent = await(server.firstInputs());
    assertEquals(oks("B").equals(b) ? List.of("A", "B", "C") : List.of("A", "C"), sent,
        "b answered " + b + " after these requests");
  }

  /**
   * A chunked answer cut off by the connection's close, after a chunk that is a whole answer in
   * itself: the answer did not end, so it is not the batch's outcomes, whatever it held so far.
   */
  @Test
  void aChunkedAnswerCutOffIsAFailureEvenWhenWhatCameParses() {
    String outcomes = HostileHttpServer.outcomes("A");
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      r.socket().write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
          + Integer.toHexString(outcomes.length()) + "\r\n" + outcomes + "\r\n");
      r.socket().close();
    });
    downstream(server, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES);
    Throwable a = failure(call("a", "A"));
    assertTrue(a.getMessage().contains("broke off"), a.getMessage());
  }

  /**
   * HTTP/2 (a library user may pass client options asking for it) gives each answer its own
   * stream, so a wrong answer leaves nothing on the connection for another batch, and its reset
   * ends only its stream. Closing the connection, as HTTP/1.x needs (ADR 0163), failed every other
   * batch in flight on it: here one the server had applied and was answering.
   */
  @Test
  void anHttp2AnswerThatIsNotTheBatchsFailsOnlyItsOwnBatch() {
    List<Runnable> held = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<String> versions = new java.util.concurrent.CopyOnWriteArrayList<>();
    io.vertx.core.http.HttpServer server = await(vertx.createHttpServer()
        .requestHandler(req -> req.body().onSuccess(b -> {
          versions.add(String.valueOf(req.version()));
          Object input = b.toJsonObject().getJsonArray("inputs").getJsonObject(0).getValue("input");
          if ("held".equals(input)) {
            held.add(() -> req.response().end(HostileHttpServer.outcomes(input)));
          } else {
            req.response().end("not json");
          }
        })).listen(0, "127.0.0.1"));
    down = new HttpDownstream(vertx, "http://127.0.0.1:" + server.actualPort() + "/batch", 10_000,
        HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, new io.vertx.core.http.HttpClientOptions()
            .setProtocolVersion(io.vertx.core.http.HttpVersion.HTTP_2).setHttp2ClearTextUpgrade(false), null, 4);
    Future<JsonArray> inFlight = call("h", "held");
    await(Future.future(p -> vertx.setPeriodic(5, t -> {
      if (held.size() == 1) {
        vertx.cancelTimer(t);
        p.complete();
      }
    })));
    Throwable bad = failure(call("b", "bad"));
    assertTrue(bad.getMessage().contains("not a JSON object"), bad.getMessage());
    held.forEach(Runnable::run);
    assertEquals(oks("held"), await(inFlight));
    assertEquals(List.of("HTTP_2", "HTTP_2"), versions);
  }

  /**
   * A redirect, 307 and 308 included (which tell a client to send the same POST again elsewhere),
   * fails the batch and is never followed: followed, the batch would be sent twice, and guarantee
   * 7 says an input is sent at most once. Here the redirect points back at the server itself, so
   * a batch sent again would be seen.
   */
  @Test
  void aRedirectIsAFailureAndTheBatchIsNeverSentAgain() {
    int[] codes = {301, 302, 303, 307, 308};
    HostileHttpServer[] self = new HostileHttpServer[1];
    self[0] = HostileHttpServer.start(vertx, r -> r.socket().write(HostileHttpServer.response(codes[r.index() % codes.length],
        "Location: " + self[0].url() + "\r\n", "")));
    downstream(self[0], HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES);
    List<Object> sent = new java.util.ArrayList<>();
    for (int code : codes) {
      Throwable t = failure(call("k", "to-" + code));
      assertTrue(t.getMessage().contains("HTTP " + code), t.getMessage());
      sent.add("to-" + code);
    }
    assertEquals(sent, await(self[0].firstInputs()));
  }

  /**
   * HTTP/1.1 pipelining (client options a library user may pass) writes a batch behind another on
   * one connection before the first is answered: a second answer to the first then has a request
   * waiting and is read as its answer, however it arrives (ADR 0162's defence needs the connection
   * idle). The server answers "a" twice, and "b", once "b" is written behind "a". Not pipelined,
   * "b" waits for the one connection, "a" gets no answer and both fail at the deadline.
   */
  @Test
  void pipeliningAskedForInTheOptionsNeverLetsABatchReadAnothersAnswer() {
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      if (r.index() == 1 && r.connection() == 0) {
        r.socket().write(ok("A") + ok("a-second-answer") + ok(r.input(0)));
      } else if (r.index() == 1) {
        r.socket().write(ok(r.input(0)));
      }
    });
    down = new HttpDownstream(vertx, server.url(), 1_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES,
        new io.vertx.core.http.HttpClientOptions().setPipelining(true), null, 1);
    Future<JsonArray> a = call("a", "A");
    await(server.request(0));
    Future<JsonArray> b = call("b", "B");
    Object aAnswer = await(a.map(x -> (Object) x).recover(e -> Future.succeededFuture(e.getMessage())));
    assertTrue(oks("A").equals(aAnswer) || aAnswer instanceof String, "a got " + aAnswer);
    Object bAnswer = await(b.map(x -> (Object) x).recover(e -> Future.succeededFuture(e.getMessage())));
    assertTrue(oks("B").equals(bAnswer) || bAnswer instanceof String, "b got " + bAnswer);
  }

  /**
   * A gateway that gives up on its backend answers 502, 503 or 504 and keeps the connection; a
   * broken one then forwards the backend's late answer on it. That answer is the first batch's
   * outcomes: pooled, the connection gave it to the next batch, another key's callers. The server
   * here sends the late answer once a next request comes on the connection.
   */
  @Test
  void aServerErrorClosesItsConnectionSoALateAnswerBehindItIsNeverTheNextBatchs() {
    for (int status : new int[] {500, 502, 503, 504}) {
      HostileHttpServer server = leftBehind(HostileHttpServer.response(status, "", ""), ok("a-late-answer"));
      downstream(server, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES);
      Throwable a = failure(call("a", "A"));
      assertTrue(a.getMessage().contains("HTTP " + status), a.getMessage());
      assertEquals(oks("B"), await(call("b", "B")), status + ": the next batch read another answer");
      endRound();
    }
  }

  /**
   * HTTP/2 asked for in the options, the client offers an upgrade on its first request; a server
   * that ignores it answers in HTTP/1.1 on a connection then used as such. The connection is
   * closed after a wrong answer as any HTTP/1.1 one is: by the version the answer came in, not the
   * one configured.
   */
  @Test
  void http2AskedForButAnsweredInHttp11StillClosesAfterAWrongAnswer() {
    HostileHttpServer server = leftBehind(HostileHttpServer.response(503, "", ""), ok("a-late-answer"));
    down = new HttpDownstream(vertx, server.url(), 10_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES,
        new io.vertx.core.http.HttpClientOptions().setProtocolVersion(io.vertx.core.http.HttpVersion.HTTP_2), null, 1);
    failure(call("a", "A"));
    assertEquals(oks("B"), await(call("b", "B")), "the next batch read another answer");
  }
}
