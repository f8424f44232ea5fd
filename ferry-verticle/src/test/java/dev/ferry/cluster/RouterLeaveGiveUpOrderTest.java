package dev.ferry.cluster;

import static dev.ferry.cluster.RouterTesting.assertAppliedInOrder;
import static dev.ferry.cluster.RouterTesting.deliver;
import static dev.ferry.cluster.RouterTesting.deliverAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Found by RouterSimulationTest#leavesThatGiveUp (51 of seeds 1-500 in what was its strict mode,
 * now its only one): a leave that gives up answers 502 for a forward that is still
 * on its way, held at a node further on; whoever gets that 502 (a routing client, or the node the
 * input entered) clears the key's path and sends its client's next input to the owner directly,
 * which applies it; the given-up input reaches the owner later and is applied after it. The test is
 * the network, as in RouterBehindSentMultiReviewTest.
 */
class RouterLeaveGiveUpOrderTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  private final List<List<Object>> calls = new ArrayList<>();
  private final Map<String, List<Router.Forward>> out = new HashMap<>();

  private Router router(String self) {
    return new Router(loop, self, RouterTesting.recordingFerry(loop, CALL_MS, calls), CALL_MS, MAX_HOLD_MS,
        RouterTesting.recording(out.computeIfAbsent(self, n -> new ArrayList<>())));
  }

  private List<Router.Forward> sent(String node) {
    return out.computeIfAbsent(node, n -> new ArrayList<>());
  }

  /** A key that [a, b] gives b, [a, b, c] gives c and [a, d] gives d. */
  private static String key() {
    for (int k = 0; ; k++) {
      String key = "k" + k;
      if (Rendezvous.owner(key, List.of("a", "b")).equals("b") && Rendezvous.owner(key, List.of("a", "b", "c")).equals("c")
          && Rendezvous.owner(key, List.of("a", "d")).equals("d")) {
        return key;
      }
    }
  }

  /**
   * x1 enters at a, goes to b, which sends it on to c, where it is held (c has no view yet). b's
   * leave gives up: x1 is answered 502 to a, and a to its caller. a adopts a view in which d owns
   * the key and (before the fix) sent x2, the same client's next input, to d directly: d applied
   * it. c then routes x1 on to d, which applied it after x2. Both callers are told nothing wrong about x2 (OK), and
   * x1's 502 said "may have been applied", not "may be applied after your later inputs".
   *
   * <p>Fixed at a (ADR 0115, last section): the give-up's 502 says so ({@link Router#GIVEN_UP}), and
   * a keeps its forward of x1 open until the hold it allowed is over (every node on x1's way has
   * passed it on or handed it back by then, ADR 0109): x2 waits at a until then and is applied
   * after x1. A routing client that gets such a 502 itself: the next test.
   */
  /** b passes x1 on to c, which holds it; then b's leave gives its forwards up: x1 is answered 502. */
  private void heldAtCThenGivenUpByB(Router b, Router c, Future<Object> x1) {
    deliver(b, c, sent("b").get(0)); // c holds x1
    loop.runPending();
    assertFalse(x1.isComplete(), "x1 held at c: " + x1);

    b.abandonForwards("this node left the cluster before the key's owner answered");
    loop.runPending();
    assertTrue(x1.failed(), "x1 given up by b's leave, 502: " + x1);
  }

  @Test
  void anInputGivenUpByALeaveIsNotAppliedAfterItsClientsLaterInput() throws Exception {
    Router a = router("a");
    Router b = router("b");
    Router c = router("c"); // no view yet: holds what it gets
    Router d = router("d");
    String key = key();
    Set<String> members = Set.of("a", "b", "c", "d");
    a.snapshot(members, Set.of("a", "b"), Set.of());
    b.snapshot(members, Set.of("a", "b", "c"), Set.of());
    d.snapshot(members, Set.of("a", "d"), Set.of());
    d.released("a", "a,d");
    loop.runPending();

    Future<Object> x1 = RouterTesting.submit(a, key, "x1", 0, "x#1");
    loop.runPending();
    deliver(a, b, sent("a").get(0));
    heldAtCThenGivenUpByB(b, c, x1);

    a.snapshot(members, Set.of("a", "d"), Set.of()); // b left the view: d owns the key
    loop.runPending();
    Future<Object> x2 = RouterTesting.submit(a, key, "x2", 0, "x#2");
    loop.runPending();
    deliverAll(a, d, sent("a").subList(1, sent("a").size()));
    loop.runPending();

    c.snapshot(members, Set.of("a", "d"), Set.of()); // c routes x1 on to the owner
    loop.advanceMillis(Router.RETRY_MS);
    deliverAll(c, d, sent("c"));
    loop.advanceMillis(Router.RETRY_MS);
    // Past the hold a's forward of x1 allowed (half a hold bound), x2 goes on if it waited.
    int delivered = sent("a").size();
    loop.advanceMillis(MAX_HOLD_MS / 2);
    deliverAll(a, d, sent("a").subList(delivered, sent("a").size()));
    loop.advanceMillis(Router.RETRY_MS);
    List<Object> applied = calls.stream().flatMap(List::stream).toList();
    assertAppliedInOrder(applied, "x1", "x2", "x1 502, given up by b's leave; x2 " + x2);
    assertEquals(1, applied.stream().filter("x2"::equals).count(), "applied " + applied + ", x2 " + x2);
    assertTrue(x2.succeeded(), "x2 applied once its wait behind x1 ended: " + x2);
  }

  /**
   * The same through a routing client: it sends x1 to b, its key's owner by the client's view; b
   * sends it on to c, where it is held; b's leave gives up and the client gets the 502 itself.
   * Routing by a view in which d owns the key, the client sent x2 to d directly, which applied it
   * before c passed x1 on (applied [x2, x1]). The 502 says for how long x1 may still be applied
   * ({@link Router#givenUpForMs}): x2 waits at the client until then and is applied after x1.
   */
  @Test
  void aRequestGivenUpByItsEntryNodesLeaveIsNotAppliedAfterTheClientsLaterRequest() throws Exception {
    Router b = router("b");
    Router c = router("c"); // no view yet: holds what it gets
    Router d = router("d");
    Map<String, Router> nodes = Map.of("b", b, "c", c, "d", d);
    String key = key();
    Set<String> members = Set.of("a", "b", "c", "d");
    b.snapshot(members, Set.of("a", "b", "c"), Set.of());
    d.snapshot(members, Set.of("a", "d"), Set.of());
    d.released("a", "a,d");
    List<ClientRouter.Send> sends = new ArrayList<>();
    ClientRouter client = new ClientRouter(loop, sends::add);
    client.snapshot(members, Set.of("a", "b")); // b owns the key
    loop.runPending();

    Future<Object> x1 = request(client, key, "x1");
    loop.runPending();
    assertEquals("b", sends.get(0).target);
    send(client, nodes, sends.get(0), "cl#1");
    heldAtCThenGivenUpByB(b, c, x1);

    client.snapshot(members, Set.of("a", "d")); // b left the view: d owns the key
    Future<Object> x2 = request(client, key, "x2");
    loop.runPending();
    for (ClientRouter.Send s : List.copyOf(sends.subList(1, sends.size()))) {
      send(client, nodes, s, "cl#2");
    }
    loop.runPending();

    c.snapshot(members, Set.of("a", "d"), Set.of()); // c routes x1 on to the owner
    loop.advanceMillis(Router.RETRY_MS);
    deliverAll(c, d, sent("c"));
    loop.advanceMillis(Router.RETRY_MS);
    int delivered = sends.size();
    loop.advanceMillis(MAX_HOLD_MS / 2);
    for (ClientRouter.Send s : List.copyOf(sends.subList(delivered, sends.size()))) {
      send(client, nodes, s, "cl#2");
    }
    loop.advanceMillis(Router.RETRY_MS);
    List<Object> applied = calls.stream().flatMap(List::stream).toList();
    assertAppliedInOrder(applied, "x1", "x2", "x1 502, given up by b's leave; x2 " + x2);
    assertEquals(List.of("x1", "x2"), applied);
    assertTrue(x2.succeeded(), "x2 applied once its wait behind x1 ended: " + x2);
  }

  /**
   * The model's trace (formal/Handoff.pml, `Handoff leave that gives up, order`): the given-up
   * forward itself stays on the wire. The client sends x1 to a, which leaves and forwards it to b,
   * the owner now; a's leave gives the forward up (502, "may still be applied for N ms"); the client
   * waits N ms, then sends x2 to b, which applies it; x1 reaches b only then. No wait measured from
   * either end covers a wire slower than it; before ADR 0146 b applied x1 after x2. b's fence says
   * a later input of x1's client went to its downstream first: x1 is answered 503, never applied.
   */
  @Test
  void aGivenUpForwardSlowerOnTheWireThanTheClientsWaitIsNeverAppliedAfterItsLaterRequest() throws Exception {
    Router a = router("a");
    Router b = router("b");
    Map<String, Router> nodes = Map.of("a", a, "b", b);
    String key = keyOwnedBy("a", List.of("a", "b"));
    Set<String> members = Set.of("a", "b");
    a.snapshot(members, Set.of("b"), Set.of("a")); // a leaves: b owns the key
    b.snapshot(members, Set.of("b"), Set.of("a"));
    b.released("a", "b");
    List<ClientRouter.Send> sends = new ArrayList<>();
    ClientRouter client = new ClientRouter(loop, sends::add);
    client.snapshot(members, Set.of("a", "b")); // the client has not seen the leave: a owns
    loop.runPending();

    Future<Object> x1 = request(client, key, "x1");
    loop.runPending();
    assertEquals("a", sends.get(0).target);
    send(client, nodes, sends.get(0), "cl#1");
    loop.runPending();
    Router.Forward slow = sent("a").get(0); // on the link a -> b, for as long as it takes
    assertEquals("b", slow.target);
    a.abandonForwards("this node left the cluster before the key's owner answered");
    loop.runPending();
    assertTrue(x1.failed() && x1.cause().getMessage().contains(Router.GIVEN_UP), "x1 given up by a's leave: " + x1);

    client.snapshot(members, Set.of("b"));
    Future<Object> x2 = request(client, key, "x2");
    loop.advanceMillis(MAX_HOLD_MS); // past the client's wait after the 502
    for (ClientRouter.Send s : List.copyOf(sends.subList(1, sends.size()))) {
      send(client, nodes, s, "cl#2");
    }
    loop.advanceMillis(Router.RETRY_MS);
    assertTrue(x2.succeeded(), "x2 applied at b: " + x2);

    Promise<Object> late = Promise.promise();
    b.accept(RouterSimulationTest.Sim.resubmit(slow.pending.input, slow.remainingMs), slow.hop, slow.handOff,
        slow.visited, slow.origin, slow.holdMs, late);
    loop.advanceMillis(Router.RETRY_MS);
    List<Object> applied = calls.stream().flatMap(List::stream).toList();
    assertEquals(List.of("x2"), applied, "x1 reached b after x2 was applied there");
    assertTrue(RouterTesting.closed(late.future()) && late.future().cause().getMessage().startsWith(Router.FENCED),
        "x1's late forward answered 503, never applied: " + late.future());
  }

  /** A key that {@code owner} owns among {@code view}. */
  private static String keyOwnedBy(String owner, List<String> view) {
    for (int k = 0; ; k++) {
      if (Rendezvous.owner("k" + k, view).equals(owner)) {
        return "k" + k;
      }
    }
  }

  private Future<Object> request(ClientRouter client, String key, String body) throws Exception {
    Promise<Object> answer = Promise.promise();
    Submission input = Submission.parse(MultiMap.caseInsensitiveMultiMap().add(Submission.KEY, key), body);
    client.submit(new ClientRouter.Request(key, input, Long.MAX_VALUE, loop.nanoTime() + 20_000_000_000L, answer));
    return answer.future();
  }

  /** {@code s} reaches its target node, stamped as RoutingClient stamps it; its answer goes back to the client. */
  private static void send(ClientRouter client, Map<String, Router> nodes, ClientRouter.Send s, String origin) {
    Promise<Object> answer = Promise.promise();
    answer.future().onComplete(ar -> client.sent(s,
        ar.succeeded() ? ar : Future.failedFuture(RouterSimulationTest.Sim.onTheWire(ar.cause()))));
    nodes.get(s.target).accept(RouterSimulationTest.Sim.resubmit((Submission) s.request.payload, s.timeoutMs), 0,
        false, null, origin, answer);
  }
}
