package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.internal.Limits;
import dev.ferry.verticle.FerryClient;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Review C: the routing client with the longest durations the routing {@link FerryClient} accepts.
 * As {@link RoutingClientHostileTest}: an unclustered Vert.x, a fixed view {@code [n0]}, a consumer
 * at n0's node address answering at once.
 */
class ReviewCRoutingClientTest {
  private static final String SUBMIT = "ferry.submit";

  private Vertx vertx;
  private RoutingClient client;
  private final List<String> atN0 = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    await(vertx.eventBus().consumer(FerryClient.nodeAddress(SUBMIT, "n0"), m -> {
      atN0.add(String.valueOf(m.body()) + " timeout-ms=" + m.headers().get(FerryClient.TIMEOUT_MS_HEADER));
      m.reply("ok");
    }).completion());
    Context context = vertx.getOrCreateContext();
    Promise<RoutingClient> made = Promise.promise();
    context.runOnContext(v -> made.complete(RoutingClient.create(vertx, SUBMIT, new FixedView("client", Set.of("n0")))));
    client = await(made.future());
    await(client.started());
  }

  @AfterEach
  void stop() {
    await(vertx.close());
  }

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
