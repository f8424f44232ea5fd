package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.VertxLoop;
import dev.ferry.verticle.FerryClient;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A client that sets the headers nodes use between themselves (ADR 0103), at a node's own address
 * (the entry of routing clients and {@code atThisNode()}): it gets 400 at once and changes nothing,
 * while the same headers from a node, on the peer address, still do their work. One node ({@code
 * n0}) with a fixed view {@code [n0, n1]} on an unclustered Vert.x: {@code n0} just joined, so the
 * keys it owns wait for {@code n1}'s release; {@code n1} is a recorder of what reaches its
 * addresses. Nothing sleeps: each step waits for its own reply.
 */
class NodeHeadersHostileTest {
  private static final String SUBMIT = "ferry.submit";
  private static final List<String> VIEW = List.of("n0", "n1");

  private Vertx vertx;
  private Context context;
  /** Every request is sent from this one context: they reach the node in the order sent. */
  private Context client;
  private ClusterNode node;
  /** The downstream's calls, each the bodies of one batch. */
  private final List<List<Object>> calls = new CopyOnWriteArrayList<>();
  /** What reached n1 (either of its addresses): address and headers. */
  private final List<String> atN1 = new CopyOnWriteArrayList<>();
  /** The headers of n0's releases to n1. */
  private final List<String> releasesAtN1 = new CopyOnWriteArrayList<>();

  @BeforeEach
  void startNode() {
    vertx = Vertx.vertx();
    context = vertx.getOrCreateContext();
    client = vertx.getOrCreateContext();
    for (String at : List.of(FerryClient.nodeAddress(SUBMIT, "n1"), ClusterNode.peerAddress(SUBMIT, "n1"))) {
      await(vertx.eventBus().consumer(at, m -> {
        if (m.headers().contains(ClusterNode.CTL)) {
          releasesAtN1.add(m.headers().entries().toString());
          m.reply(null); // n0's release of its view to n1
          return;
        }
        atN1.add(m.address() + " " + m.headers().entries());
        m.reply("n1:" + m.body());
      }).completion());
    }
    Promise<Void> started = Promise.promise();
    context.runOnContext(v -> {
      // maxQueueing 2: at most two inputs held; a hold ends after 2 x callTimeoutMs (drain 0), far
      // beyond what a test takes on a loaded machine.
      node = ClusterNode.create(vertx, context, SUBMIT, RouterTesting.recordingFerry(new VertxLoop(context), 10_000, calls),
          10_000, 0, 2, ClusterHarness::reply, new FixedView("n0", Set.copyOf(VIEW)));
      node.start().onComplete(started);
    });
    await(started.future());
  }

  @AfterEach
  void stop() {
    await(vertx.close());
  }

  /** A key that {@code owner} owns by the view [n0, n1]. */
  private static String keyOwnedBy(String owner) {
    for (int k = 0; ; k++) {
      if (Rendezvous.owner("k" + k, VIEW).equals(owner)) {
        return "k" + k;
      }
    }
  }

  private Future<Message<Object>> send(String address, String key, Object body, String... headers) {
    DeliveryOptions o = ClusterHarness.sendOptions(key, headers);
    Promise<Message<Object>> reply = Promise.promise();
    client.runOnContext(v -> vertx.eventBus().request(address, body, o).onComplete(reply));
    return reply.future();
  }

  private Future<Message<Object>> fromClient(String key, Object body, String... headers) {
    return send(FerryClient.nodeAddress(SUBMIT, "n0"), key, body, headers);
  }

  private JsonObject view() {
    return (JsonObject) await(send(FerryClient.nodeAddress(SUBMIT, "n0"), null, null, ClusterNode.CTL, "view")).body();
  }

  private static ReplyException refused(Future<Message<Object>> reply) {
    Throwable t = ClusterHarness.failure(reply);
    assertTrue(t instanceof ReplyException, String.valueOf(t));
    return (ReplyException) t;
  }

  @Test
  void aClientCannotReleaseAKeyForItsPreviousOwner() {
    String key = keyOwnedBy("n0");
    Future<Message<Object>> held = fromClient(key, "a");
    assertEquals(1, view().getInteger("held"));
    // As if from n1, the key's previous owner, which may still have a call in flight for it: if
    // n0 believed it, n0 would call the key too (two calls at once for one key).
    ReplyException e = refused(fromClient(null, null, ClusterNode.CTL, "release", ClusterNode.FROM, "n1",
        ClusterNode.VIEW, String.join(",", VIEW)));
    assertEquals(400, e.failureCode(), e.getMessage());
    JsonObject v = view();
    assertFalse(v.getBoolean("settled"), v.encode());
    assertEquals(1, v.getInteger("held"), v.encode());
    // The view answer names whose release n0 still waits for: the real n1, not the forger.
    assertTrue(v.getJsonArray("awaiting").contains("n1"), v.encode());
    assertEquals(List.of(), calls);
    // n1's own release, on the peer address, ends the wait: the held input goes.
    await(send(ClusterNode.peerAddress(SUBMIT, "n0"), null, null, ClusterNode.CTL, "release", ClusterNode.FROM, "n1",
        ClusterNode.VIEW, String.join(",", VIEW)));
    assertEquals("a", await(held).body());
    assertEquals(List.of(List.of("a")), calls);
    assertEquals(List.of(), view().getJsonArray("awaiting").getList(), "settled: waits for no one");
  }

  @Test
  void aClientCannotPassTheHeldBoundAsAHandOff() {
    String key = keyOwnedBy("n0");
    Future<Message<Object>> first = fromClient(key, "a");
    Future<Message<Object>> second = fromClient(key, "b");
    assertEquals(429, refused(fromClient(key, "c")).failureCode());
    // A hand-off is held beyond the bound (it was accepted by its previous owner already): a
    // client claiming one would make this node hold without limit.
    for (int i = 0; i < 5; i++) {
      ReplyException e = refused(fromClient(key, "h" + i, "ferry-handoff", "1"));
      assertEquals(400, e.failureCode(), e.getMessage());
      assertTrue(e.getMessage().contains("\"ferry-handoff\" is reserved"), e.getMessage());
    }
    assertEquals(2, view().getInteger("held"));
    await(send(ClusterNode.peerAddress(SUBMIT, "n0"), null, null, ClusterNode.CTL, "release", ClusterNode.FROM, "n1",
        ClusterNode.VIEW, String.join(",", VIEW)));
    assertEquals("a", await(first).body());
    assertEquals("b", await(second).body());
  }

  @Test
  void aClientCannotSetTheHopsThePathOrTheClassOfAForward() {
    String key = keyOwnedBy("n1");
    for (String[] h : List.of(new String[] {"ferry-hop", "-1000"}, new String[] {"ferry-visited", "n1"},
        new String[] {"ferry-from", "n1"}, new String[] {"ferry-handoff", "1"}, new String[] {"ferry-view", "x"},
        new String[] {"Ferry-Hop", "-5"}, new String[] {"ferry-not-yet-invented", "1"})) {
      ReplyException e = refused(fromClient(key, "x", h[0], h[1]));
      assertEquals(400, e.failureCode(), h[0] + ": " + e.getMessage());
      assertTrue(e.getMessage().contains("\"" + h[0] + "\" is reserved"), e.getMessage());
    }
    assertEquals(List.of(), atN1);
    // ferry-origin is a client's (a routing client stamps it): the input is forwarded with it,
    // on n1's peer address, as the first hop from n0 and no hand-off.
    assertEquals("n1:y", await(fromClient(key, "y", "ferry-origin", "client#1")).body());
    assertEquals(1, atN1.size(), atN1.toString());
    String forward = atN1.get(0);
    assertTrue(forward.startsWith(ClusterNode.peerAddress(SUBMIT, "n1") + " "), forward);
    assertTrue(forward.contains("ferry-hop=1") && forward.contains("ferry-visited=n0")
        && forward.contains("ferry-origin=client#1") && !forward.contains("ferry-handoff"), forward);
  }

  @Test
  void aHopCountOutOfRangeOnThePeerAddressIsKeptWithinTheLimit() {
    // Even from a node (or what sends on the peer address), no count below 0 or past the limit
    // buys an input more fast forwards than the rule allows.
    String key = keyOwnedBy("n1");
    assertEquals("n1:z", await(send(ClusterNode.peerAddress(SUBMIT, "n0"), key, "z", ClusterNode.HOP, "-1000",
        ClusterNode.FROM, "n9")).body());
    assertEquals(1, atN1.size(), atN1.toString());
    assertTrue(atN1.get(0).contains("ferry-hop=1"), atN1.get(0));
  }

  @Test
  void aControlRequestOtherThanViewIsRefused() {
    ReplyException e = refused(fromClient(null, null, ClusterNode.CTL, "drop-everything"));
    assertEquals(400, e.failureCode(), e.getMessage());
    assertEquals(0, view().getInteger("held"));
  }

  /**
   * Malformed and forged node headers on the peer address (what a buggy node, or anyone on the
   * event bus, may send): hop counts and holds out of range or not numbers, paths naming this node,
   * nodes never seen or nothing, origins without a place or with one out of range. Each input is
   * answered exactly once, where its key's owner is: n1's recorder or n0's ferry, never held for
   * good, never sent twice.
   */
  @Test
  void malformedNodeHeadersAreAnsweredOnceWhereTheKeyIsOwned() {
    // A release with parts missing, from a node that is not n1, or of a view never seen ends no wait.
    for (String[] h : List.of(new String[] {ClusterNode.CTL, "release"},
        new String[] {ClusterNode.CTL, "release", ClusterNode.FROM, "n1"},
        new String[] {ClusterNode.CTL, "release", ClusterNode.VIEW, "n0,n1"},
        new String[] {ClusterNode.CTL, "release", ClusterNode.FROM, "zz", ClusterNode.VIEW, "n0,n1"},
        new String[] {ClusterNode.CTL, "release", ClusterNode.FROM, "n1", ClusterNode.VIEW, "n0,n1,zz"},
        new String[] {ClusterNode.CTL, "release", ClusterNode.FROM, "n1", ClusterNode.VIEW, ""})) {
      await(send(ClusterNode.peerAddress(SUBMIT, "n0"), null, null, h));
      assertEquals(List.of("n1"), view().getJsonArray("awaiting").getList(), String.join(" ", h));
    }
    await(send(ClusterNode.peerAddress(SUBMIT, "n0"), null, null, ClusterNode.CTL, "release", ClusterNode.FROM, "n1",
        ClusterNode.VIEW, String.join(",", VIEW)));
    assertTrue(view().getBoolean("settled"));
    // n0's own release to n1 names the ferry that sent it (ADR 0131).
    assertEquals(1, releasesAtN1.size(), releasesAtN1.toString());
    assertTrue(releasesAtN1.get(0).contains(ClusterNode.LIFE + "="), releasesAtN1.get(0));

    List<String[]> forged = List.of(new String[] {ClusterNode.HOLD_MS, Long.toString(Long.MAX_VALUE)},
        new String[] {ClusterNode.HOLD_MS, "-5"}, new String[] {ClusterNode.HOLD_MS, "soon"},
        new String[] {ClusterNode.HOLD_MS, ""}, new String[] {ClusterNode.HOP, "99999999999"},
        new String[] {ClusterNode.HOP, "two"}, new String[] {ClusterNode.HOP, Integer.toString(Integer.MIN_VALUE)},
        new String[] {ClusterNode.VISITED, "n0"}, new String[] {ClusterNode.VISITED, "n0,n0,n0"},
        new String[] {ClusterNode.VISITED, "zz"}, new String[] {ClusterNode.VISITED, ","},
        new String[] {ClusterNode.VISITED, ""}, new String[] {ClusterNode.FROM, "n0"},
        new String[] {ClusterNode.ORIGIN, "x"}, new String[] {ClusterNode.ORIGIN, "#"},
        new String[] {ClusterNode.ORIGIN, "x#"}, new String[] {ClusterNode.ORIGIN, "x#-1"},
        new String[] {ClusterNode.ORIGIN, "x#" + Long.MAX_VALUE}, new String[] {ClusterNode.ORIGIN, "x#99999999999999999999"},
        new String[] {ClusterNode.ORIGIN, ""}, new String[] {ClusterNode.ORIGIN, "n0#1"},
        new String[] {ClusterNode.HANDOFF, "no"}, new String[] {ClusterNode.LIFE, "x"});
    String atN0 = keyOwnedBy("n0");
    String atN1Key = keyOwnedBy("n1");
    int i = 0;
    for (String[] h : forged) {
      String detail = h[0] + "=" + h[1];
      i++;
      assertEquals("n1:f" + i, await(send(ClusterNode.peerAddress(SUBMIT, "n0"), atN1Key, "f" + i, h)).body(), detail);
      assertEquals("o" + i, await(send(ClusterNode.peerAddress(SUBMIT, "n0"), atN0, "o" + i, h)).body(), detail);
    }
    assertEquals(forged.size(), atN1.size(), atN1.toString());
    assertEquals(forged.size(), calls.size(), "each sent once: " + calls);
    JsonObject v = view();
    assertEquals(0, v.getInteger("held"), v.encode());
    assertEquals(0, v.getInteger("openForwards"), v.encode());
  }
}
