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

  @Test
  @Timeout(90_000)
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
      send("key-" + k, body, "id", id).onComplete(test.succeeding(reply -> test.verify(() -> {
        assertEquals(body, reply.body(), "a reply that is not this input's outcome");
        assertTrue(answered.putIfAbsent(id, true) == null, "two replies for " + id);
        replies.flag();
      })));
    }
    try {
      assertTrue(test.awaitCompletion(80, java.util.concurrent.TimeUnit.SECONDS), "not every request was answered");
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    assertEquals(0, overSize.get(), "a batch over maxBatchSize");
    assertEquals(0, outOfOrder.get(), "a key's inputs out of submission order");
    JsonObject m = metrics();
    assertEquals(INPUTS, m.getLong("submitted"), m.encode());
    assertEquals(0, m.getInteger("queuedInputs"), m.encode());
  }
}
