package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.downstream.HttpDownstream;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Review AY: the HTTP downstream closed while batches wait for its one pooled connection, one of
 * them past its timeout while the connection opened for it is still opening. The close must
 * complete, and so must every call (ADR 0180). The order is set by timers on one loop, which fire
 * in the order of their deadlines however late; nothing sleeps.
 */
class ReviewAyCloseRaceTest extends VerticleTestBase {
  /**
   * Each batch's timeoutMs. The steps below are T/4 apart or more: a closed connection's
   * replacement must be asked for, and the proxy reach it, within T/2 (a second, so that a loaded
   * machine's stalls fit in it; the order itself comes from the timers, not from the margin).
   */
  private static final long T = 1_000;

  @Test
  void aCloseAfterThePoolWaitTimerOfABatchWhoseConnectionWasStillOpeningCompletes() {
    // Vert.x 5.0.7's pool, given a wait timeout per request (the connect timeout): a request whose
    // timer fires while the connection opened for it is still opening (it is that slot's
    // initiator) has its wait failed and stays the initiator; the pool's close fails it again, and
    // its promise throws "Promise already completed" out of the close: the client's close never
    // completed, nor the verticle's undeploy, nor Vert.x's close (a CI soak round).
    //
    // The downstream is reached through a SOCKS5 proxy, scripted here: it lets the first
    // connection through (and then never answers the batch on it) and never answers the second
    // one's greeting, which stays opening. A pool of one; T is timeoutMs.
    List<NetSocket> accepted = new CopyOnWriteArrayList<>();
    NetServer proxy = await(vertx.createNetServer().connectHandler(socket -> {
      accepted.add(socket);
      if (accepted.size() > 1) {
        return; // the second connection: its greeting is never answered
      }
      int[] chunks = {0};
      socket.handler(chunk -> {
        int n = ++chunks[0];
        if (n == 1) {
          socket.write(io.vertx.core.buffer.Buffer.buffer(new byte[] {5, 0})); // no authentication
        } else if (n == 2) {
          socket.write(io.vertx.core.buffer.Buffer.buffer(new byte[] {5, 0, 0, 1, 0, 0, 0, 0, 0, 0})); // connected
        } // then the batch, never answered
      });
    }).listen(0, "127.0.0.1"));
    Context loop = vertx.getOrCreateContext();
    Promise<List<Future<JsonArray>>> calls = Promise.promise();
    Promise<Void> closed = Promise.promise();
    loop.runOnContext(v -> {
      HttpDownstream down = new HttpDownstream(vertx, "http://127.0.0.1:9/batch",
          T, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES,
          new io.vertx.core.http.HttpClientOptions().setProxyOptions(new io.vertx.core.net.ProxyOptions()
              .setType(io.vertx.core.net.ProxyType.SOCKS5).setHost("127.0.0.1").setPort(proxy.actualPort())), null, 1);
      List<Future<JsonArray>> made = new CopyOnWriteArrayList<>();
      // At 0: the first batch takes the pool's one connection, written and never answered.
      made.add(down.call(HostileHttpServer.batchUntil("a", Long.MAX_VALUE, "a")));
      // At T/2: a second waits for it. At T the first fails and its connection is closed: the
      // pool opens the next for the second, which stays opening (its slot's initiator).
      vertx.setTimer(T / 2, t -> made.add(down.call(HostileHttpServer.batchUntil("b", Long.MAX_VALUE, "b"))));
      // At 3T/4: a third waits too, keeping the pool alive past the second's timers at 3T/2.
      vertx.setTimer(3 * T / 4, t -> made.add(down.call(HostileHttpServer.batchUntil("c", Long.MAX_VALUE, "c"))));
      // At 13T/8: after the second's timers, before the third's (one loop: timers fire in the
      // order of their deadlines, however late): closed.
      vertx.setTimer(13 * T / 8, t -> {
        calls.complete(made);
        down.close().onComplete(ar -> closed.complete());
      });
    });
    List<Future<JsonArray>> made = await(calls.future());
    assertEquals(3, made.size());
    assertEquals(2, accepted.size(), "the second connection was asked for, and left opening");
    await(closed.future());
    for (Future<JsonArray> call : made) {
      await(call.transform(ar -> Future.succeededFuture()));
      assertTrue(call.failed(), "every batch failed (the server answered none)");
    }
    assertTrue(made.get(0).cause().getMessage().contains("within " + T + " ms"), made.get(0).cause().toString());
    accepted.forEach(NetSocket::close);
  }
}
