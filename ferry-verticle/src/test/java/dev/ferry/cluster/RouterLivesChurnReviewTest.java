package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review P: ADR 0131's re-release (a node that hears a new ferry life at a node id releases its
 * view to it again) after a long life of the cluster. Every Vert.x restart is a new node id; a node
 * that has seen many of them come and go still has to recognise a ferry deployed again under the
 * id of a node that was there all along.
 */
class RouterLivesChurnReviewTest extends ChurnCluster {
  /** A snapshot as HazelcastMembership reads it: the members, the announced ferries and their lives. */
  void snapshot(Set<String> members, Set<String> announced, Router... routers) {
    snapshotWithLives(members, announced, Set.of(), routers);
  }

  /**
   * As ClusterChurnHostileTest#aFerryDeployedAgainBetweenTwoMembershipReadsGetsTheReleaseAgain,
   * after 512 short-lived nodes (each a Vert.x restart: a new node id) joined a and b, 511 of them
   * crashed. a keeps the lives of 256 nodes that released to it, the eldest by first put dropped,
   * so b's (b was there all along) is forgotten from the last joiner's release until b's next one;
   * the new ferry at b then looks like a node heard for the first time, a never releases its view
   * to it again, and every input of b's keys is held at b until its bound (503), until the next
   * view change.
   */
  @Test
  void aFerryDeployedAgainUnderAnOldIdGetsTheReleaseAgainAfterManyNodesCameAndWent() throws Exception {
    Set<String> ab = Set.of("a", "b");
    Router a = router("a");
    Router b1 = router("b");
    snapshot(ab, ab, a, b1);
    deliver();
    assertTrue(a.settled() && b1.settled(), a.describe() + " / " + b1.describe());
    for (int i = 0; i < 511; i++) {
      String n = "n" + i;
      Router joiner = router(n);
      Set<String> abn = Set.of("a", "b", n);
      snapshot(abn, abn, a, b1, joiner);
      deliver();
      assertTrue(a.settled() && b1.settled() && joiner.settled(), "round " + i + ": " + a.describe());
      joiner.close(); // crashed: gone from the members, its announcement removed
      cluster.remove(n);
      snapshot(ab, ab, a, b1);
      deliver();
      assertTrue(a.settled() && b1.settled(), "round " + i + ": " + a.describe());
    }

    // One more joins, and stays: its release reaches a after b's, and a forgets b's life for the
    // one it heard now (b was put back, newest, at its release after the round that first pushed
    // it out: 255 rounds later it is the eldest again).
    Router last = router("n511");
    Set<String> abLast = Set.of("a", "b", "n511");
    snapshot(abLast, abLast, a, b1, last);
    deliver();
    assertTrue(a.settled() && b1.settled() && last.settled(), a.describe());

    // b's ferry is undeployed and deployed again between two of a's membership reads: a's view
    // stays [a, b, n511]; the new ferry's first release is what tells a to release to it again.
    b1.close();
    Router b2 = router("b");
    snapshot(abLast, abLast, b2, a, last);
    deliver();
    String k = RouterTesting.keysOf("b", List.of("a", "b", "n511"), 1).get(0);
    Future<Object> answer = RouterTesting.submit(b2, k, "1", 0);
    deliver();
    // The membership is read again every second (ADR 0113): the same snapshot, for 5 s (the hold
    // bound here is 3 s).
    for (int second = 0; second < 5 && calls.isEmpty(); second++) {
      loop.advanceMillis(1_000);
      snapshot(abLast, abLast, a, b2, last);
      deliver();
    }
    assertEquals(List.of("b " + k + " [1]"), calls, "b's key is never called: " + answer.cause() + "; " + b2.describe());
    open.get(0).complete(List.of("ok"));
    deliver();
    assertEquals("1", answer.result());
    assertTrue(b2.settled(), b2.describe());
  }
  /**
   * The lives a node keeps are its members' (ADR 0159, rule 1): a node gone from the members is
   * forgotten at the view that drops it. 1,000 short-lived nodes each released to a and crashed.
   * Mutation testing: without Views#adopt's retainAll, a kept the life of every node it ever heard.
   */
  @Test
  void theLivesOfNodesGoneFromTheMembersAreForgotten() throws Exception {
    dev.ferry.testing.VirtualLoop vloop = new dev.ferry.testing.VirtualLoop();
    Router a = RouterTesting.routerKeepingForwards(vloop, "a", 1_000, new java.util.ArrayList<>());
    a.snapshot(Set.of("a"), Set.of("a"), Set.of());
    vloop.runPending();
    for (int i = 0; i < 1_000; i++) {
      String n = "n" + i;
      a.snapshot(Set.of("a", n), Set.of("a", n), Set.of());
      a.released(n, "life-" + i, String.join(",", new java.util.TreeSet<>(Set.of("a", n))));
      vloop.runPending();
      a.snapshot(Set.of("a"), Set.of("a"), Set.of()); // n crashed
      vloop.runPending();
    }
    java.lang.reflect.Field viewsField = Router.class.getDeclaredField("views");
    viewsField.setAccessible(true);
    java.lang.reflect.Field livesField = Views.class.getDeclaredField("lives");
    livesField.setAccessible(true);
    java.util.Map<?, ?> lives = (java.util.Map<?, ?>) livesField.get(viewsField.get(a));
    assertTrue(lives.isEmpty(), "a keeps the lives of " + lives.size() + " nodes gone from its members: " + lives.keySet().stream().limit(5).toList());
  }
}
