package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.InvalidConfigException;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Review AI: the operator's network surface (the TCP bridge and the monitoring endpoint) against
 * clients that hold connections without using them: silent, trickling a byte at a time, or never
 * reading. Each bound is lowered (the bridge's {@code idleTimeoutMs} to its floor, the monitoring's
 * through its test hook) and the tests wait for what must happen, bounded by the hang guard; none
 * asserts how fast anything is.
 */
class ReviewAiOpsTest extends VerticleTestBase {
  private static final long IDLE = BridgeFrameLimit.MIN_IDLE_TIMEOUT_MS;

  /** A bridge frame: 4-byte length, then the JSON. */
  private static Buffer frame(JsonObject json) {
    byte[] bytes = json.encode().getBytes(StandardCharsets.UTF_8);
    return Buffer.buffer().appendInt(bytes.length).appendBytes(bytes);
  }

  private static final Buffer PING = frame(new JsonObject().put("type", "ping"));

  /** A connection to the bridge that records the frames it gets and when it is closed. */
  private static final class Client {
    final NetSocket socket;
    final List<JsonObject> frames = new ArrayList<>();
    final Promise<Void> closed = Promise.promise();
    private Buffer pending = Buffer.buffer();

    Client(NetSocket socket) {
      this.socket = socket;
      socket.handler(b -> {
        pending.appendBuffer(b);
        while (pending.length() >= 4 && pending.length() >= 4 + pending.getInt(0)) {
          int n = pending.getInt(0);
          frames.add(new JsonObject(pending.getBuffer(4, 4 + n)));
          pending = pending.getBuffer(4 + n, pending.length());
        }
      });
      socket.closeHandler(v -> closed.tryComplete());
    }

    long count(String type) {
      return frames.stream().filter(f -> type.equals(f.getString("type"))).count();
    }
  }

  /**
   * Connects from the test's client context, so that the socket's handlers and {@link #onClient}
   * run on one thread.
   */
  private Client connect(NetClient net, int port) {
    Promise<Client> p = Promise.promise();
    client.runOnContext(v -> net.connect(port, "127.0.0.1").map(Client::new).onComplete(p));
    return await(p.future());
  }

  /** Runs {@code task} on the test's client context, where the clients' sockets were opened. */
  private <T> T onClient(java.util.function.Supplier<T> task) {
    Promise<T> p = Promise.promise();
    client.runOnContext(v -> p.complete(task.get()));
    return await(p.future());
  }

  private int deployBridge(long idleTimeoutMs) {
    int port = TestPorts.free();
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject().put("bridge", new JsonObject().put("port", port).put("idleTimeoutMs", idleTimeoutMs))));
    return port;
  }

  /**
   * The bridge had no idle timeout: a client that connected and sent nothing held its connection
   * (a socket, the bridge's per-connection state) for ever, and so did as many more as it opened.
   * Now it gets an error frame that says why, and the connection is closed.
   */
  @Test
  void aBridgeClientThatSendsNothingIsClosedAfterIdleTimeoutMs() {
    int port = deployBridge(IDLE);
    NetClient net = vertx.createNetClient();
    Client silent = connect(net, port);
    await(silent.closed.future());
    JsonObject err = onClient(() -> silent.frames.get(0));
    assertEquals("err", err.getString("type"), err.encode());
    assertEquals("no frame for " + IDLE + " ms (the bridge's idleTimeoutMs); the connection is closed",
        err.getString("message"));
    await(net.close());
  }

  /**
   * A client that pings (as Vert.x's own bridge clients do every few seconds) is not idle: it
   * outlives a silent client connected with it by many times the bound, and its inputs are served
   * afterwards. Counted in pongs, not in time.
   */
  @Test
  void aBridgeClientThatPingsIsKeptOpen() {
    int port = deployBridge(IDLE);
    NetClient net = vertx.createNetClient();
    Client silent = connect(net, port);
    Client pinger = connect(net, port);
    long timer = onClient(() -> vertx.setPeriodic(IDLE / 10, t -> pinger.socket.write(PING)));
    await(silent.closed.future());
    long pongsAtSilentsClose = onClient(() -> pinger.count("pong"));
    // Twenty more pongs: at least twice the bound since the silent client was closed.
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
    while (onClient(() -> pinger.count("pong")) < pongsAtSilentsClose + 20) {
      assertTrue(System.nanoTime() < until, "the pinger's pongs stopped coming");
      assertFalse(pinger.closed.future().isComplete(), "the pinging client was closed");
    }
    onClient(() -> vertx.cancelTimer(timer));
    assertFalse(pinger.closed.future().isComplete(), "the pinging client was closed");
    onClient(() -> pinger.socket.write(frame(new JsonObject().put("type", "send").put("address", SUBMIT)
        .put("headers", new JsonObject().put("key", "k")).put("body", 7).put("replyAddress", "r-1"))));
    while (onClient(() -> pinger.count("message")) == 0) {
      assertTrue(System.nanoTime() < until, "no answer to the pinger's input");
      assertFalse(pinger.closed.future().isComplete(), "the pinging client was closed");
    }
    JsonObject answer = onClient(() -> pinger.frames.stream().filter(f -> "message".equals(f.getString("type")))
        .findFirst().orElseThrow());
    assertEquals(7, answer.getInteger("body"), answer.encode());
    assertEquals(0, onClient(() -> pinger.count("err")), () -> pinger.frames.toString());
    await(net.close());
  }

  /**
   * An idle timeout that any byte resets (Vert.x's own, NetServerOptions' idleTimeout) lets a
   * client hold its connection by trickling a frame a byte at a time, well inside the bound. The
   * bridge's counts whole frames only: the trickler is closed long before its ping is complete
   * (its 19 bytes would take 19 times the bound's third), and never gets a pong.
   */
  @Test
  void aBridgeClientThatTricklesAFrameIsClosedAsIfSilent() {
    int port = deployBridge(IDLE);
    NetClient net = vertx.createNetClient();
    Client trickler = connect(net, port);
    int[] sent = {0};
    long timer = onClient(() -> vertx.setPeriodic(IDLE / 3, t -> {
      if (sent[0] < PING.length()) {
        trickler.socket.write(PING.getBuffer(sent[0], sent[0] + 1));
        sent[0]++;
      }
    }));
    await(trickler.closed.future());
    onClient(() -> vertx.cancelTimer(timer));
    assertTrue(onClient(() -> sent[0]) < PING.length(), "the frame was complete before the close");
    assertEquals(0, onClient(() -> trickler.count("pong")));
    JsonObject err = onClient(() -> trickler.frames.get(0));
    assertTrue(err.getString("message").startsWith("no frame for " + IDLE + " ms"), err.encode());
    await(net.close());
  }

  /**
   * A client that sends inputs and never reads their answers fills its connection's write queue;
   * the node then stops reading it (ADR 0104), so its sends wait in TCP. Before, that lasted for
   * ever, the answers held by the node; now no whole frame arrives, and the connection is closed
   * (its writes fail). The close does not wait for the unread answers to be written, which would
   * never happen.
   */
  @Test
  void aBridgeClientThatNeverReadsIsClosed() throws Exception {
    int port = deployBridge(IDLE);
    CompletableFuture<Throwable> writerEnded = new CompletableFuture<>();
    try (Socket socket = new Socket("127.0.0.1", port)) {
      Thread writer = new Thread(() -> {
        try {
          DataOutputStream out = new DataOutputStream(socket.getOutputStream());
          String body = "x".repeat(60_000);
          for (int i = 0; ; i++) {
            byte[] json = new JsonObject().put("type", "send").put("address", SUBMIT)
                .put("headers", new JsonObject().put("key", "k" + (i % 8))).put("body", body)
                .put("replyAddress", "r-" + i).encode().getBytes(StandardCharsets.UTF_8);
            out.writeInt(json.length);
            out.write(json);
            out.flush();
          }
        } catch (IOException closedByTheNode) {
          writerEnded.complete(closedByTheNode);
        } catch (RuntimeException | Error e) {
          writerEnded.completeExceptionally(e);
        }
      }, "never-reads");
      writer.setDaemon(true);
      writer.start();
      writerEnded.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
    }
  }

  /** The new field is read and refused like the bridge's others: whole numbers within its range. */
  @Test
  void theBridgesIdleTimeoutIsAWholeNumberOfMsFromOneSecondToADay() {
    JsonObject json = config(new JsonObject()
        .put("bridge", new JsonObject().put("port", 9_000).put("idleTimeoutMs", 999)));
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> VerticleConfig.read(json));
    assertEquals(List.of("bridge.idleTimeoutMs = 999: must be 1000 to 86400000"), e.violations(), e.getMessage());
    json.getJsonObject("bridge").put("idleTimeoutMs", "2m");
    e = assertThrows(InvalidConfigException.class, () -> VerticleConfig.read(json));
    assertEquals(List.of("bridge.idleTimeoutMs = \"2m\": must be a whole number"), e.violations(), e.getMessage());
    json.getJsonObject("bridge").put("idleTimeoutMs", 86_400_001L);
    e = assertThrows(InvalidConfigException.class, () -> VerticleConfig.read(json));
    assertEquals(List.of("bridge.idleTimeoutMs = 86400001: must be 1000 to 86400000"), e.violations(), e.getMessage());
    json.getJsonObject("bridge").put("idleTimeoutMs", 5_000.0);
    assertEquals(5_000, VerticleConfig.read(json).ops().bridge().idleTimeoutMs());
    json.getJsonObject("bridge").remove("idleTimeoutMs");
    assertEquals(BridgeFrameLimit.DEFAULT_IDLE_TIMEOUT_MS, VerticleConfig.read(json).ops().bridge().idleTimeoutMs());
  }
}
