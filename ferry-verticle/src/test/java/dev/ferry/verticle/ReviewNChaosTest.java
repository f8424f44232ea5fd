package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Review N: a seeded storm of good and bad inputs against a downstream that misbehaves at random
 * (fails, never answers, answers twice, late, short, long), with an undeploy in the middle. Every
 * request must get exactly one reply of the documented kinds, an input answered 400, 429, 503 or
 * 504 must never have been sent, one answered ok or 422 must have been sent exactly once, and a
 * key's inputs reach the downstream in the order they were submitted. A round that does not
 * undeploy must end with nothing queued, in flight or active once every reply is in, and no 504
 * may come before its caller's timeout-ms. Held on review N's code; kept as a regression net.
 */
class ReviewNChaosTest extends VerticleTestBase {
  private static final String CHAOS = "review.n.downstream";
  /** Rounds per test: each deploys a ferry with a config drawn from the seed, and half undeploy midway. */
  private static final int ROUNDS = 10;

  /** The seed: REVIEW_N_SEED from the environment (the forked test JVM inherits it), else a new one. */
  private static long seed() {
    String given = System.getenv("REVIEW_N_SEED");
    return given != null ? Long.parseLong(given) : System.nanoTime();
  }

  /** What the downstream saw: input id -> the call that carried it; per key, ids in arrival order. */
  private final Map<String, Integer> sentIn = new HashMap<>();
  private final Map<String, List<Integer>> keyOrder = new HashMap<>();
  private final List<String> problems = new ArrayList<>();

  @Test
  void everyInputGetsOneDocumentedReplyAndOnlyAnsweredOnesWereSent() {
    long seed = seed();
    System.out.println("ReviewNChaosTest seed = " + seed + " (rerun with REVIEW_N_SEED=" + seed + ")");
    for (int round = 0; round < ROUNDS; round++) {
      sentIn.clear();
      keyOrder.clear();
      run(new Random(seed + round), round);
    }
    assertEquals(List.of(), problems, "seed " + seed);
  }

  @Test
  void overHttpEveryInputGetsOneDocumentedReplyAndOnlyAnsweredOnesWereSent() {
    long seed = seed();
    System.out.println("ReviewNChaosTest http seed = " + seed + " (rerun with REVIEW_N_SEED=" + seed + ")");
    Random down = new Random(seed ^ 0x5DEECE66DL);
    io.vertx.core.http.HttpServer server = await(vertx.createHttpServer().requestHandler(req -> {
      int what;
      synchronized (this) {
        what = down.nextInt(12);
      }
      if (what == 7) {
        req.response().end("{\"outcomes\":[]}"); // before reading the request
        return;
      }
      req.body().onSuccess(b -> {
        JsonObject batch = b.toJsonObject();
        JsonObject answer = record(batch);
        switch (what) {
          case 0 -> req.response().setStatusCode(500).end();
          case 1 -> { } // never answers
          case 2 -> vertx.setTimer(1 + down.nextInt(100), t -> req.response().end(answer.toBuffer()));
          case 3 -> req.connection().close();
          case 4 -> req.response().end(new JsonObject().put("outcomes", new JsonArray()).toBuffer());
          case 5 -> req.response().end("not json");
          case 6 -> req.response().setChunked(true).write(answer.toBuffer().getBuffer(0, 5)).onSuccess(v -> req.connection().close());
          default -> req.response().end(answer.toBuffer());
        }
      });
    }).listen(0, "127.0.0.1"));
    for (int round = 0; round < ROUNDS; round++) {
      sentIn.clear();
      keyOrder.clear();
      run(new Random(seed + round), round, new JsonObject().put("type", "http")
          .put("url", "http://127.0.0.1:" + server.actualPort() + "/b").put("timeoutMs", 60));
    }
    assertEquals(List.of(), problems, "seed " + seed);
  }

  private int httpCalls;

  /** Records an HTTP batch as the event-bus consumer does; returns its answer. */
  private synchronized JsonObject record(JsonObject req) {
    JsonArray inputs = req.getJsonArray("inputs");
    int call = httpCalls++;
    JsonArray outcomes = new JsonArray();
    for (int i = 0; i < inputs.size(); i++) {
      JsonObject in = inputs.getJsonObject(i);
      String id = in.getString("id");
      if (sentIn.put(id, call) != null) {
        problems.add("input " + id + " sent twice");
      }
      keyOrder.computeIfAbsent(req.getString("key"), k -> new ArrayList<>()).add(seqOf(id));
      outcomes.add(id.hashCode() % 4 == 0 ? new JsonObject().put("error", "no " + id)
          : new JsonObject().put("ok", in.getValue("input")));
    }
    return new JsonObject().put("outcomes", outcomes);
  }

  private void run(Random rnd, int round) {
    run(rnd, round, null);
  }

  private void run(Random rnd, int round, JsonObject http) {
    Random down = new Random(rnd.nextLong());
    int[] calls = {0};
    var consumer = vertx.eventBus().<JsonObject>consumer(CHAOS, m -> {
      JsonObject req = m.body();
      JsonArray inputs = req.getJsonArray("inputs");
      int call;
      synchronized (this) {
        call = calls[0]++;
        for (int i = 0; i < inputs.size(); i++) {
          String id = inputs.getJsonObject(i).getString("id");
          if (sentIn.put(id, call) != null) {
            problems.add("input " + id + " sent twice");
          }
          keyOrder.computeIfAbsent(req.getString("key"), k -> new ArrayList<>()).add(seqOf(id));
        }
      }
      int what = down.nextInt(10);
      JsonArray outcomes = new JsonArray();
      for (int i = 0; i < inputs.size(); i++) {
        JsonObject in = inputs.getJsonObject(i);
        outcomes.add(in.getString("id").hashCode() % 4 == 0 ? new JsonObject().put("error", "no " + in.getString("id"))
            : new JsonObject().put("ok", in.getValue("input")));
      }
      JsonObject answer = new JsonObject().put("outcomes", outcomes);
      switch (what) {
        case 0 -> m.fail(500, "down");
        case 1 -> { } // never answers
        case 2 -> { m.reply(answer); m.reply(answer.copy()); }
        case 3 -> vertx.setTimer(1 + down.nextInt(120), t -> m.reply(answer));
        case 4 -> m.reply(new JsonObject().put("outcomes", outcomes.copy().add(new JsonObject().put("ok", 1))));
        case 5 -> m.reply(new JsonObject().put("outcomes", new JsonArray()));
        default -> m.reply(answer);
      }
    });
    await(consumer.completion());
    boolean headerOrder = rnd.nextBoolean();
    JsonObject cfg = new JsonObject().put("downstream", http != null ? http
        : new JsonObject().put("type", "eventbus").put("address", CHAOS))
        .put("maxQueueing", 20 + rnd.nextInt(40)).put("callTimeoutMs", 60).put("drainTimeoutMs", rnd.nextInt(80))
        .put("maxBatchSize", 1 + rnd.nextInt(6)).put("maxBatchDelayMs", rnd.nextBoolean() ? 0 : rnd.nextInt(10))
        .put("order", headerOrder ? "header" : "submission").put("dispatch", rnd.nextBoolean() ? "adaptive" : "fixed-slots")
        .put("maxInFlightBatches", 1 + rnd.nextInt(4));
    String id = deploy(cfg);
    int n = 400;
    boolean settle = round % 2 == 0;
    int undeployAt = settle ? n : 150 + rnd.nextInt(200);
    List<Future<Message<Object>>> replies = new ArrayList<>();
    List<String> kinds = new ArrayList<>();
    Future<?> undeployed = null;
    for (int i = 0; i < n; i++) {
      if (i == undeployAt) {
        undeployed = vertx.undeploy(id);
      }
      String key = "k" + rnd.nextInt(6);
      String inputId = round + "-" + i;
      DeliveryOptions o = new DeliveryOptions().setSendTimeout(20_000).addHeader("id", inputId);
      Object body = new JsonObject().put("i", i);
      String kind = "good";
      int bad = rnd.nextInt(14);
      switch (bad) {
        case 0 -> { kind = "bad"; o.addHeader("timeout-ms", List.of("0", "-1", "abc", "9223372036855", "1.5", "").get(rnd.nextInt(6))); }
        case 1 -> { kind = "bad"; body = Buffer.buffer("x"); }
        case 2 -> { kind = "bad"; key = null; }
        case 3 -> { kind = "bad"; o.addHeader("Ferry-Hop", "1"); }
        case 4, 5, 6 -> { kind = "deadline"; o.addHeader("timeout-ms", Integer.toString(1 + rnd.nextInt(40))); }
        default -> { }
      }
      if (key != null) {
        o.addHeader("key", key);
      }
      if (headerOrder && rnd.nextBoolean()) {
        o.addHeader("order", Integer.toString(i));
      }
      Object b = body;
      Promise<Message<Object>> reply = Promise.promise();
      long sentAt = System.nanoTime();
      String t = o.getHeaders() == null ? null : o.getHeaders().get("timeout-ms");
      String inputIdFinal = inputId;
      client.runOnContext(v -> vertx.eventBus().<Object>request(SUBMIT, b, o).onComplete(ar -> {
        long took = System.nanoTime() - sentAt;
        if (ar.failed() && ar.cause() instanceof ReplyException re && re.failureCode() == 504 && t != null
            && took < Long.parseLong(t) * 1_000_000L) {
          synchronized (this) {
            problems.add(inputIdFinal + ": 504 after " + took + " ns, before its " + t + " ms");
          }
        }
        reply.handle(ar);
      }));
      replies.add(reply.future());
      kinds.add(kind);
    }
    if (undeployed == null) {
      await(Future.join(new ArrayList<>(replies)).otherwise(v -> null));
      // Everything answered: once the calls still open (never answered) timed out, nothing is left.
      JsonObject m = metricsUntil(x -> x.getLong("inFlightBatches") == 0 && x.getLong("queuedInputs") == 0
          && x.getLong("activeLanes") == 0 && x.getLong("queuedWeight") == 0);
      undeployed = vertx.undeploy(id);
    }
    await(Future.join(new ArrayList<>(replies)).otherwise(v -> null));
    await(undeployed.otherwise(e -> null));
    await(consumer.unregister());
    synchronized (this) {
      for (int i = 0; i < n; i++) {
        String inputId = round + "-" + i;
        Future<Message<Object>> r = replies.get(i);
        Integer call = sentIn.get(inputId);
        String kind = kinds.get(i);
        if (r.succeeded()) {
          if (call == null) {
            problems.add(inputId + ": ok but never sent");
          }
          continue;
        }
        if (!(r.cause() instanceof ReplyException re)) {
          problems.add(inputId + ": " + r.cause());
          continue;
        }
        if (re.failureType() == ReplyFailure.NO_HANDLERS && i >= undeployAt) {
          continue; // after the undeploy ended
        }
        if (re.failureType() != ReplyFailure.RECIPIENT_FAILURE) {
          problems.add(inputId + " (" + kind + "): " + re.failureType() + " " + re.getMessage());
          continue;
        }
        int code = re.failureCode();
        switch (code) {
          case 400 -> { if (!kind.equals("bad")) problems.add(inputId + ": 400 for a " + kind + " input: " + re.getMessage()); }
          case 422 -> { if (call == null) problems.add(inputId + ": 422 but never sent"); }
          case 429, 503 -> { if (call != null) problems.add(inputId + ": " + code + " but sent in call " + call); }
          case 504 -> {
            if (call != null) problems.add(inputId + ": 504 but sent in call " + call);
            if (!kind.equals("deadline")) problems.add(inputId + ": 504 without a deadline");
          }
          case 502 -> { }
          default -> problems.add(inputId + ": code " + code + " " + re.getMessage());
        }
        if (kind.equals("bad") && code != 400) {
          problems.add(inputId + ": bad input answered " + code);
        }
      }
      if (!headerOrder) {
        keyOrder.forEach((k, seqs) -> {
          for (int j = 1; j < seqs.size(); j++) {
            if (seqs.get(j) <= seqs.get(j - 1)) {
              problems.add("round " + round + " key " + k + " out of order: " + seqs);
              break;
            }
          }
        });
      }
    }
  }

  private static int seqOf(String id) {
    return Integer.parseInt(id.substring(id.indexOf('-') + 1));
  }
}
