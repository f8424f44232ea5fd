package dev.ferry.verticle;

import static dev.ferry.verticle.HostileHttpServer.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.net.NetSocket;
import io.vertx.core.json.JsonObject;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/** Review Y: a hostile downstream and bridge client against a deployed FerryVerticle. */
class ReviewYHostileTest extends VerticleTestBase {

  /** {"n": {"n": ... {"leaf": 1}}}, {@code depth} objects around the leaf. */
  private static JsonObject nested(int depth) {
    JsonObject o = new JsonObject().put("leaf", 1);
    for (int i = 0; i < depth; i++) {
      o = new JsonObject().put("n", o);
    }
    return o;
  }

  /**
   * An event-bus downstream whose {@code ok} value is nested deeper than JSON can be written
   * (Jackson's bound of 1000 levels): it crosses the local bus as a JsonObject, the verticle hands
   * it to its caller, and the TCP bridge, which writes each reply as a JSON frame, throws as it
   * encodes it: the bridge client's accepted input is never answered, neither its outcome nor an
   * error frame. The answer is one no HTTP downstream could give (its parser stops at the same
   * bound): malformed, the contract's 502. Inputs of one key, sent in order, are answered in order,
   * so the first frame the client reads is the first input's answer, whatever it is.
   */
  @Test
  void anOutcomeNestedDeeperThanJsonCanBeWrittenStillAnswersABridgeClient() throws Exception {
    int port = TestPorts.free();
    downstream.auto(call -> {
      JsonArray outcomes = new JsonArray();
      for (Object body : call.bodies()) {
        outcomes.add(new JsonObject().put("ok", "deep".equals(body) ? nested(1_500) : body));
      }
      call.reply(new JsonObject().put("outcomes", outcomes));
    });
    deploy(config(new JsonObject().put("bridge", new JsonObject().put("port", port))));
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(30_000);
      DataOutputStream out = new DataOutputStream(socket.getOutputStream());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      ReviewCBridgeTest.write(out, ReviewCBridgeTest.send(new JsonObject().put("key", "k"), "deep", "r-1"));
      ReviewCBridgeTest.write(out, ReviewCBridgeTest.send(new JsonObject().put("key", "k"), "plain", "r-2"));
      JsonObject first = ReviewCBridgeTest.read(in);
      assertEquals("r-1", first.getString("address"), "the first input was never answered; the client read "
          + first.encode());
      assertTrue("err".equals(first.getString("type")) && Integer.valueOf(502).equals(first.getInteger("failureCode")),
          "an outcome JSON cannot write is a malformed answer: 502; got " + first.encode());
    }
  }

  /**
   * An HTTP downstream working on a slow batch sends an interim {@code 102 Processing} (RFC 9110:
   * a client must accept 1xx responses before the final one), then its {@code 200} with the
   * batch's outcomes. Vert.x hands the 102 over as the response: its batch failed 502, and its
   * keep-alive connection went back to the pool with the 200 still to come, so the next batch sent
   * on it, another key's, read that 200 as its own answer: key "b"'s caller was answered with key
   * "a"'s outcome. A raw server, so that the interim answer and the connection are the test's.
   */
  @Test
  void anInterimAnswerNeverLetsAnotherBatchReadThisBatchsOutcomes() throws Exception {
    NetSocket[] first = new NetSocket[1];
    HostileHttpServer server = HostileHttpServer.start(vertx, r -> {
      if (r.index() == 0) {
        first[0] = r.socket();
        r.socket().write("HTTP/1.1 102 Processing\r\n\r\n"); // still working on "a"'s batch
      } else if (r.index() == 1) {
        // "a"'s batch answered at last, on its own connection; then "b"'s, on its own.
        first[0].write(ok("a-outcome"));
        r.socket().write(ok("b-outcome"));
      }
    });
    deploy(new JsonObject().put("maxInFlightBatches", 1).put("downstream", new JsonObject().put("type", "http")
        .put("url", server.url()).put("timeoutMs", 60_000)));
    Future<Message<Object>> a = send("a", "A");
    await(server.request(0));
    // Whatever "a"'s caller is told (its batch may have been applied: 502, or its outcome) ...
    Object aAnswer = await(a.transform(ar -> Future.succeededFuture(ar.succeeded() ? ar.result().body()
        : ((io.vertx.core.eventbus.ReplyException) ar.cause()).failureCode())));
    assertTrue(aAnswer.equals(502) || aAnswer.equals("a-outcome"), "a: " + aAnswer);
    // ... "b"'s caller gets "b"'s outcome, never "a"'s.
    Future<Message<Object>> b = send("b", "B");
    assertEquals("b-outcome", body(b));
  }
}
