package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.eventbus.Message;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Review N: operations.md's {@code ferry.timeouts} (the snapshot's {@code timedOut}) counts the
 * 504s: inputs whose caller's deadline passed while they waited. Nothing here sleeps.
 */
class ReviewNTimedOutTest extends VerticleTestBase {

  @Test
  void aDeadlineThatPassesWhileItsBatchWaitsForAConnectionIsCountedInTimedOut() {
    // ADR 0062: an input whose deadline passes after its batch left the lane but before the
    // request is written (the batch waits for its connection: a TLS handshake, here one the
    // server never answers) gets its 504 at that moment and is never sent. Only the engine counted
    // timeouts, and only of inputs still in their lanes: this 504 reached the caller while
    // timedOut (and the ferry.timeouts meter, which operators read for "many 504") stayed 0.
    List<NetSocket> held = new CopyOnWriteArrayList<>();
    NetServer silent = await(vertx.createNetServer().connectHandler(held::add).listen(0, "127.0.0.1"));
    deploy(new JsonObject().put("callTimeoutMs", 1_000).put("downstream", new JsonObject().put("type", "http")
        .put("url", "https://127.0.0.1:" + silent.actualPort() + "/batch").put("timeoutMs", 1_000)
        .put("tls", new JsonObject().put("trustAll", true))));
    Future<Message<Object>> late = send("k", "late", "timeout-ms", "50");
    assertEquals(504, code(late));
    assertEquals(1, metrics().getLong("timedOut"), "the 504 is counted");
  }
}
