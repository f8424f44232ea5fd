package dev.ferry.cluster;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * One downstream shared by every node of a test cluster, living on one node: node i calls it at
 * {@code down.i}, so each call is known by the node that made it. It answers each call after a
 * seeded random delay and records the calls with start and end times. It checks, across all
 * nodes, that a key never has two calls open at once; inputs carrying {"s": sender, "n": seq}
 * are checked to reach it in increasing seq per (key, sender). Test code: plain locks are fine.
 *
 * <p>Bodies with {"reject": text} get an {"error": text} outcome; {"fail": true} fails the call.
 */
final class SharedDownstream {
  record Call(int node, String key, List<Object> bodies, long start, long end) {}

  private final Vertx vertx;
  private final Random random;
  private final int maxDelayMs;
  private final List<Call> calls = new ArrayList<>();
  private final Map<String, Integer> open = new HashMap<>();
  private final Map<String, Long> lastSeq = new HashMap<>();
  private final Map<String, String> lastWhere = new HashMap<>();
  private final long t0 = System.nanoTime();
  private volatile int slowNode = -1;
  private volatile int slowMs;
  private final List<String> violations = new ArrayList<>();
  private final List<String> reorders = new ArrayList<>();

  SharedDownstream(Vertx vertx, long seed, int maxDelayMs) {
    this.vertx = vertx;
    this.random = new Random(seed);
    this.maxDelayMs = maxDelayMs;
  }

  static String address(int node) {
    return "down." + node;
  }

  Future<Void> listen(int nodes) {
    List<Future<Void>> all = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      int node = i;
      all.add(vertx.eventBus().consumer(address(i), (Message<Object> m) -> handle(node, m)).completion());
    }
    return Future.all(all).mapEmpty();
  }

  private void handle(int node, Message<Object> m) {
    JsonObject request = (JsonObject) m.body();
    String key = request.getString("key");
    JsonArray inputs = request.getJsonArray("inputs");
    long start = System.nanoTime();
    int delay;
    synchronized (this) {
      Integer other = open.put(key, node);
      if (other != null) {
        violations.add("key " + key + " has two calls in flight (nodes " + other + " and " + node + ")");
      }
      for (int i = 0; i < inputs.size(); i++) {
        if (inputs.getJsonObject(i).getValue("input") instanceof JsonObject b && b.containsKey("s")) {
          String lane = key + "/" + b.getValue("s");
          long n = b.getLong("n");
          Long last = lastSeq.put(lane, n);
          String where = "node " + node + " at " + (start - t0) / 1_000_000 + " ms";
          String before = lastWhere.put(lane, where);
          if (last != null && last >= n) {
            reorders.add("sender " + b.getValue("s") + " key " + key + ": " + n + " sent by " + where
                + " after " + last + " sent by " + before);
          }
        }
      }
      delay = node == slowNode ? slowMs : maxDelayMs <= 0 ? 0 : random.nextInt(maxDelayMs + 1);
    }
    Runnable answer = () -> {
      List<Object> bodies = new ArrayList<>();
      JsonArray outcomes = new JsonArray();
      boolean fail = false;
      for (int i = 0; i < inputs.size(); i++) {
        Object body = inputs.getJsonObject(i).getValue("input");
        bodies.add(body);
        if (body instanceof JsonObject o && o.containsKey("reject")) {
          outcomes.add(new JsonObject().put("error", o.getString("reject")));
        } else {
          fail |= body instanceof JsonObject o && o.getBoolean("fail", false);
          outcomes.add(new JsonObject().put("ok", body));
        }
      }
      synchronized (this) {
        open.remove(key);
        calls.add(new Call(node, key, bodies, start, System.nanoTime()));
      }
      if (fail) {
        m.fail(500, "downstream failed on purpose");
      } else {
        m.reply(new JsonObject().put("outcomes", outcomes));
      }
    };
    if (delay == 0) {
      answer.run();
    } else {
      vertx.setTimer(delay, t -> answer.run());
    }
  }

  /** Calls made by {@code node} take {@code ms}: its lanes fill up. */
  SharedDownstream slow(int node, int ms) {
    slowMs = ms;
    slowNode = node;
    return this;
  }

  /** Whether a call of {@code key} has reached this downstream and is not answered yet. */
  synchronized boolean inFlight(String key) {
    return open.containsKey(key);
  }

  synchronized List<Call> calls() {
    return List.copyOf(calls);
  }

  /** One sender's inputs for a key that reached the downstream out of order. */
  synchronized List<String> reorders() {
    return List.copyOf(reorders);
  }

  /** Two calls in flight for one key. */
  synchronized List<String> violations() {
    return List.copyOf(violations);
  }
}
