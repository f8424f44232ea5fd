package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.downstream.HttpDownstream;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Review N: the HTTP downstream's exchanges that end without a request written, as an operator
 * sees them in the log. Each test waits for the outcomes it asserts on; nothing sleeps.
 */
class ReviewNHttpDownstreamTest extends VerticleTestBase {
  /** Vert.x's own loggers (java.util.logging here): what an operator sees beside the ferry's lines. */
  private final Logger vertxLogs = Logger.getLogger("io.vertx");
  private final LogCapture capture =
      new LogCapture(Level.SEVERE, record -> record.getLoggerName() + ": " + record.getMessage());
  private final List<String> severe = capture.lines;

  @BeforeEach
  void captureVertxLogs() {
    vertxLogs.addHandler(capture);
  }

  @AfterEach
  void releaseVertxLogs() {
    vertxLogs.removeHandler(capture);
  }

  @Test
  void aBatchLeftWithNothingToSendWhenItsConnectionCameIsNotLoggedAsASevereStreamReset() {
    // ADR 0062: a batch whose inputs' deadlines all passed while it waited for a pooled connection
    // sends nothing (each caller had its 504 at its deadline). The connection it got was reset
    // unsent, and that request had no exception handler: Vert.x logged each such batch at SEVERE,
    // "Stream reset: 0" with a stack trace, an error with no key or cause for a path that is no
    // failure at all. The same held for a batch whose timeoutMs passed while it waited.
    List<Runnable> held = new CopyOnWriteArrayList<>();
    List<JsonObject> requests = new CopyOnWriteArrayList<>();
    HttpServer server = await(vertx.createHttpServer()
        .requestHandler(req -> req.body().onSuccess(body -> {
          JsonObject batch = body.toJsonObject();
          requests.add(batch);
          JsonArray outcomes = new JsonArray();
          batch.getJsonArray("inputs").forEach(i -> outcomes.add(new JsonObject().put("ok", ((JsonObject) i).getValue("input"))));
          held.add(() -> req.response().end(new JsonObject().put("outcomes", outcomes).toBuffer()));
        }))
        .listen(0, "127.0.0.1"));
    // A pool of one connection, so that the second batch waits behind the first.
    HttpDownstream down = new HttpDownstream(vertx, "http://127.0.0.1:" + server.actualPort() + "/batch", 10_000, 1);
    Future<JsonArray> holding = down.call(HostileHttpServer.batchUntil("hold", Long.MAX_VALUE, "h"));
    await(Future.future(p -> vertx.setPeriodic(5, t -> { if (held.size() == 1) { vertx.cancelTimer(t); p.complete(); } })));
    // Its deadline has passed by the time the connection is free: nothing is to be written.
    Future<JsonArray> late = down.call(HostileHttpServer.batchUntil("late", System.nanoTime(), "expired"));
    vertx.runOnContext(v -> held.forEach(Runnable::run));
    assertEquals(new JsonArray().add(new JsonObject().put("ok", "h")), await(holding));
    assertEquals(new JsonArray(), await(late));
    // A third batch after both is served: the pool's one connection was not lost either.
    Future<JsonArray> next = down.call(HostileHttpServer.batchUntil("next", Long.MAX_VALUE, "n"));
    await(Future.future(p -> vertx.setPeriodic(5, t -> { if (held.size() == 2) { vertx.cancelTimer(t); p.complete(); } })));
    vertx.runOnContext(v -> held.get(1).run());
    assertEquals(new JsonArray().add(new JsonObject().put("ok", "n")), await(next));
    assertEquals(2, requests.size());
    await(down.close());
    assertEquals(List.of(), severe);
  }
}
