package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
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
import org.junit.jupiter.api.Test;

/**
 * A clustered node's TCP bridge while the node closes (ADRs 0056, 0094 and 0190): once the leave
 * began, a send to the submit address is answered at once at its {@code replyAddress} with 503,
 * and nothing of it reaches the downstream; the input the bridge took before is still answered on
 * the same socket when its call ends, and the undeploy completes after that.
 *
 * <p>The 503 comes from the node's router, which no longer routes to itself from the leave's start
 * ("no node of the cluster serves this address"). The bridge's own refusal ("not delivered", ADR
 * 0190) comes after the leave and the drain, which wait for the calls in flight: by then every input
 * the bridge took was answered, so in practice the router answers first and the bridge's refusal
 * is a guard for a send that slips in between.
 */
class BridgeClosingTest {
  private static final String DOWN = "bridge.closing.down";

  private static JsonObject send(String key, Object body, String replyAddress) {
    return new JsonObject().put("type", "send").put("address", ClusterHarness.SUBMIT)
        .put("headers", new JsonObject().put("key", key)).put("body", body).put("replyAddress", replyAddress);
  }

  /** Answers each input of the call with itself. */
  private static void answer(Message<JsonObject> m) {
    JsonArray outcomes = new JsonArray();
    for (Object in : m.body().getJsonArray("inputs")) {
      outcomes.add(new JsonObject().put("ok", ((JsonObject) in).getValue("input")));
    }
    m.reply(new JsonObject().put("outcomes", outcomes));
  }

  @Test
  void aSendAfterTheCloseBeganIsRefusedNotDeliveredAndTheInputTakenBeforeIsStillAnswered() throws Exception {
    try (ClusterHarness cluster = new ClusterHarness()) {
      Vertx node = cluster.start();
      // Holds the call with the first input until the test lets it go, answers any other at once,
      // and records what it was sent.
      List<Message<JsonObject>> held = new CopyOnWriteArrayList<>();
      List<Object> applied = new CopyOnWriteArrayList<>();
      await(node.eventBus().<JsonObject>consumer(DOWN, m -> {
        for (Object in : m.body().getJsonArray("inputs")) {
          applied.add(((JsonObject) in).getValue("input"));
        }
        if (applied.contains("taken") && held.isEmpty()) {
          held.add(m);
        } else {
          answer(m);
        }
      }).completion());
      int port = ClusterHarness.freePort();
      // Fixed slots: the learned limit starts at one call, which the held call would take, and the
      // probes below would wait behind it.
      String deployment = cluster.deploy(node, ClusterHarness.config(DOWN, new JsonObject()
          .put("dispatch", "fixed-slots").put("drainTimeoutMs", 1_000).put("callTimeoutMs", 20_000)
          .put("bridge", new JsonObject().put("host", "127.0.0.1").put("port", port))));
      cluster.awaitSettled(0);
      try (Socket socket = new Socket("127.0.0.1", port)) {
        socket.setSoTimeout(20_000);
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
        DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        ClusterHarness.writeFrame(out, send("k", "taken", "r-taken"));
        out.flush();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (held.isEmpty() && System.nanoTime() < deadline) {
          ClusterHarness.sleep(5);
        }
        assertEquals(1, held.size(), "the first input reached the downstream");

        Future<Void> undeploy = node.undeploy(deployment);
        // The leave begins on the verticle's loop at some point after the undeploy was asked for:
        // probe, one send at a time, until one is refused. A probe taken before that point is
        // answered by the downstream.
        List<JsonObject> answers = new ArrayList<>();
        JsonObject refusal = null;
        long probeUntil = System.nanoTime() + 10_000_000_000L;
        for (int i = 0; refusal == null && System.nanoTime() < probeUntil; i++) {
          ClusterHarness.writeFrame(out, send("p" + i, "probe-" + i, "r-probe-" + i));
          out.flush();
          JsonObject frame = ClusterHarness.readFrame(in);
          answers.add(frame);
          assertEquals("r-probe-" + i, frame.getString("address"), frame.encode());
          if ("err".equals(frame.getString("type"))) {
            refusal = frame;
          } else {
            ClusterHarness.sleep(5);
          }
        }
        assertTrue(refusal != null, "no probe was refused while the node closed: " + answers);
        assertEquals(503, refusal.getInteger("failureCode"), refusal.encode());
        String refused = refusal.getString("address").substring("r-".length());
        assertFalse(applied.contains(refused), "a refused probe reached the downstream: " + applied);

        // Every later send is refused the same way, at once, while the first input's call is still
        // open and the undeploy waits for it.
        for (int i = 0; i < 3; i++) {
          ClusterHarness.writeFrame(out, send("k", "late-" + i, "r-late-" + i));
          out.flush();
          JsonObject late = ClusterHarness.readFrame(in);
          assertEquals("err", late.getString("type"), late.encode());
          assertEquals("r-late-" + i, late.getString("address"), late.encode());
          assertEquals(503, late.getInteger("failureCode"), late.encode());
        }
        assertFalse(undeploy.isComplete(), "the undeploy waits for the call in flight");

        held.forEach(BridgeClosingTest::answer);
        JsonObject answer = ClusterHarness.readFrame(in);
        assertEquals("message", answer.getString("type"), answer.encode());
        assertEquals("r-taken", answer.getString("address"), answer.encode());
        assertEquals("taken", answer.getValue("body"), answer.encode());
        await(undeploy, 30);
        assertFalse(applied.stream().anyMatch(x -> String.valueOf(x).startsWith("late")), "applied: " + applied);
      }
    }
  }
}
