package dev.ferry.verticle;

import static dev.ferry.verticle.HostileHttpServer.batch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.downstream.HttpDownstream;
import dev.ferry.internal.ConfigCheck;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review AF: servers close idle keep-alive connections on their own timers (Node.js 5 s, Tomcat
 * 20 s, Jetty 30 s, AWS ALB 60 s), and a batch written as that close crosses it fails after it was
 * written: its callers got 502 "may have been applied" from a server that never read it.
 *
 * <p>The race itself depends on timing. The server here makes it certain: a request arriving on a
 * connection idle for {@code idleMs} or more is read and the connection closed unanswered, as if
 * the server's timer had fired as the request arrived. The client's idle time is never longer than
 * the server's (the server's starts when it writes the answer, the client's once it has read it;
 * the request is written before it arrives), so a client that waited at least {@code idleMs}
 * between two batches always meets that close if it reuses the connection. Waits only lengthen on
 * a slow machine, which never turns a reuse the fix refuses into one it allows.
 */
class ReviewAfIdleCloseTest extends VerticleTestBase {
  private HttpDownstream down;

  @AfterEach
  void closeDownstream() {
    if (down != null) {
      await(down.close());
    }
  }

  /**
   * A server answering each batch's first input, that drops a request on a connection idle >=
   * idleMs since its last answer (with {@code fromAccept}, since its accept if it has not answered
   * on it yet: the client's first request ever may take longer than that, loading classes).
   */
  private static final class IdleClosingServer {
    final HostileHttpServer server;
    /** First inputs of the requests read and dropped; written on the server's loop, read by the test. */
    final List<Object> dropped = new CopyOnWriteArrayList<>();

    IdleClosingServer(io.vertx.core.Vertx vertx, long idleMs, String extraHeaders, int holdUntil) {
      this(vertx, idleMs, extraHeaders, holdUntil, false);
    }

    IdleClosingServer(io.vertx.core.Vertx vertx, long idleMs, String extraHeaders, int holdUntil, boolean fromAccept) {
      // Each connection's last answer (nanoTime), and the requests held back: the server's loop only.
      Map<Integer, Long> answeredAt = new HashMap<>();
      List<HostileHttpServer.Request> held = new ArrayList<>();
      boolean[] released = {false};
      HostileHttpServer[] self = new HostileHttpServer[1];
      server = HostileHttpServer.start(vertx, r -> {
        Long at = answeredAt.getOrDefault(r.connection(), fromAccept ? self[0].acceptedAt(r.connection()) : null);
        if (at != null && System.nanoTime() - at >= TimeUnit.MILLISECONDS.toNanos(idleMs)) {
          dropped.add(r.input(0));
          r.socket().close(); // read, never answered: the close crossed it
          return;
        }
        held.add(r);
        if (!released[0] && held.size() < holdUntil) {
          return; // holds the first requests until holdUntil arrived: one connection each
        }
        released[0] = true;
        for (HostileHttpServer.Request h : held) {
          h.socket().write(HostileHttpServer.response(200, "Content-Type: application/json\r\n" + extraHeaders,
              HostileHttpServer.outcomes(h.input(0))));
          answeredAt.put(h.connection(), System.nanoTime());
        }
        held.clear();
      });
      self[0] = server;
    }
  }

  /** Waits at least {@code ms}: longer on a slow machine, which only makes the connection staler. */
  private static void idle(long ms) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    for (long left; (left = end - System.nanoTime()) > 0; ) {
      try {
        TimeUnit.NANOSECONDS.sleep(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  /** Hang guard: generous, a slow machine must not fail a test. */
  private Future<JsonArray> call(String key, Object input) {
    Promise<JsonArray> p = Promise.promise();
    client.runOnContext(v -> down.call(batch(key, input)).onComplete(p));
    return p.future();
  }

  private static JsonArray oks(Object v) {
    return new JsonArray().add(new JsonObject().put("ok", v));
  }

  /**
   * The verticle, its downstream on a server that closes connections idle for 300 ms, configured
   * with {@code keepAliveTimeoutMs} 200: a quiet key's second batch, 400 ms later, is answered.
   * Before the fix (Vert.x's 60 s keep-alive), it was written on the idle connection, the server
   * closed it, and the caller got 502 for a batch no server read. 200 ms is under a second on
   * purpose: Vert.x's keep-alive timeout is whole seconds, so rounded to one it reused it too.
   */
  @Test
  void aQuietKeysBatchIsNotWrittenOnAConnectionTheServerIsClosing() {
    IdleClosingServer s = new IdleClosingServer(vertx, 300, "", 1);
    deploy(new JsonObject().put("downstream", new JsonObject().put("type", "http").put("url", s.server.url())
        .put("keepAliveTimeoutMs", 200)));
    assertEquals("A", await60(send("quiet", "A")).body());
    idle(400);
    Future<io.vertx.core.eventbus.Message<Object>> b = send("quiet", "B");
    settle60(b);
    assertTrue(b.succeeded(), "the caller got " + b.cause() + "; the server dropped " + s.dropped);
    assertEquals("B", b.result().body());
    assertEquals(List.of(), s.dropped);
    assertEquals(List.of("A", "B"), await60(s.server.firstInputs()));
    assertTrue(await60(s.server.request(1)).connection() > 0, "B went on the idle connection");
  }

  /**
   * Node.js says {@code Keep-Alive: timeout=5} and closes at 5 s: a client that reuses up to 5 s
   * (Vert.x adopts the header as it is) meets the close at the boundary. Here the server says 2 s
   * and drops requests on connections idle 1 s (its close crossing a request written within its
   * last second); the downstream, at its default keepAliveTimeoutMs (4 s), keeps a second's margin
   * under the advertised 2 s and opens a new connection after 1 s of idleness (Vert.x alone
   * reused it until 2 s).
   */
  @Test
  void aServersAdvertisedKeepAliveTimeoutIsKeptWithASecondsMargin() {
    IdleClosingServer s = new IdleClosingServer(vertx, 1_000, "Keep-Alive: timeout=2\r\n", 1);
    down = new HttpDownstream(vertx, s.server.url(), 60_000, 1);
    assertEquals(oks("A"), await60(call("k", "A")));
    // Past 1 s by a margin: the call completes a moment before the downstream marks the connection
    // idle, so waiting exactly 1 s from here could leave it idle just under its limit.
    idle(1_200);
    Future<JsonArray> b = call("k", "B");
    settle60(b);
    assertTrue(b.succeeded(), "B failed: " + b.cause() + "; the server dropped " + s.dropped);
    assertEquals(oks("B"), b.result());
    assertEquals(List.of(), s.dropped);
  }

  /**
   * Five idle connections, all past keepAliveTimeoutMs: one batch closes each it is handed, more
   * than the three asks a batch has for connections closed under it, and still gets a fresh one.
   * Stale connections are this client's own choice to drop, not a server refusing: counted, the
   * batch failed (502) on the fourth, unsent.
   */
  @Test
  void staleConnectionsDroppedUnwrittenDoNotUseUpABatchsAsks() {
    IdleClosingServer s = new IdleClosingServer(vertx, 300, "", 5);
    down = new HttpDownstream(vertx, s.server.url(), 60_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, null, null, 5, 200);
    List<Future<JsonArray>> first = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      first.add(call("k" + i, "i" + i));
    }
    for (int i = 0; i < 5; i++) {
      assertEquals(oks("i" + i), await60(first.get(i)));
    }
    idle(400);
    Future<JsonArray> b = call("quiet", "B");
    settle60(b);
    assertTrue(b.succeeded(), "B failed: " + b.cause() + "; the server dropped " + s.dropped);
    assertEquals(oks("B"), b.result());
    assertEquals(List.of(), s.dropped);
    assertEquals(5, await60(s.server.request(5)).connection(), "B went on an idle connection");
  }

  /**
   * At most once holds: configured past the server's idle timeout, a batch written on a connection
   * the server then closes fails (its callers get 502: it may have been applied) and is never
   * written again, on this connection or another.
   */
  @Test
  void aBatchWrittenOnAConnectionTheServerClosedFailsAndIsNotSentAgain() {
    IdleClosingServer s = new IdleClosingServer(vertx, 300, "", 1);
    down = new HttpDownstream(vertx, s.server.url(), 60_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, null, null, 1,
        60_000);
    assertEquals(oks("A"), await60(call("k", "A")));
    idle(400);
    Throwable failed = assertThrows(AssertionError.class, () -> await60(call("k", "B"))).getCause();
    assertTrue(failed instanceof dev.ferry.downstream.DownstreamException, String.valueOf(failed));
    assertEquals(List.of("B"), s.dropped);
    // Whatever comes next: B was not written again.
    assertEquals(oks("C"), await60(call("k", "C")));
    assertEquals(List.of("A", "B", "C"), await60(s.server.firstInputs()));
  }

  /**
   * A batch that sends nothing (every input's deadline passed in the pool) takes a connection and
   * gives it back unused: the server's idle timer kept running, and so must the downstream's mark.
   * Restarted there, the next batch, 310 ms after the last answer but 160 ms after the empty
   * batch, went on a connection the server (300 ms) was closing.
   */
  @Test
  void aBatchThatSentNothingDoesNotMakeItsConnectionLookFresh() {
    IdleClosingServer s = new IdleClosingServer(vertx, 300, "", 1);
    down = new HttpDownstream(vertx, s.server.url(), 60_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, null, null, 1, 200);
    assertEquals(oks("A"), await60(call("k", "A")));
    idle(150);
    Promise<JsonArray> empty = Promise.promise();
    client.runOnContext(v -> down.call(HostileHttpServer.batchUntil("k", System.nanoTime() - 1, "late")).onComplete(empty));
    assertEquals(new JsonArray(), await60(empty.future()));
    idle(160);
    Future<JsonArray> b = call("k", "B");
    settle60(b);
    assertTrue(b.succeeded(), "B failed: " + b.cause() + "; the server dropped " + s.dropped);
    assertEquals(List.of(), s.dropped);
    assertEquals(List.of("A", "B"), await60(s.server.firstInputs()));
  }

  /**
   * A connection opened for a batch that then sent nothing (its inputs' deadlines had passed) went
   * back to the pool with no idle mark: the server's idle timer ran from its accept, the
   * downstream's had not started, and the next batch, 400 ms later, was written on it and met the
   * server's close (300 ms). Marked idle from its opening, it is closed unwritten instead.
   */
  @Test
  void aConnectionOpenedButNeverWrittenOnIsIdleFromItsOpening() {
    IdleClosingServer s = new IdleClosingServer(vertx, 300, "", 1, true);
    // A first call from another client, so that the classes an HTTP request needs are loaded
    // (that took over 300 ms between a connection's accept and its first request); its
    // connection, number 0, closes with that client.
    down = new HttpDownstream(vertx, s.server.url(), 60_000, 1);
    assertEquals(oks("warm"), await60(call("k", "warm")));
    await60(down.close());
    down = new HttpDownstream(vertx, s.server.url(), 60_000, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, null, null, 1, 200);
    Promise<JsonArray> empty = Promise.promise();
    client.runOnContext(v -> down.call(HostileHttpServer.batchUntil("k", System.nanoTime() - 1, "late")).onComplete(empty));
    assertEquals(new JsonArray(), await60(empty.future()));
    idle(400);
    Future<JsonArray> b = call("k", "B");
    settle60(b);
    assertTrue(b.succeeded(), "B failed: " + b.cause() + "; the server dropped " + s.dropped);
    assertEquals(oks("B"), b.result());
    assertEquals(List.of(), s.dropped);
    assertEquals(2, await60(s.server.request(1)).connection(), "B went on the connection opened for the empty batch");
  }

  @Test
  void keepAliveTimeoutMsIsReadInMillisecondsAndValidatedByName() {
    assertEquals(HttpDownstream.DEFAULT_KEEP_ALIVE_TIMEOUT_MS, read(new JsonObject()).keepAliveTimeoutMs());
    assertEquals(4_000, HttpSettings.defaults().keepAliveTimeoutMs());
    assertEquals(1_500, read(new JsonObject().put("keepAliveTimeoutMs", 1_500)).keepAliveTimeoutMs());
    assertEquals(250, read(new JsonObject().put("keepAliveTimeoutMs", 250.0)).keepAliveTimeoutMs());
    for (Object bad : new Object[] {0, -1, 1.5, "4000", true, VerticleConfig.MAX_MS + 1}) {
      ConfigCheck check = new ConfigCheck();
      HttpSettings.read(new JsonObject().put("keepAliveTimeoutMs", bad), check, false);
      assertEquals(1, check.violations().size(), bad + ": " + check.violations());
      String v = check.violations().get(0);
      assertTrue(v.startsWith("downstream.keepAliveTimeoutMs = ")
          && v.endsWith(": must be a whole number >= 1 and <= " + VerticleConfig.MAX_MS), v);
    }
  }

  @Test
  void keepAliveTimeoutMsIsAKnownDownstreamFieldAndItsErrorIsNamedAtDeploy() {
    Throwable t = failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
        new io.vertx.core.DeploymentOptions().setConfig(new JsonObject().put("downstream", new JsonObject()
            .put("type", "http").put("url", "http://127.0.0.1:1/batch").put("keepAliveTimeoutMs", 0)))));
    assertTrue(t.getMessage().contains("downstream.keepAliveTimeoutMs = 0: must be a whole number >= 1"), t.getMessage());
    assertTrue(!t.getMessage().contains("unknown field"), t.getMessage());
  }

  private static HttpSettings read(JsonObject d) {
    ConfigCheck check = new ConfigCheck();
    HttpSettings s = HttpSettings.read(d, check, false);
    assertEquals(List.of(), check.violations());
    return s;
  }
}
