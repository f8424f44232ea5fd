package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
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
}
