package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.VertxLoop;
import dev.ferry.verticle.FerryClient;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review P: a release that does not reach the node waiting for it. A node learns of a join from
 * the announcement map and releases its view to the joiner's peer address at once; the joiner's
 * registration of that address may reach the sender's event bus later (ADR 0148: Vert.x picks a
 * send's target from its own copy of the registrations), and then the release is answered
 * NO_HANDLERS. The sender only logs it and keeps the joiner among those it released to, so it
 * never sends it again while its view stays: the joiner waits for that release until the next
 * view change, and holds every input of the keys it gained until its bound (503). Two nodes on
 * one unclustered Vert.x, each with a membership the test feeds, as HazelcastMembership does
 * (a snapshot at start, then the same snapshot again at every re-read, ADR 0113).
 */
class ClusterReleaseNotDeliveredReviewTest {
  private static final String SUBMIT = "ferry.submit";
  private static final Set<String> BOTH = Set.of("n0", "n1");

  private Vertx vertx;
  private final List<List<Object>> calls = new CopyOnWriteArrayList<>();

  /** A membership whose snapshots the test delivers, on the node's context. */
  private static final class Fed implements Membership {
    final String self;
    final Context context;
    volatile Membership.Snapshot current;
    Consumer<Membership.Snapshot> listener;

    Fed(String self, Context context, Set<String> members) {
      this.self = self;
      this.context = context;
      this.current = new Membership.Snapshot(members, members, Set.of());
    }

    @Override
    public String self() {
      return self;
    }

    @Override
    public Future<Void> start(String life, Consumer<Membership.Snapshot> listener) {
      this.listener = listener;
      listener.accept(current);
      return Future.succeededFuture();
    }

    /** Delivers {@code members} (all announced) on the node's context; completes once delivered. */
    Future<Void> read(Set<String> members) {
      current = new Membership.Snapshot(members, members, Set.of());
      Promise<Void> done = Promise.promise();
      context.runOnContext(v -> {
        listener.accept(current);
        done.complete();
      });
      return done.future();
    }

    @Override
    public Future<Void> withdraw() {
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> close() {
      return Future.succeededFuture();
    }
  }

  @AfterEach
  void stop() {
    await(vertx.close());
  }

  private Future<Void> start(Context context, Fed membership) {
    Promise<Void> started = Promise.promise();
    context.runOnContext(v -> {
      // callTimeoutMs 1000, drainTimeoutMs 0: an input is held at most 2 s.
      ClusterNode node = ClusterNode.create(vertx, context, SUBMIT,
          RouterTesting.recordingFerry(new VertxLoop(context), 1_000, calls), 1_000, 0, 100,
          ClusterHarness::reply, membership);
      node.start().onComplete(started);
    });
    return started.future();
  }

  private Future<Message<Object>> send(String node, String key, Object body, String... headers) {
    DeliveryOptions o = ClusterHarness.sendOptions(key, headers);
    return vertx.eventBus().request(FerryClient.nodeAddress(SUBMIT, node), body, o);
  }

  private JsonObject view(String node) {
    return (JsonObject) await(send(node, null, null, ClusterNode.CTL, "view")).body();
  }

  @Test
  void aReleaseAnsweredNoHandlersIsSentAgainAtALaterMembershipRead() {
    vertx = Vertx.vertx();
    Context c0 = vertx.getOrCreateContext();
    Context c1 = vertx.getOrCreateContext();
    Fed m0 = new Fed("n0", c0, Set.of("n0"));
    await(start(c0, m0));
    assertTrue(view("n0").getBoolean("settled"));

    // n1 announces itself; n0 reads it before n1's peer address is registered where n0 sends
    // from: n0's release of [n0, n1] is answered NO_HANDLERS.
    await(m0.read(BOTH));
    ClusterHarness.sleep(200);

    Fed m1 = new Fed("n1", c1, BOTH);
    await(start(c1, m1));
    // The membership is read again every second at both nodes: the same snapshot. Read until n1
    // has every release it waits for, however slow the machine; without the resend it never does
    // while the view stays, and the bound below ends the wait.
    long bound = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    int reads = 0;
    JsonObject v1 = view("n1");
    while (!v1.getBoolean("settled") && System.nanoTime() < bound) {
      ClusterHarness.sleep(100);
      await(m0.read(BOTH));
      await(m1.read(BOTH));
      reads++;
      v1 = view("n1");
    }
    assertTrue(v1.getBoolean("settled"), "n1 still waits for a release after " + reads + " membership reads: " + v1.encode());
    String key = RouterTesting.keysOf("n1", List.of("n0", "n1"), 1).get(0);
    // A key n1 gained is served, not held until its bound (2 s here), then answered 503.
    Future<Message<Object>> answer = send("n1", key, "x1");
    String outcome;
    try {
      outcome = String.valueOf(answer.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).body());
    } catch (Exception e) {
      outcome = "failed: " + (e.getCause() != null ? e.getCause() : e);
    }
    assertEquals("x1", outcome, "n1's view when the input arrived: " + v1.encode());
    assertEquals(List.of(List.of("x1")), calls);
    assertTrue(view("n1").getBoolean("settled"));
  }
}
