package dev.ferry.verticle;

import static dev.ferry.verticle.HostileHttpServer.batch;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.downstream.HttpDownstream;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review AG: a server that advertises {@code Keep-Alive: timeout=1} (or 0) leaves the HTTP
 * downstream no idle reuse (ADR 0165). Its connections were still pooled after each answer, and
 * the pool handed each to the batch first in line, which could only close it and ask again: it
 * then queued behind every batch that came after it. Under load every other batch went to the
 * back of the queue: on a pool of 1, the second batch was the eleventh of twenty written.
 */
class ReviewAgKeepAliveTest extends VerticleTestBase {
  private HttpDownstream down;

  @AfterEach
  void closeDownstream() {
    if (down != null) {
      await(down.close());
    }
  }

  private Future<JsonArray> call(String key, Object input) {
    Promise<JsonArray> p = Promise.promise();
    client.runOnContext(v -> down.call(batch(key, input)).onComplete(p));
    return p.future();
  }

  private static String answer(HostileHttpServer.Request r) {
    return HostileHttpServer.response(200, "Content-Type: application/json\r\nKeep-Alive: timeout=1\r\n",
        HostileHttpServer.outcomes(r.input(0)));
  }

  /**
   * Twenty batches wait for a pool of 1 while the first is answered, each answer saying
   * {@code timeout=1}: they are written in the order they asked, each on a new connection. The
   * first is held until all have asked, so the order they wait in is the order they were called;
   * a slow machine changes nothing here. Before the fix, the batch handed the first, spent
   * connection closed it and queued again, last: the server read i0, i2, i4, ..., i1, ...
   */
  @Test
  void aConnectionTheServerLeavesNoIdleReuseIsClosedAfterItsAnswerNotHandedOn() {
    int n = 20;
    HostileHttpServer s = HostileHttpServer.start(vertx, r -> {
      if (r.index() > 0) {
        r.socket().write(answer(r));
      }
    });
    down = new HttpDownstream(vertx, s.url(), 60_000, 1);
    List<Future<JsonArray>> calls = new ArrayList<>();
    calls.add(call("k0", "i0"));
    HostileHttpServer.Request first = await60(s.request(0));
    for (int i = 1; i < n; i++) {
      calls.add(call("k" + i, "i" + i));
    }
    // The client context runs its tasks in order: once this one ran, every batch has asked the pool.
    Promise<Void> asked = Promise.promise();
    client.runOnContext(v -> asked.complete());
    await60(asked.future());
    first.socket().write(answer(first));
    List<Object> expected = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      assertEquals(new JsonArray().add(new JsonObject().put("ok", "i" + i)), await60(calls.get(i)));
      expected.add("i" + i);
    }
    assertEquals(expected, await60(s.firstInputs()));
  }
}
