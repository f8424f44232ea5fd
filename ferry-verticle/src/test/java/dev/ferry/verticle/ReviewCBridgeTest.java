package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Review C: the TCP bridge attacked by a hostile client, on a real node. */
class ReviewCBridgeTest extends VerticleTestBase {

  /**
   * A send whose {@code localOnly} header is not a boolean: the bridge casts it (after the hook let
   * the frame through) and throws, as it does for a null header or a non-numeric {@code timeout},
   * which {@link BridgeSupport#deliverable} refuses with an error frame while the socket goes on.
   * {@code localOnly} is not checked there: the guard closes the connection, blaming the frame's
   * "type" (which was "send"), and the replies of the client's inputs still in flight are lost
   * with it although they were accepted (the first one here is held by the downstream).
   */
  @Test
  void aBridgeSendWithALocalOnlyHeaderThatIsNotABooleanGetsAnErrorFrameAndTheSocketGoesOn() throws Exception {
    int port = TestPorts.free();
    deploy(config(new JsonObject().put("bridge", new JsonObject().put("port", port))));
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      DataOutputStream out = new DataOutputStream(socket.getOutputStream());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      write(out, send(new JsonObject().put("key", "k"), "in flight", "r-1"));
      EbRecorder.Call held = await(downstream.call(0));
      write(out, send(new JsonObject().put("key", "k").put("localOnly", "yes"), "bad", "r-2"));
      write(out, send(new JsonObject().put("key", "k2"), "after", "r-3"));
      // Clustered, the bridge overrides a client's localOnly whatever its value (BridgeHostileTest):
      // unclustered, the input may be taken as well, or refused with an error frame; never the
      // connection closed under the client's inputs in flight.
      downstream.auto(EbRecorder.Call::echo);
      held.echo();
      java.util.Map<String, Object> replies = new java.util.HashMap<>();
      for (int i = 0; i < 3; i++) {
        JsonObject r = read(in);
        if ("err".equals(r.getString("type"))) {
          assertTrue(!r.getString("message").contains("the connection is closed"), r.encode());
          replies.put("r-2", "refused");
        } else {
          replies.put(r.getString("address"), r.getValue("body"));
        }
      }
      replies.remove("r-2");
      assertEquals(java.util.Map.of("r-1", "in flight", "r-3", "after"), replies);
    }
  }

  /**
   * An outcome holding a number JSON cannot carry in a double ({"ok": 1e999}, parsed as Infinity,
   * as the HTTP downstream's parser and a JVM downstream's JsonObject both give it): the same
   * value in an input is refused (400, "JSON cannot carry"), but as an outcome it is relayed, and
   * a bridge client, whose replies are JSON, receives the string "Infinity" where the downstream
   * sent a number (clustered, a JsonObject outcome crossing nodes turns the same way). Expected:
   * the downstream's number, or the contract's 502 for an answer that is malformed.
   */
  @Test
  void anOutcomeJsonCannotCarryReachesABridgeClientAsANumberOrA502NeverAsAString() throws Exception {
    int port = TestPorts.free();
    downstream.auto(call -> call.reply(new JsonObject("{\"outcomes\": [{\"ok\": 1e999}]}")));
    deploy(config(new JsonObject().put("bridge", new JsonObject().put("port", port))));
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      DataOutputStream out = new DataOutputStream(socket.getOutputStream());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      write(out, send(new JsonObject().put("key", "k"), 1, "r-1"));
      JsonObject reply = read(in);
      boolean number = "message".equals(reply.getString("type")) && reply.getValue("body") instanceof Number;
      boolean failed = "err".equals(reply.getString("type")) && Integer.valueOf(502).equals(reply.getInteger("failureCode"));
      assertTrue(number || failed, "the downstream answered the number 1e999; the client got " + reply.encode());
    }
  }

  static JsonObject send(JsonObject headers, Object body, String replyAddress) {
    return new JsonObject().put("type", "send").put("address", SUBMIT).put("headers", headers).put("body", body)
        .put("replyAddress", replyAddress);
  }

  static void write(DataOutputStream out, JsonObject frame) throws IOException {
    byte[] bytes = frame.encode().getBytes(StandardCharsets.UTF_8);
    out.writeInt(bytes.length);
    out.write(bytes);
    out.flush();
  }

  static JsonObject read(DataInputStream in) throws IOException {
    byte[] bytes = new byte[in.readInt()];
    in.readFully(bytes);
    return new JsonObject(Buffer.buffer(bytes));
  }
}
