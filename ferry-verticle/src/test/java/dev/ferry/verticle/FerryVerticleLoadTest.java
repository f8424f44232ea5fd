package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Checkpoint;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxTestContext;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * 20,000 inputs over 500 keys against a downstream with random (seeded) latency: every request
 * gets exactly one reply, its own value; per key, inputs reach the downstream in submission order,
 * never two calls at once (the recorder checks), never an input twice, never over maxBatchSize.
 */
class FerryVerticleLoadTest extends VerticleTestBase {
  private static final int INPUTS = 20_000;
  private static final int KEYS = 500;
  private static final int MAX_BATCH = 50;
  /**
   * The one hang guard: how long the whole run may take. No input here has a deadline, so the last
   * one's answer waits for the 19,999 before it, however fast the machine serves them; each
   * request's send timeout was the event bus's default 30 s, a second, tighter bound on the run's
   * throughput that only the machine's speed decided. The send timeout now outlasts the test's own
   * wait, which alone calls a missing answer a hang (review AK).
   */
  private static final int GUARD_SECONDS = 80;

  @Test
  @Timeout(GUARD_SECONDS * 1000 + 10_000)
  void everyRequestGetsExactlyOneReply(VertxTestContext test) {
    deploy(config(new JsonObject().put("maxQueueing", INPUTS).put("maxBatchSize", MAX_BATCH)));
    Random latency = new Random(42);
    Map<String, Integer> lastSeq = new HashMap<>();
    AtomicInteger overSize = new AtomicInteger();
    AtomicInteger outOfOrder = new AtomicInteger();
    downstream.auto(call -> {
      // Recorder callbacks run on one consumer context: plain maps are safe here.
      if (call.inputs.size() > MAX_BATCH) {
        overSize.incrementAndGet();
      }
      for (Object body : call.bodies()) {
        int seq = ((JsonObject) body).getInteger("seq");
        Integer last = lastSeq.put(call.key, seq);
        if (last != null && last >= seq) {
          outOfOrder.incrementAndGet();
        }
      }
      vertx.setTimer(1 + latency.nextInt(5), t -> call.echo());
    });
    Checkpoint replies = test.checkpoint(INPUTS);
    Map<String, Boolean> answered = new ConcurrentHashMap<>();
    Random keys = new Random(7);
    int[] perKey = new int[KEYS];
    for (int i = 0; i < INPUTS; i++) {
      int k = keys.nextInt(KEYS);
      String id = Integer.toString(i);
      JsonObject body = new JsonObject().put("i", i).put("seq", perKey[k]++);
      sendPatiently("key-" + k, body, id).onComplete(test.succeeding(reply -> test.verify(() -> {
        assertEquals(body, reply.body(), "a reply that is not this input's outcome");
        assertTrue(answered.putIfAbsent(id, true) == null, "two replies for " + id);
        replies.flag();
      })));
    }
    try {
      assertTrue(test.awaitCompletion(GUARD_SECONDS, java.util.concurrent.TimeUnit.SECONDS), "not every request was answered");
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    assertEquals(0, overSize.get(), "a batch over maxBatchSize");
    assertEquals(0, outOfOrder.get(), "a key's inputs out of submission order");
    JsonObject m = metrics();
    assertEquals(INPUTS, m.getLong("submitted"), m.encode());
    assertEquals(0, m.getInteger("queuedInputs"), m.encode());
  }

  /** As {@link #send}, waiting for the answer longer than the test does. */
  private io.vertx.core.Future<io.vertx.core.eventbus.Message<Object>> sendPatiently(String key, Object body, String id) {
    io.vertx.core.eventbus.DeliveryOptions options = new io.vertx.core.eventbus.DeliveryOptions()
        .setSendTimeout((GUARD_SECONDS + 30) * 1000L).addHeader("key", key).addHeader("id", id);
    io.vertx.core.Promise<io.vertx.core.eventbus.Message<Object>> reply = io.vertx.core.Promise.promise();
    client.runOnContext(v -> vertx.eventBus().<Object>request(SUBMIT, body, options).onComplete(reply));
    return reply.future();
  }
}
