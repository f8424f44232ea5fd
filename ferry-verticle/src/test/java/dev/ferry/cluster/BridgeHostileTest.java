package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A careless or hostile client of a clustered node's TCP bridge (ADR 0094): odd frames get an
 * error frame at once and leave the socket usable, a publish to the submit address is refused
 * rather than applied once per consumer, and the bridge's count of open inputs ends at zero, so
 * that an undeploy never waits its full bound ({@code drainTimeoutMs} + 2 x {@code callTimeoutMs},
 * here over two minutes) for inputs that were answered long ago.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BridgeHostileTest {
  private static final String DOWN = "bridge.hostile.down";
  private ClusterHarness cluster;
  private Vertx node;
  private final List<Object> applied = new CopyOnWriteArrayList<>();
  private String deployment;
  private int port;

  @BeforeAll
  void startNode() {
    cluster = new ClusterHarness();
    node = cluster.start();
    // Records every input it is sent, and answers each with its own body.
    await(node.eventBus().<JsonObject>consumer(DOWN, m -> {
      JsonArray out = new JsonArray();
      for (Object in : m.body().getJsonArray("inputs")) {
        applied.add(((JsonObject) in).getValue("input"));
        out.add(new JsonObject().put("ok", ((JsonObject) in).getValue("input")));
      }
      m.reply(new JsonObject().put("outcomes", out));
    }).completion());
  }

  @AfterAll
  void stopNode() {
    cluster.close();
  }

  @BeforeEach
  void deploy() {
    applied.clear();
    port = ClusterHarness.freePort();
    // A call timeout of a minute: a bridge waiting for an input it wrongly counts open waits over
    // two minutes at undeploy, far beyond the test's wait.
    deployment = cluster.deploy(node, ClusterHarness.config(DOWN, new JsonObject()
        .put("drainTimeoutMs", 1000).put("callTimeoutMs", 60_000)
        .put("bridge", new JsonObject().put("host", "127.0.0.1").put("port", port))));
    cluster.awaitSettled(0);
  }

  @AfterEach
  void undeployWithinTheTestsWait() {
    // Every input of the test was answered: nothing is open, the undeploy does not wait for it.
    await(node.undeploy(deployment));
  }

  private static JsonObject send(String key, Object body, String replyAddress) {
    return new JsonObject().put("type", "send").put("address", ClusterHarness.SUBMIT)
        .put("headers", new JsonObject().put("key", key)).put("body", body).put("replyAddress", replyAddress);
  }

  /** Writes {@code frames} over one socket and reads {@code expected} frames back. */
  private List<JsonObject> exchange(List<JsonObject> frames, int expected) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(20_000);
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
      DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
      for (JsonObject f : frames) {
        ClusterHarness.writeFrame(out, f);
      }
      out.flush();
      List<JsonObject> got = new ArrayList<>();
      for (int i = 0; i < expected; i++) {
        got.add(ClusterHarness.readFrame(in));
      }
      return got;
    }
  }

  @Test
  void inputsThatEnterThroughTheBridgeAreAllCountedAnsweredWhicheverLocalConsumerTookThem() throws Exception {
    // The bridge's sends are local-only; Vert.x hands a local send to the node's consumers of the
    // address in turn, the public one included. Each of these is answered; none may stay counted.
    List<JsonObject> frames = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      frames.add(send("k" + i % 3, i, "r-" + i));
    }
    List<JsonObject> replies = exchange(frames, 10);
    for (JsonObject r : replies) {
      assertEquals("message", r.getString("type"), r.encode());
    }
    assertEquals(10, applied.size());

  }

  @Test
  void oddHeadersGetAnErrorFrameAtOnceAndTheSocketGoesOn() throws Exception {
    List<JsonObject> frames = List.of(
        send("k", "a", "r-a").put("headers", "not an object"),
        send("k", "b", "r-b").put("headers", new JsonArray().add(1)),
        send("k", "c", "r-c").put("headers", new JsonObject().put("key", "k").put("timeout", "soon")),
        send("k", "d", "r-d").put("headers", new JsonObject().put("key", "k").put("codecName", "no-such-codec")),
        send("k", "e", "r-e").put("headers", new JsonObject().put("key", "k").put("localOnly", "yes")),
        send("k", "fine", "r-fine"));
    List<JsonObject> replies = exchange(frames, 6);
    // Refusals are written at once, in the socket's order; answers come after them.
    for (int i = 0; i < 4; i++) {
      assertEquals("err", replies.get(i).getString("type"), replies.get(i).encode());
    }
    java.util.Map<String, Object> answered = new java.util.TreeMap<>();
    for (JsonObject r : replies.subList(4, 6)) {
      assertEquals("message", r.getString("type"), r.encode());
      answered.put(r.getString("address"), r.getValue("body"));
    }
    // A localOnly the client set is overridden, whatever its value: that input enters here too.
    assertEquals(java.util.Map.of("r-e", "e", "r-fine", "fine"), answered);
    assertEquals(List.of("e", "fine"), applied);
  }

  @Test
  void aFrameOverMaxFrameBytesClosesTheConnectionAndLeavesNothingCountedOpen() throws Exception {
    // Three inputs, then in the same write a frame announcing 2 GiB - 1 (over the default 1 MiB):
    // the three are delivered and answered (the undeploy after this test waits for none of them),
    // the rest is never read, and the client gets an error frame before the socket closes.
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(20_000);
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
      DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
      for (int i = 0; i < 3; i++) {
        ClusterHarness.writeFrame(out, send("big-" + i, i, "r-" + i));
      }
      out.writeInt(Integer.MAX_VALUE);
      out.write(new byte[100]);
      out.flush();
      JsonObject frame;
      do {
        frame = ClusterHarness.readFrame(in); // replies to the three may come before it, or be lost with the socket
      } while (!"err".equals(frame.getString("type")));
      assertTrue(frame.getString("message").contains("over the bridge's maxFrameBytes (1048576)"), frame.encode());
      try {
        assertEquals(-1, in.read(), "the connection is closed");
      } catch (java.net.SocketException reset) {
        // Closed with bytes of ours still unread there: the kernel may reset rather than end it.
      }
    }
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (applied.size() < 3 && System.nanoTime() < deadline) {
      ClusterHarness.sleep(10);
    }
    assertEquals(List.of(0, 1, 2), applied);
  }

  @Test
  void aPublishToTheSubmitAddressIsRefusedNotAppliedOncePerConsumer() throws Exception {
    List<JsonObject> replies = exchange(List.of(
        new JsonObject().put("type", "publish").put("address", ClusterHarness.SUBMIT)
            .put("headers", new JsonObject().put("key", "p")).put("body", "published"),
        send("p", "sent", "r-sent")), 2);
    assertEquals("err", replies.get(0).getString("type"), replies.get(0).encode());
    assertEquals("sent", replies.get(1).getValue("body"), replies.get(1).encode());
    assertTrue(applied.equals(List.of("sent")), "applied: " + applied);
  }
}
