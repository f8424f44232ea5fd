package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A graceful leave that a join overlaps (ADR 0099), in virtual time: the leaving node's leave ends
 * once every node routes without it, whatever views come after, and every node releases to a
 * leaving node too (so a join before that moment does not leave it waiting for releases that
 * would never come). A bridge client that keeps sending to a leaving node does not hold its leave
 * open (ADR 0102).
 */
class RouterLeaveTest {
  final VirtualLoop loop = new VirtualLoop();
  final List<String> releases = new ArrayList<>();
  final PerKeyFerry<String, Submission, List<Object>, Object> ferry = new PerKeyFerry<>(loop,
      PerKeyConfig.builder().callTimeout(Duration.ofMillis(1_000)).build(), (Submission s) -> s.key, null, null,
      (key, inputs) -> Future.succeededFuture(List.of()), (in, ok) -> in.body);

  /** Routers by node id, whose releases reach each other when the test delivers them ({@link #deliver}). */
  final java.util.Map<String, Router> cluster = new java.util.HashMap<>();
  final java.util.ArrayDeque<Runnable> wire = new java.util.ArrayDeque<>();

  /** A router that records its releases in {@link #releases} and sends them to the routers of {@link #cluster}. */
  Router router(String self) {
    Router r = new Router(loop, self, ferry, 1_000, ClusterNode.maxHoldMs(1_000, 5_000), new Router.Links() {
      @Override
      public void forward(Router.Forward f) {
        throw new AssertionError("no input in this test");
      }

      @Override
      public void release(String node, String viewId) {
        releases.add(self + ">" + node + " " + viewId);
        wire.add(() -> {
          Router to = cluster.get(node);
          if (to != null) {
            to.released(self, viewId);
          }
        });
      }
    });
    cluster.put(self, r);
    return r;
  }

  /** Delivers every release sent, and those they cause. */
  void deliver() {
    RouterTesting.drain(loop, wire);
  }

  @Test
  void aJoinWhileANodeLingersDoesNotHoldItsLeaveBack() {
    Router l = router("l");
    l.snapshot(Set.of("l", "a"), Set.of("l", "a"), Set.of());
    l.released("a", l.viewId());
    Future<Void> noneRoutesHere = l.leaving(false);
    l.snapshot(Set.of("l", "a"), Set.of("a"), Set.of("l")); // withdrawn
    assertFalse(noneRoutesHere.isComplete());
    l.released("a", l.viewId());
    loop.runPending();
    assertTrue(noneRoutesHere.succeeded(), "a routes by a view without l: l may stop taking requests");

    // l lingers (refusing) while b joins: neither a nor b routes to l, whatever they release.
    Future<Void> idle = l.leaving(true);
    l.snapshot(Set.of("l", "a", "b"), Set.of("a", "b"), Set.of("l"));
    loop.runPending();
    assertTrue(idle.succeeded(), "the leave waited for releases of a view that cannot route to l");
  }

  @Test
  void inputsThatKeepArrivingFromABridgeDoNotHoldTheLeaveOpen() throws Exception {
    List<Router.Forward> forwards = new ArrayList<>();
    Router l = new Router(loop, "l", ferry, 1_000, ClusterNode.maxHoldMs(1_000, 5_000), RouterTesting.recording(forwards));
    l.snapshot(Set.of("l", "a"), Set.of("l", "a"), Set.of());
    l.released("a", l.viewId());
    l.snapshot(Set.of("l", "a"), Set.of("a"), Set.of("l")); // withdrawn
    l.released("a", l.viewId());
    List<Future<Object>> answers = new ArrayList<>();
    answers.add(send(l, "x0")); // arrived before l stopped consuming: forwarded to a
    Future<Void> idle = l.leaving(true); // l stopped consuming; its bridge still takes sends
    loop.runPending();
    assertFalse(idle.isComplete(), "x0, the last input before l stopped consuming, is still out");
    // A bridge client keeps one input forwarded and unanswered at every moment.
    for (int i = 1; i <= 3; i++) {
      answers.add(send(l, "x" + i));
      l.forwarded(forwards.get(i - 1), Future.succeededFuture("ok " + (i - 1)));
      loop.runPending();
    }
    assertTrue(idle.succeeded(), "the leave waited for inputs that arrived after it stopped consuming");
    assertFalse(answers.get(3).isComplete());
    l.forwarded(forwards.get(3), Future.succeededFuture("ok 3"));
    loop.runPending();
    for (int i = 0; i <= 3; i++) {
      assertEquals("ok " + i, answers.get(i).result(), "each is answered, the later ones too");
    }
  }

  private Future<Object> send(Router r, String body) throws Exception {
    Future<Object> answer = RouterTesting.submit(r, "k", body, 0);
    loop.runPending();
    return answer;
  }

  /**
   * The join that a's view never shows (formal/Handoff.pml, the rejoin with a join adopted late): b
   * joins and starts leaving before a adopts the view with b, so a goes from {a} to {a} again
   * (members {a, b}, b leaving). a's view did not change, but b now waits for a's release of it:
   * a sends it to b, a node its release had not reached. Before ADR 0105 a released only on a view
   * change, and b's leave lasted its whole bound (ClusterNode#leave then answers 502 to every
   * forward still open).
   */
  @Test
  void aNodeReleasesAnUnchangedViewToAJoinItNeverSaw() {
    Router a = router("a");
    a.snapshot(Set.of("a"), Set.of("a"), Set.of());
    deliver();
    Router b = router("b");
    b.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of()); // b joins (a has not adopted it)
    deliver();
    Future<Void> noneRoutesToB = b.leaving(false);
    b.snapshot(Set.of("a", "b"), Set.of("a"), Set.of("b")); // b withdrew
    deliver();
    assertFalse(noneRoutesToB.isComplete(), "b settled without a's release of a view a had not adopted");
    a.snapshot(Set.of("a", "b"), Set.of("a"), Set.of("b")); // a skipped the view with b: {a} again
    deliver();
    assertTrue(noneRoutesToB.succeeded(), "b waits for a release of [a] that a never sends: " + b.describe());
    assertEquals(List.of("a>b a", "b>a a", "b>a a,b"), releases.stream().sorted().toList());

    a.snapshot(Set.of("a", "b"), Set.of("a"), Set.of("b"));
    deliver();
    assertEquals(3, releases.size(), "an unchanged view is released once to each node");
  }

  /**
   * The same as HazelcastMembership shows it: b is a cluster member before it announces itself, so
   * a's members do not change between the two views a adopts ({a}, then {a} with b leaving); b
   * only became a node that waits for a's release (a leaving ferry).
   */
  @Test
  void aNodeReleasesAnUnchangedViewToANodeThatBecameAFerry() {
    Router a = router("a");
    a.snapshot(Set.of("a"), Set.of("a"), Set.of());
    a.snapshot(Set.of("a", "b"), Set.of("a"), Set.of()); // b is a member, not announced yet
    deliver();
    assertEquals(List.of(), releases, "a member with no ferry waits for no release");
    Router b = router("b");
    b.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    Future<Void> noneRoutesToB = b.leaving(false);
    b.snapshot(Set.of("a", "b"), Set.of("a"), Set.of("b"));
    deliver();
    a.snapshot(Set.of("a", "b"), Set.of("a"), Set.of("b"));
    deliver();
    assertTrue(noneRoutesToB.succeeded(), "b waits for a release of [a] that a never sends: " + b.describe());
  }

  /**
   * A ferry deployed again on the same Vert.x node has the same node id: once its first ferry
   * closed (no longer a node that waits for releases), it gets the release again when it waits
   * again, here as a join a's view never shows.
   */
  @Test
  void aNodeReleasesAnUnchangedViewAgainToAFerryDeployedAgain() {
    Router a = router("a");
    a.snapshot(Set.of("a", "b"), Set.of("a"), Set.of("b")); // b leaving
    deliver();
    assertEquals(List.of("a>b a"), releases);
    a.snapshot(Set.of("a", "b"), Set.of("a"), Set.of()); // b's ferry closed; its Vert.x node stays
    Router b = router("b"); // deployed again: the same id, a new router
    b.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    Future<Void> noneRoutesToB = b.leaving(false);
    b.snapshot(Set.of("a", "b"), Set.of("a"), Set.of("b"));
    deliver();
    a.snapshot(Set.of("a", "b"), Set.of("a"), Set.of("b")); // a never saw b announced
    deliver();
    assertTrue(noneRoutesToB.succeeded(), "b waits for a release of [a] that a sent its first ferry only: " + b.describe());
  }

  @Test
  void nodesReleaseToALeavingNodeToo() {
    Router a = router("a");
    a.snapshot(Set.of("l", "a"), Set.of("l", "a"), Set.of());
    a.released("l", a.viewId());
    a.snapshot(Set.of("l", "a"), Set.of("a"), Set.of("l")); // l withdrew
    a.released("l", a.viewId()); // a routes without l, settled
    releases.clear();
    a.snapshot(Set.of("l", "a", "b"), Set.of("a", "b"), Set.of("l")); // b joins while l has not closed yet
    loop.runPending();
    assertEquals(List.of("a>b a,b", "a>l a,b"), releases.stream().sorted().toList());
  }
}
