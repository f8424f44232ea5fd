package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.InvalidConfigException;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** Metrics over Prometheus, health, the TCP bridge and failure logging, on a real node. */
class FerryVerticleOpsTest extends VerticleTestBase {

  static int freePort() {
    return TestPorts.free();
  }

  @Test
  void prometheusScrapeShowsTheFerrysMetersTaggedWithItsAddress() {
    int port = freePort();
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject().put("monitoring", new JsonObject().put("port", port))));
    List<Future<Message<Object>>> replies = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      replies.add(send("k", i));
    }
    replies.forEach(VerticleTestBase::await);
    String scrape = httpGet(port, "/metrics");
    assertTrue(scrape.startsWith("200\n"), scrape);
    assertTrue(scrape.contains("ferry_submitted_total{ferry=\"ferry.submit\"} 3.0"), scrape);
    assertTrue(scrape.contains("ferry_batch_size_count{ferry=\"ferry.submit\"}"), scrape);
    assertTrue(scrape.contains("ferry_call_latency_seconds_count{ferry=\"ferry.submit\"}"), scrape);
    assertTrue(scrape.contains("ferry_queue_wait_seconds_count{ferry=\"ferry.submit\"} 3"), scrape);
    assertTrue(scrape.contains("ferry_queued_inputs{ferry=\"ferry.submit\"} 0.0"), scrape);
    assertTrue(scrape.contains("ferry_rejected_total{ferry=\"ferry.submit\",reason=\"queueing\"}"), scrape);
  }

  /**
   * {@code monitoring.port} 0 binds a port the system chooses: the verticle tells which, or the
   * endpoint could not be found. -1 without monitoring, and again after the undeploy.
   */
  @Test
  void aMonitoringPortTheSystemChoseIsReported() {
    FerryVerticle verticle = new FerryVerticle();
    String id = await(vertx.deployVerticle(verticle, new io.vertx.core.DeploymentOptions()
        .setConfig(config(new JsonObject().put("monitoring", new JsonObject().put("port", 0))))));
    int port = verticle.monitoringPort();
    assertTrue(port > 0, "bound port " + port);
    assertTrue(httpGet(port, "/health").startsWith("200\n"));
    await(vertx.undeploy(id));
    assertEquals(-1, verticle.monitoringPort());
    FerryVerticle without = new FerryVerticle();
    await(vertx.deployVerticle(without, new io.vertx.core.DeploymentOptions().setConfig(config(new JsonObject()))));
    assertEquals(-1, without.monitoringPort());
  }

  @Test
  void theEndpointIsOffByDefault() {
    int port = freePort();
    deploy(config(new JsonObject()));
    assertThrows(java.net.ConnectException.class, () -> new Socket("127.0.0.1", port).close());
  }

  /**
   * Standalone, the metrics and health answers carry no {@code node}: there is one node and no
   * cluster id to give (clustered, they name it: ClusterNamedAnswersTest).
   */
  @Test
  void standaloneAnswersNameNoNode() {
    deploy(config(new JsonObject()));
    JsonObject m = metrics();
    assertFalse(m.containsKey("node"), m.encode());
    assertTrue(m.containsKey("submitted"), m.encode());
    JsonObject h = health();
    assertFalse(h.encode().contains("\"node\""), h.encode());
    assertTrue(h.encode().contains("\"state\":\"up\""), h.encode());
  }

  @Test
  void healthIsUpThenDegradedWhenBatchesKeepFailingThenUpAgain() {
    int port = freePort();
    deploy(config(new JsonObject().put("monitoring", new JsonObject().put("port", port))));
    assertEquals("UP", health().getString("status"));
    assertTrue(httpGet(port, "/health").startsWith("200"));
    downstream.auto(call -> call.fail(500, "store down"));
    for (int i = 0; i < Operations.DEGRADED_AFTER; i++) {
      code(send("k" + i, i)); // each fails with 502
    }
    JsonObject degraded = health();
    assertEquals("DOWN", degraded.getString("status"), degraded.encode());
    assertTrue(degraded.encode().contains("degraded"), degraded.encode());
    assertTrue(httpGet(port, "/health").startsWith("503"));
    downstream.auto(EbRecorder.Call::echo);
    await(send("k", "fine"));
    assertEquals("UP", health().getString("status"));
  }

  @Test
  void aFailureStreakStopsAtItsTopInsteadOfWrappingToUp() {
    assertEquals(1, Operations.streak(0, true));
    assertEquals(0, Operations.streak(7, false));
    int top = Operations.streak(Integer.MAX_VALUE, true);
    assertTrue(top >= Operations.DEGRADED_AFTER, "still degraded after 2^31 failed calls in a row: " + top);
  }

  @Test
  void healthSaysDrainingWhileTheNodeUndeploys() {
    String id = deploy(config(new JsonObject()));
    Future<Message<Object>> held = send("k", 1);
    await(downstream.call(0));
    Future<Void> undeployed = vertx.undeploy(id);
    // The undeploy reaches the verticle's context as a task of its own: ask until it has.
    awaitDraining();
    JsonObject h = health();
    assertEquals("DOWN", h.getString("status"));
    assertTrue(h.encode().contains("draining"), h.encode());
    downstream.releaseAll();
    await(held);
    await(undeployed);
  }

  @Test
  void aPlainSocketSubmitsThroughTheBridgeAndOtherAddressesAreRefused() throws IOException {
    int port = freePort();
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject().put("bridge", new JsonObject().put("port", port))));
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      DataOutputStream out = new DataOutputStream(socket.getOutputStream());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      frame(out, new JsonObject().put("type", "send").put("address", "ferry.submit")
          .put("headers", new JsonObject().put("key", "acc-1")).put("body", new JsonObject().put("amount", 5))
          .put("replyAddress", "reply-1"));
      JsonObject reply = read(in);
      assertEquals("message", reply.getString("type"), reply.encode());
      assertEquals(new JsonObject().put("amount", 5), reply.getJsonObject("body"));

      frame(out, new JsonObject().put("type", "send").put("address", "ferry.metrics").put("replyAddress", "reply-2"));
      JsonObject refused = read(in);
      assertEquals("err", refused.getString("type"), refused.encode());
      // Answered at the send's reply address, in Ferry's words (ADR 0190), not the bridge's bare
      // "access_denied".
      assertEquals("reply-2", refused.getString("address"), refused.encode());
      assertEquals(403, refused.getInteger("failureCode"), refused.encode());
      assertTrue(refused.getString("message").contains("\"ferry.metrics\""), refused.encode());

      // A bad input comes back as the failure code the event bus carries.
      frame(out, new JsonObject().put("type", "send").put("address", "ferry.submit").put("body", 1)
          .put("replyAddress", "reply-3"));
      JsonObject bad = read(in);
      assertEquals("err", bad.getString("type"), bad.encode());
      assertEquals(400, bad.getInteger("failureCode"), bad.encode());
      // The whole frame, as docs/operations.md shows it: a client matches it to its send by
      // `address`, which carries the send's reply address (not by a `replyAddress` field).
      assertEquals("reply-3", bad.getString("address"), bad.encode());
      assertEquals("ferry.submit", bad.getString("sourceAddress"), bad.encode());
      assertEquals("RECIPIENT_FAILURE", bad.getString("failureType"), bad.encode());
      assertTrue(bad.getString("message").contains("\"key\" header"), bad.encode());
      assertEquals(java.util.Set.of("type", "address", "sourceAddress", "failureCode", "failureType", "message"),
          bad.fieldNames(), bad.encode());
    }
  }

  @Test
  void aFrameOverTheBridgesMaxFrameBytesIsRefusedAndItsConnectionClosed() throws IOException {
    // Without a bound the bridge buffers whatever length a frame announces (up to 2 GiB per
    // socket) before it reads a byte of it (ADR 0104).
    int port = freePort();
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject().put("bridge", new JsonObject().put("port", port).put("maxFrameBytes", 4096))));
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      DataOutputStream out = new DataOutputStream(socket.getOutputStream());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      // A frame of exactly 4096 bytes goes through.
      JsonObject send = new JsonObject().put("type", "send").put("address", "ferry.submit")
          .put("headers", new JsonObject().put("key", "big")).put("replyAddress", "r-1").put("body", "");
      int pad = 4096 - send.encode().getBytes(StandardCharsets.UTF_8).length;
      send.put("body", "x".repeat(pad));
      assertEquals(4096, send.encode().getBytes(StandardCharsets.UTF_8).length);
      frame(out, send);
      JsonObject ok = read(in);
      assertEquals("message", ok.getString("type"), ok.encode());
      assertEquals("x".repeat(pad), ok.getString("body"));
      // One that announces 100 MiB is refused once its length is read: an error frame, then the
      // connection is closed (the rest of it is never buffered).
      out.writeInt(100 << 20);
      out.write(new byte[1000]);
      out.flush();
      JsonObject refused = read(in);
      assertEquals("err", refused.getString("type"), refused.encode());
      assertTrue(refused.getString("message").contains("a frame of 104857600 bytes is over the bridge's maxFrameBytes (4096)"),
          refused.encode());
      try {
        assertEquals(-1, in.read(), "the connection is closed");
      } catch (java.net.SocketException reset) {
        // Closed with bytes of ours still unread there: the kernel may reset rather than end it.
      }
    }
    // The node goes on serving other clients.
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      DataOutputStream out = new DataOutputStream(socket.getOutputStream());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      frame(out, new JsonObject().put("type", "send").put("address", "ferry.submit")
          .put("headers", new JsonObject().put("key", "next")).put("body", 7).put("replyAddress", "r-2"));
      assertEquals(7, read(in).getInteger("body"));
    }
  }

  @Test
  void aFailedBatchIsLoggedOnceWithKeySizeAndCauseButNeverItsPayload() {
    List<LogRecord> records = new ArrayList<>();
    Logger logger = Logger.getLogger("dev.ferry.verticle.FerryVerticle");
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord r) {
        synchronized (records) {
          records.add(r);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    Level before = logger.getLevel();
    logger.setLevel(Level.ALL);
    logger.addHandler(capture);
    try {
      downstream.auto(call -> call.fail(500, "boom"));
      deploy(config(new JsonObject()));
      code(send("acc-9", "secret-payload"));
      String id2 = deploy(config(new JsonObject().put("address", "ferry.submit2").put("metricsAddress", "m2")
          .put("healthAddress", "h2").put("logPayloads", true)));
      assertFalse(id2.isEmpty());
      code(vertx.eventBus().<Object>request("ferry.submit2", "visible-payload",
          new io.vertx.core.eventbus.DeliveryOptions().addHeader("key", "acc-10")));
    } finally {
      logger.removeHandler(capture);
      logger.setLevel(before);
    }
    List<String> lines;
    synchronized (records) {
      lines = records.stream().map(r -> r.getLevel() + " " + new java.text.MessageFormat(r.getMessage()).format(r.getParameters())).toList();
    }
    List<String> warnings = lines.stream().filter(l -> l.startsWith("WARNING")).toList();
    assertEquals(2, warnings.size(), lines.toString());
    assertTrue(warnings.get(0).contains("acc-9") && warnings.get(0).contains("1 input") && warnings.get(0).contains("boom"), warnings.get(0));
    assertTrue(lines.stream().noneMatch(l -> l.contains("secret-payload")), lines.toString());
    assertTrue(lines.stream().anyMatch(l -> l.contains("visible-payload")), "logPayloads shows payloads: " + lines);
  }

  @Test
  void aPortAlreadyTakenFailsTheDeploymentAndLeavesNothingBehind() throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      Throwable e = failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new io.vertx.core.DeploymentOptions()
          .setConfig(config(new JsonObject().put("monitoring", new JsonObject().put("port", taken.getLocalPort()))))));
      assertTrue(e.getMessage().toLowerCase().contains("address already in use"), e.toString());
    }
    // The failed node's health consumer is gone: a fresh deployment can take the same addresses.
    deploy(config(new JsonObject()));
    assertEquals("UP", health().getString("status"));
    assertEquals(1, vertx.deploymentIDs().size());
  }

  @Test
  void moreThanOneInstanceIsRefused() {
    Throwable e = failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
        new io.vertx.core.DeploymentOptions().setInstances(2).setConfig(config(new JsonObject()))));
    assertTrue(e.getMessage().contains("instances = 2: must be 1"), e.getMessage());
  }

  @Test
  void opsFieldsAreValidatedWithTheRest() {
    InvalidConfigException e = (InvalidConfigException) failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
        new io.vertx.core.DeploymentOptions().setConfig(config(new JsonObject()
            .put("monitoring", new JsonObject().put("host", "127.0.0.1"))
            .put("bridge", new JsonObject().put("port", 70000).put("permitEverything", true).put("maxFrameBytes", 100))
            .put("logPayloads", "yes")))));
    String m = e.getMessage();
    assertTrue(m.contains("monitoring.port: missing"), m);
    assertTrue(m.contains("bridge.port = 70000"), m);
    assertTrue(m.contains("bridge.permitEverything: unknown field"), m);
    assertTrue(m.contains("bridge.maxFrameBytes = 100: must be 4096 to 1073741824"), m);
    assertTrue(m.contains("logPayloads = \"yes\""), m);
  }

  private static void frame(DataOutputStream out, JsonObject json) throws IOException {
    byte[] bytes = json.encode().getBytes(StandardCharsets.UTF_8);
    out.writeInt(bytes.length);
    out.write(bytes);
    out.flush();
  }

  private static JsonObject read(DataInputStream in) throws IOException {
    byte[] bytes = new byte[in.readInt()];
    in.readFully(bytes);
    return new JsonObject(Buffer.buffer(bytes));
  }
}
