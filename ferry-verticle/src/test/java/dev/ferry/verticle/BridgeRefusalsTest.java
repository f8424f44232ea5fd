package dev.ferry.verticle;

import static dev.ferry.verticle.ReviewCBridgeTest.read;
import static dev.ferry.verticle.ReviewCBridgeTest.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review BG: a frame the TCP bridge refuses before Ferry reads it is answered in Ferry's words
 * (ADR 0190). A send with a {@code replyAddress} gets an error frame at that address, with a
 * failure code and a message naming what the client wrote, so that a client with several sends
 * outstanding knows which one was refused and why; any other frame an error frame with the same
 * code and message and no address. One answer per frame (the ping after each is answered next),
 * nothing delivered, and the socket goes on. Before, each got the bridge's own {@code "blocked by
 * bridgeEvent handler"} or {@code "access_denied"}, with no address.
 */
class BridgeRefusalsTest extends VerticleTestBase {

  /** A refused frame, what its answer must be, and words its message must hold. */
  private record Case(JsonObject frame, String replyAddress, int code, String... words) {}

  private static JsonObject send(Object headers, String address, String replyAddress) {
    JsonObject f = new JsonObject().put("type", "send").put("address", address).put("body", "refused")
        .put("replyAddress", replyAddress);
    if (headers != null) {
      f.put("headers", headers);
    }
    return f;
  }

  private static JsonObject key(String name, Object value) {
    return new JsonObject().put("key", "k").put(name, value);
  }

  @Test
  void everyRefusedSendIsAnsweredAtItsReplyAddressInTheWordsOfItsFrameOnceAndNothingIsDelivered() throws Exception {
    int port = TestPorts.free();
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject().put("bridge", new JsonObject().put("port", port).put("permitMetrics", true))));
    List<Case> cases = new ArrayList<>();
    cases.add(new Case(send(new JsonArray().add(1), SUBMIT, "r-array"), "r-array", 400, "\"headers\" is [1]"));
    cases.add(new Case(send("k", SUBMIT, "r-string"), "r-string", 400, "\"headers\" is \"k\""));
    JsonObject nullHeader = key("x-trace", "t");
    nullHeader.putNull("x-trace");
    cases.add(new Case(send(nullHeader, SUBMIT, "r-null"), "r-null", 400, "\"x-trace\" is null"));
    cases.add(new Case(send(key("timeout", "5s"), SUBMIT, "r-timeout"), "r-timeout", 400,
        "\"timeout\" is \"5s\"", "ms >= 1"));
    cases.add(new Case(send(key("timeout", 0), SUBMIT, "r-zero"), "r-zero", 400, "\"timeout\" is 0"));
    cases.add(new Case(send(key("codecName", "x"), SUBMIT, "r-codec"), "r-codec", 400, "\"codecName\"", "\"x\""));
    // On another permitted address a localOnly that is not a boolean is refused (on the submit
    // address it is dropped and the input served: ReviewCBridgeTest).
    cases.add(new Case(send(new JsonObject().put("localOnly", "yes"), "ferry.metrics", "r-local"), "r-local", 400,
        "\"localOnly\" is \"yes\"", "true or false"));
    cases.add(new Case(send(key("key", "k"), "ferry.elsewhere", "r-denied"), "r-denied", 403,
        "\"ferry.elsewhere\"", "\"ferry.submit\""));
    cases.add(new Case(send(null, "ferry.health", "r-health"), "r-health", 403, "\"ferry.health\""));
    // No replyAddress to answer at: the same code and message, no address.
    cases.add(new Case(new JsonObject().put("type", "publish").put("address", SUBMIT)
        .put("headers", new JsonObject().put("key", "k")).put("body", "published"), null, 400,
        "\"publish\" to \"ferry.submit\"", "\"send\""));
    cases.add(new Case(new JsonObject().put("type", "publish").put("address", SUBMIT)
        .put("headers", new JsonObject().put("key", "k")).put("body", "published").put("replyAddress", "r-pub"),
        null, 400, "\"publish\""));
    cases.add(new Case(new JsonObject().put("type", "send").put("address", SUBMIT)
        .put("headers", key("timeout", -1)).put("body", "no reply"), null, 400, "\"timeout\" is -1"));
    cases.add(new Case(new JsonObject().put("type", "register").put("address", "ferry.replies"), null, 403,
        "\"register\"", "\"ferry.replies\""));
    cases.add(new Case(new JsonObject().put("type", "send").put("body", 1).put("replyAddress", "r-noaddr"),
        "r-noaddr", 400, "\"address\""));
    // A value that would make a long or unescaped message: quoted as JSON, cut.
    cases.add(new Case(send(key("timeout", "\n".repeat(5000)), SUBMIT, "r-long"), "r-long", 400, "\"timeout\" is"));
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      DataOutputStream out = new DataOutputStream(socket.getOutputStream());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      for (Case c : cases) {
        write(out, c.frame());
        write(out, new JsonObject().put("type", "ping"));
        JsonObject answer = read(in);
        String seen = "frame " + c.frame().encode() + " answered " + answer.encode();
        assertEquals("err", answer.getString("type"), seen);
        assertEquals(c.replyAddress(), answer.getString("address"), seen);
        assertEquals(c.code(), answer.getInteger("failureCode"), seen);
        assertEquals("RECIPIENT_FAILURE", answer.getString("failureType"), seen);
        if (c.replyAddress() != null) {
          assertEquals(c.frame().getString("address"), answer.getString("sourceAddress"), seen);
        }
        String message = answer.getString("message");
        for (String w : c.words()) {
          assertTrue(message.contains(w), seen);
        }
        assertTrue(message.length() < 400, seen);
        assertFalse(message.contains("\n"), seen);
        // One answer per frame: the ping's is next, no second one from the bridge.
        JsonObject pong = read(in);
        assertEquals("pong", pong.getString("type"), "after " + seen + ": " + pong.encode());
      }
      // The socket goes on, and nothing refused was delivered.
      write(out, ReviewCBridgeTest.send(new JsonObject().put("key", "k"), "served", "r-ok"));
      JsonObject served = read(in);
      assertEquals("message", served.getString("type"), served.encode());
      assertEquals("served", served.getValue("body"), served.encode());
      assertEquals(1, downstream.count(), "only the last send reached the downstream");
      assertEquals(List.of("served"), downstream.calls().get(0).inputs.stream()
          .map(i -> ((JsonObject) i).getValue("input")).toList());
    }
  }
}
