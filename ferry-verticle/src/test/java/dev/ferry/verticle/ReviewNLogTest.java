package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.Message;
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
 * Review N: operations.md promises that a failed batch is logged once, at WARNING, with its key,
 * its size and the cause. Nothing here sleeps: each step waits for the replies it needs.
 */
class ReviewNLogTest extends VerticleTestBase {
  private final Logger ferryLogs = Logger.getLogger("dev.ferry");
  private final LogCapture capture = new LogCapture(Level.WARNING);
  private final List<String> warnings = capture.lines;

  @BeforeEach
  void captureLogs() {
    ferryLogs.addHandler(capture);
  }

  @AfterEach
  void releaseLogs() {
    ferryLogs.removeHandler(capture);
  }

  @Test
  void aBatchWhoseCallersGot502AtTheCallTimeoutIsLoggedEvenIfItsHttpCallEndsWellLater() {
    // The HTTP downstream's timeoutMs may be longer than callTimeoutMs (the guide lets it be set on
    // its own): at callTimeoutMs the callers get 502 and the failure is counted (failedBatches,
    // health), while the exchange runs on to its own deadline. The verticle logged a batch only
    // when its call failed, so a call that answered after callTimeoutMs left its callers' 502 in
    // no log line at all.
    List<Runnable> held = new CopyOnWriteArrayList<>();
    Promise<Void> arrived = Promise.promise();
    HttpServer server = await(vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(b -> {
      JsonArray outcomes = new JsonArray();
      b.toJsonObject().getJsonArray("inputs").forEach(i -> outcomes.add(new JsonObject().put("ok", ((JsonObject) i).getValue("input"))));
      Runnable answer = () -> req.response().end(new JsonObject().put("outcomes", outcomes).toBuffer());
      if (held.isEmpty()) {
        held.add(answer); // the first call answers only when the test says so
        arrived.tryComplete();
      } else {
        answer.run();
      }
    })).listen(0, "127.0.0.1"));
    deploy(new JsonObject().put("callTimeoutMs", 100).put("downstream", new JsonObject().put("type", "http")
        .put("url", "http://127.0.0.1:" + server.actualPort() + "/batch").put("timeoutMs", 10_000)));
    Future<Message<Object>> first = send("k", "first");
    assertEquals(502, code(first));
    await(arrived.future());
    // Two inputs wait behind the held call and leave as one batch once it is over: by its size,
    // that batch's log line (if any) is told apart from the first one's.
    Future<Message<Object>> second = send("k", "second");
    Future<Message<Object>> third = send("k", "third");
    admitted(3);
    vertx.runOnContext(v -> held.get(0).run());
    // The key's next call leaves only once the first one is over: by its answer, that one ended.
    // That call has the same callTimeoutMs of 100 ms, real time, and a loaded machine can stretch
    // an HTTP round trip past it: then both callers get 502 and their batch is logged in
    // turn, which is right. Slowness may add that line; it cannot add one for the first batch.
    Throwable late = await(second.transform(ar -> Future.succeededFuture(ar.failed() ? ar.cause() : null)));
    if (late == null) {
      assertEquals("second", body(second));
      assertEquals("third", body(third));
    } else {
      assertEquals(502, ((io.vertx.core.eventbus.ReplyException) late).failureCode(), late.toString());
      assertEquals(502, code(third));
    }
    long failedBatches = late == null ? 1 : 2;
    assertEquals(failedBatches, metrics().getLong("failedBatches"), "the first batch counts as failed");
    List<String> ofTheFirst = warnings.stream().filter(w -> w.contains("batch of 1 input(s) for key \"k\" failed")).toList();
    assertEquals(1, ofTheFirst.size(), "the batch whose callers got 502 is logged once: " + warnings);
    assertEquals(failedBatches, warnings.size(), "nothing else is logged: " + warnings);
  }
}
