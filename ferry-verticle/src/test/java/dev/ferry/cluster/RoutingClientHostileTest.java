package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.internal.Limits;
import dev.ferry.verticle.FerryClient;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The routing client (the routing {@link FerryClient}'s engine, ADR 0057) used carelessly: a body
 * changed right after submit (a JsonObject reused for the next input), a body Vert.x cannot copy,
 * a submit on a closed Vert.x. On an unclustered Vert.x, with a fixed view {@code [n0]} and a
 * consumer at n0's node address standing in for the node (it records what reaches it and answers
 * at once). Nothing sleeps: each step waits for its own reply.
 */
class RoutingClientHostileTest {
  private static final String SUBMIT = "ferry.submit";

  private Vertx vertx;
  /** The client's loop: it was created there, so it routes there. */
  private Context context;
  private RoutingClient client;
  /** The bodies that reached n0, encoded, in arrival order. */
  private final List<String> atN0 = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    await(vertx.eventBus().consumer(FerryClient.nodeAddress(SUBMIT, "n0"), m -> {
      atN0.add(String.valueOf(m.body()));
      m.reply("ok");
    }).completion());
    context = vertx.getOrCreateContext();
    Promise<RoutingClient> made = Promise.promise();
    context.runOnContext(v -> made.complete(RoutingClient.create(vertx, SUBMIT, new FixedView("client", Set.of("n0")))));
    client = await(made.future());
    await(client.started());
  }

  @AfterEach
  void stop() {
    if (vertx != null) {
      await(vertx.close());
    }
  }

  private Future<Object> submit(String key, Object body) {
    return client.submit(key, body, new DeliveryOptions().addHeader(FerryClient.KEY_HEADER, key), 0, 10_000);
  }

  /**
   * A caller that reuses one JsonObject, changing it after each submit (as it may with the plain
   * client: Vert.x copies the body when it is sent), gets each input sent as it was when
   * submitted. The routing client sends on its loop, after the submit returned, and again after
   * a NO_HANDLERS: before, it sent the object as it was then, here twice the last value, and from
   * another thread it read the object while the caller changed it.
   */
  @Test
  void aBodyChangedAfterSubmitIsSentAsSubmitted() {
    Promise<List<Object>> answers = Promise.promise();
    context.runOnContext(v -> {
      JsonObject reused = new JsonObject().put("n", 1);
      Future<Object> first = submit("k", reused);
      reused.put("n", 2);
      Future<Object> second = submit("k", reused);
      reused.put("n", 3);
      Future.all(first, second).onComplete(ar -> answers.handle(ar.map(cf -> cf.list())));
    });
    assertEquals(List.of("ok", "ok"), await(answers.future()));
    assertEquals(List.of("{\"n\":1}", "{\"n\":2}"), atN0);
  }

  /**
   * A JsonObject or JsonArray holding a value of no JSON type: Vert.x refuses to copy it when it
   * is sent. The routing client sent it from an effect on its loop, where the exception escaped:
   * the caller was never answered and the key stayed "in flight" for good (its later inputs
   * could never be sent again after a NO_HANDLERS). Now it is BAD_INPUT at submit.
   */
  @Test
  void aBodyVertxCannotCopyIsBadInputAndLeavesNothingBehind() {
    // A value with no codec at all (a POJO) threw from the send in the same place.
    for (Object bad : new Object[] {new JsonObject().put("x", new Object()), new JsonArray().add(new Object()),
        new java.util.concurrent.atomic.AtomicLong(1)}) {
      Future<Object> answer = submit("k", bad);
      // The next input of the key, from the same client, goes after it; once it is answered, so
      // must the bad one be.
      assertEquals("ok", await(submit("k", "next")));
      assertTrue(answer.isComplete(), "the caller of " + bad.getClass().getSimpleName() + " was never answered");
      FerryException e = (FerryException) answer.cause();
      assertEquals(FerryError.BAD_INPUT, e.kind(), e.getMessage());
      assertEquals(0, await(client.activeKeys()), "a key stays in flight with nothing on the wire");
    }
    assertEquals(List.of("next", "next", "next"), atN0);
  }

  /** A key with a lone surrogate is BAD_INPUT, nothing sent: routed by its hash, it would arrive as another key (ADR 0154). */
  @Test
  void aKeyWithALoneSurrogateIsBadInputAndNothingIsSent() {
    Future<Object> bad = submit("k\uD800", "x");
    assertTrue(bad.failed(), "refused at once");
    FerryException e = (FerryException) bad.cause();
    assertEquals(FerryError.BAD_INPUT, e.kind(), e.getMessage());
    assertEquals("ok", await(submit("k?", "next")));
    assertEquals(List.of("next"), atN0, "only the good input reached the node");
  }

  /**
   * A submit on a closed Vert.x answers CLOSED (nothing sent), as the plain client does; it threw.
   * Closing the client then completes (nothing left to stop); it threw too. Closing twice is fine.
   */
  @Test
  void aSubmitOnAClosedVertxIsClosedNotThrown() {
    await(client.close());
    await(client.close());
    Vertx closed = vertx;
    vertx = null;
    await(closed.close());
    Future<Object> answer = submit("k", "late");
    FerryException e = (FerryException) ClusterHarness.failure(answer);
    assertEquals(FerryError.CLOSED, e.kind(), e.getMessage());
    await(client.close());
  }

  /**
   * Several threads submitting at once, none of them the client's loop: each thread's inputs of its
   * key reach the node in the order that thread submitted them, each answered once.
   */
  @Test
  void submitsFromSeveralThreadsKeepEachThreadsOrder() throws Exception {
    int threads = 4;
    int each = 200;
    List<Future<Object>> answers = new CopyOnWriteArrayList<>();
    List<Thread> started = new java.util.ArrayList<>();
    for (int t = 0; t < threads; t++) {
      String key = "t" + t;
      Thread thread = new Thread(() -> {
        for (int i = 0; i < each; i++) {
          answers.add(submit(key, key + ":" + i));
        }
      });
      thread.start();
      started.add(thread);
    }
    for (Thread thread : started) {
      thread.join();
    }
    for (Future<Object> answer : answers) {
      assertEquals("ok", await(answer));
    }
    assertEquals(threads * each, atN0.size());
    for (int t = 0; t < threads; t++) {
      String key = "t" + t;
      List<String> mine = atN0.stream().filter(b -> b.startsWith(key + ":")).toList();
      assertEquals(java.util.stream.IntStream.range(0, each).mapToObj(i -> key + ":" + i).toList(), mine);
    }
    assertEquals(0, await(client.activeKeys()));
  }

  /**
   * A cluster with no ferry node: the client's input waits for one within its send timeout, then
   * is answered CLOSED (never sent), and nothing stays behind.
   */
  @Test
  void aClusterWithNoFerryNodeAnswersClosedAtTheSendTimeout() {
    Promise<RoutingClient> made = Promise.promise();
    context.runOnContext(v -> made.complete(RoutingClient.create(vertx, SUBMIT, new FixedView("client", Set.of()))));
    RoutingClient none = await(made.future());
    await(none.started());
    Future<Object> answer = none.submit("k", "x", new DeliveryOptions().addHeader(FerryClient.KEY_HEADER, "k"), 0, 50);
    FerryException e = (FerryException) ClusterHarness.failure(answer);
    assertEquals(FerryError.CLOSED, e.kind(), e.getMessage());
    assertEquals(0, await(none.activeKeys()));
    assertEquals(List.of(), atN0);
  }

  /**
   * Bodies of odd shapes, each a JSON value: null, empty and long strings, the extremes of long and
   * double, nesting near the bound, binary and instant values (JSON strings), an object reused and
   * emptied after submit. Each reaches the node as it was submitted, in order, and is answered.
   */
  @Test
  void bodiesOfOddShapesArriveAsSubmitted() {
    Object deep = "leaf";
    for (int i = 0; i < 900; i++) {
      deep = new JsonArray().add(deep);
    }
    JsonObject emptied = new JsonObject().put("a", new JsonObject().put("b", 1));
    List<Object> bodies = java.util.Arrays.asList(null, "", "x".repeat(100_000), Long.MAX_VALUE, Long.MIN_VALUE,
        Double.MAX_VALUE, -0.0, true, new JsonObject(), new JsonArray(), deep,
        new JsonObject().put("bytes", new byte[] {0, 1, 2}).put("at", java.time.Instant.EPOCH).putNull("none"),
        emptied);
    List<String> expected = bodies.stream().map(b -> b instanceof JsonObject o ? o.encode()
        : b instanceof JsonArray a ? a.encode() : String.valueOf(b)).toList();
    List<Future<Object>> answers = new java.util.ArrayList<>();
    for (Object body : bodies) {
      answers.add(submit("k", body));
    }
    emptied.getJsonObject("a").clear();
    emptied.clear();
    for (Future<Object> answer : answers) {
      assertEquals("ok", await(answer));
    }
    assertEquals(expected, atN0);
    assertEquals(0, await(client.activeKeys()));
  }

  // Found by review C (3 December 2026).

  /**
   * {@code SubmitOptions.timeout(Duration.ofMillis(Limits.MAX_MS))} is accepted by FerryClient
   * ("at most MAX_MS ms"), which hands the routing client that timeout-ms and a send timeout of
   * min(MAX_MS, timeout + 30 s) = MAX_MS. The routing client adds each, in nanoseconds, to
   * System.nanoTime(): both sums overflow, so the input is answered TIMEOUT ("the caller's
   * deadline passed before the input was sent") at once and never sent. A plain client's node
   * takes the same timeout-ms as no deadline (Submission: beyond about 146 years).
   */
  @Test
  void theLongestTimeoutsTheClientAcceptsAreSentNotTimedOutAtOnce() {
    Future<Object> answer = client.submit("k", "x", new DeliveryOptions().addHeader(FerryClient.KEY_HEADER, "k"),
        Limits.MAX_MS, Limits.MAX_MS);
    assertEquals("ok", await(answer.recover(e -> Future.succeededFuture(String.valueOf(e)))));
    assertEquals(1, atN0.size(), "sent once");
  }

  /** The send timeout alone at the longest (the deadline shorter): answered CLOSED at once before. */
  @Test
  void theLongestSendTimeoutIsSentNotRefusedAtOnce() {
    Future<Object> answer = client.submit("k", "x", new DeliveryOptions().addHeader(FerryClient.KEY_HEADER, "k"),
        60_000, Limits.MAX_MS);
    assertEquals("ok", await(answer.recover(e -> Future.succeededFuture(String.valueOf(e)))));
    assertEquals(1, atN0.size(), "sent once");
  }

  /**
   * A null key, submitted to the routing client directly (it checks bodies and ill-formed keys
   * itself, "this client may be used without" FerryClient): the router throws a
   * NullPointerException on its loop while routing it (Rendezvous hashes the key), after keeping a
   * key state for null; the caller's Future is never completed, not even at its send timeout (no
   * timer was set). Expected: BAD_INPUT at once, as FerryClient answers it, nothing sent.
   */
  @Test
  void aNullKeyIsBadInputNotLeftUnanswered() {
    Future<Object> answer = client.submit(null, "x", new DeliveryOptions(), 0, 1_000);
    Object got = await(answer.recover(e -> Future.succeededFuture(e)));
    assertEquals(dev.ferry.FerryError.BAD_INPUT,
        got instanceof dev.ferry.FerryException e ? e.kind() : null, String.valueOf(got));
    assertEquals(0, atN0.size(), "nothing sent");
  }
}
