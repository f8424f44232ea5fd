package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Membership churn as a careless operator and a flaky network make it, in virtual time, routers
 * driven step by step: a ferry undeployed and deployed again on the same Vert.x node (the same node
 * id), views that come back to one seen before, snapshots delivered twice, releases from nodes that
 * hold nothing, for views never seen, or twice. What must hold: never two calls in flight for one
 * key (guarantee 2 across an ownership change, ADR 0051), and every input answered once.
 */
class ClusterChurnHostileTest extends ChurnCluster {
  /**
   * b's first ferry leaves (it releases [a] to a) and closes; a ferry deployed again on b's Vert.x
   * node (the same id) joins, takes key k, has a call in flight for it and leaves in turn. a must
   * wait for the new ferry's release of [a] before it calls k: the first ferry's release of [a]
   * said nothing about the second's calls. Before ADR 0131, a counted it (releases were kept per
   * view id, for ever), adopted [a] as settled and called k while b's call was still in flight.
   */
  @Test
  void aReleaseFromAFerryThatClosedDoesNotReleaseTheFerryDeployedAgainUnderItsId() throws Exception {
    aFerryDeployedAgainCallsKAndLeaves(false, false);
  }

  /**
   * As above, but the new ferry's first release is slower than the membership: a adopts the view
   * with b and then the view b leaves in before any release of the new ferry reaches it. a never
   * heard the new life on the wire, so the first ferry's release of [a] still counted, a took
   * itself as settled and called k while b's call for it was in flight (two calls for one key:
   * formal/Handoff.pml's expected failure "a release of a closed ferry still counts", ADR 0131's
   * open case). Now the membership announces each ferry's life, and only the announced ferry's
   * releases count (ADR 0142).
   */
  @Test
  void aReleaseFromAFerryThatClosedDoesNotCountWhenTheNewFerrysFirstReleaseIsSlow() throws Exception {
    aFerryDeployedAgainCallsKAndLeaves(true, true);
  }

  /**
   * The scenario of the two tests above. {@code lives}: snapshots name each ferry's life, as
   * HazelcastMembership's do (ADR 0142); {@code slowFirstRelease}: what the new ferry sends a is
   * held on the wire until its call for k is over.
   */
  private void aFerryDeployedAgainCallsKAndLeaves(boolean lives, boolean slowFirstRelease) throws Exception {
    Set<String> ab = Set.of("a", "b");
    Router a = router("a");
    Router b1 = router("b");
    snapshot(lives, ab, ab, Set.of(), a, b1);
    deliver();
    assertTrue(a.settled() && b1.settled(), a.describe() + " / " + b1.describe());

    // b's first ferry leaves: it routes by [a] and releases it to a; then it closes.
    Future<Void> b1Left = b1.leaving(false);
    snapshot(lives, ab, Set.of("a"), Set.of("b"), a, b1);
    deliver();
    assertTrue(b1Left.succeeded() && a.settled(), a.describe());
    b1.close();
    snapshot(lives, ab, Set.of("a"), Set.of(), a);
    deliver();

    // Deployed again on the same Vert.x node: the same id, a new router.
    if (slowFirstRelease) {
      slow.add("b>a");
    }
    Router b2 = router("b");
    snapshot(lives, ab, ab, Set.of(), a, b2);
    deliver();
    assertTrue(b2.settled(), "b2 has a's release of [a, b]: " + b2.describe());
    String k = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    Future<Object> first = RouterTesting.submit(b2, k, "1", 0);
    deliver();
    assertEquals(List.of("b " + k + " [1]"), calls, "b calls k, as its owner");

    // b2 leaves while its call for k is in flight: its hand-off of k waits for that call, and so
    // does its release of [a]. a adopts [a] (with a slow wire, before anything of b2's arrived).
    Future<Void> b2Left = b2.leaving(false);
    snapshot(lives, ab, Set.of("a"), Set.of("b"), a, b2);
    deliver();
    Future<Object> second = RouterTesting.submit(a, k, "2", 0);
    deliver();
    assertEquals(List.of(), violations);
    assertEquals(List.of("b " + k + " [1]"), calls, "a holds k while b's call for it is in flight: " + a.describe());
    assertEquals(Set.of("b"), a.awaiting(), "a waits for the release of the ferry now at b: " + a.describe());
    assertFalse(second.isComplete());

    // b's call completes: b hands k over, releases [a] (what was slow arrives, in the order sent),
    // its leave ends; a calls k.
    open.get(0).complete(List.of("ok"));
    deliver();
    assertEquals("1", first.result());
    slow.clear();
    held.forEach(wire::add);
    held.clear();
    deliver();
    assertTrue(b2Left.succeeded(), b2.describe());
    assertEquals(List.of("b " + k + " [1]", "a " + k + " [2]"), calls);
    open.get(1).complete(List.of("ok"));
    deliver();
    assertEquals("2", second.result());
    assertEquals(List.of(), violations);
  }

  /** A snapshot to {@code routers}, with each open ferry's life when {@code lives}. */
  void snapshot(boolean lives, Set<String> members, Set<String> announced, Set<String> leaving, Router... routers) {
    if (lives) {
      snapshotWithLives(members, announced, leaving, routers);
    } else {
      snapshot(members, announced, leaving, routers);
    }
  }

  /**
   * A ferry undeployed and deployed again on b's Vert.x node between two of a's membership reads
   * (HazelcastMembership reads the state as it is when it looks: the gap is never seen). a's view
   * stays [a, b] and a already released it to b, to b's first ferry. The new ferry waits for a's
   * release of [a, b] before it calls any key it owns; a sent it again only on a change it saw, so
   * every input of b's keys was held until its bound (503) until the next view change
   * (RouterSimulationTest#ferriesDeployedAgainUnderTheSameId, seed 130 with snapshots skipped).
   * Now the new ferry's first release tells a that a new ferry is at b, and a releases to it again.
   */
  @Test
  void aFerryDeployedAgainBetweenTwoMembershipReadsGetsTheReleaseAgain() throws Exception {
    Set<String> ab = Set.of("a", "b");
    Router a = router("a");
    Router b1 = router("b");
    snapshot(ab, ab, Set.of(), a, b1);
    deliver();
    assertTrue(a.settled() && b1.settled(), a.describe() + " / " + b1.describe());
    b1.close(); // its Vert.x node stays; a reads the membership only once the new ferry is in
    Router b2 = router("b");
    snapshot(ab, ab, Set.of(), b2, a);
    deliver();
    assertTrue(b2.settled(), "b's new ferry still waits for a's release: " + b2.describe());
    String k = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    Future<Object> answer = RouterTesting.submit(b2, k, "1", 0);
    deliver();
    assertEquals(List.of("b " + k + " [1]"), calls, "b's key is called, not held");
    open.get(0).complete(List.of("ok"));
    deliver();
    assertEquals("1", answer.result());
    assertEquals(List.of(), violations);
  }
  /**
   * A routing client told "leaving" (410) by b keeps b out of its routing until b leaves its view.
   * When b's ferry is deployed again under the same id before the client's membership reads show
   * b gone (or after they showed it gone and the 410 of a request still in flight at b arrived),
   * b stays in the view and stayed excluded for good: every input of b's keys went through another
   * node, and with b the only ferry, the client had no node to send to and answered CLOSED at each
   * send timeout. Now the exclusion ends a while after the last 410 (a node refuses for its
   * linger only), at the next membership read.
   */
  @Test
  void aRoutingClientRoutesAgainToAFerryDeployedAgainAfterItSaidItWasLeaving() {
    List<ClientRouter.Send> sends = new ArrayList<>();
    ClientRouter client = new ClientRouter(loop, sends::add);
    Set<String> b = Set.of("b");
    loop.execute(() -> client.snapshot(b, b));
    Promise<Object> first = Promise.promise();
    loop.execute(() -> client.submit(new ClientRouter.Request("k", "x1", Long.MAX_VALUE,
        loop.nanoTime() + 20_000_000_000L, first)));
    loop.runPending();
    assertEquals("b", sends.get(0).target);
    // b's first ferry is leaving: it refuses x1 (410); then it closes and a new one is deployed.
    loop.execute(() -> client.sent(sends.get(0), Future.failedFuture(
        new io.vertx.core.eventbus.ReplyException(io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS, ClientRouter.GONE, "leaving"))));
    loop.runPending();
    // The client's membership reads (every second) show b's ferry all along: b is in the view.
    for (int second = 0; second < 60 && sends.size() == 1; second++) {
      loop.advanceMillis(1_000);
      loop.execute(() -> client.snapshot(b, b));
      loop.runPending();
    }
    assertEquals(2, sends.size(), "x1 never sent again to b's new ferry");
    assertEquals("b", sends.get(1).target);
    loop.execute(() -> client.sent(sends.get(1), Future.succeededFuture("ok")));
    loop.runPending();
    assertEquals("ok", first.future().result());
    assertEquals(0, client.activeKeys());
  }
  /**
   * A flaky network and membership: every snapshot reaches each node twice, every release is
   * delivered twice, and releases come from a node that holds nothing, for a view nobody routes
   * by, and with no view at all, while b leaves with a call for its key in flight. a still holds
   * the key until b's call is over, each input is answered once, and each node releases a view to
   * each other node once.
   */
  @Test
  void snapshotsAndReleasesTwiceAndReleasesForNothingChangeNothing() throws Exception {
    releasesTwice = true;
    Set<String> ab = Set.of("a", "b");
    Router a = router("a");
    Router b = router("b");
    snapshot(ab, ab, Set.of(), a, b, a, b);
    deliver();
    String k = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    Future<Object> first = RouterTesting.submit(b, k, "1", 0);
    deliver();
    Future<Void> bLeft = b.leaving(false);
    snapshot(ab, Set.of("a"), Set.of("b"), b, b, a, a);
    for (String[] h : List.of(new String[] {"zz", "a"}, new String[] {"b", "a,b,zz"}, new String[] {"b", ""},
        new String[] {null, "a"}, new String[] {"b", null})) {
      a.released(h[0], h[1]);
    }
    deliver();
    Future<Object> second = RouterTesting.submit(a, k, "2", 0);
    deliver();
    assertEquals(List.of("b " + k + " [1]"), calls, "a holds k while b's call is in flight: " + a.describe());
    open.get(0).complete(List.of("ok"));
    deliver();
    snapshot(ab, Set.of("a"), Set.of("b"), a, b);
    deliver();
    assertTrue(bLeft.succeeded(), b.describe());
    open.get(1).complete(List.of("ok"));
    deliver();
    assertEquals("1", first.result());
    assertEquals("2", second.result());
    assertEquals(List.of("b " + k + " [1]", "a " + k + " [2]"), calls);
    assertEquals(List.of(), violations);
    assertEquals(released.stream().distinct().toList(), released, "a view released twice to one node");
  }
}
