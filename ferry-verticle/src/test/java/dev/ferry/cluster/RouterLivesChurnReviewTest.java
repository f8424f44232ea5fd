package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review P: ADR 0131's re-release (a node that hears a new ferry life at a node id releases its
 * view to it again) after a long life of the cluster. Every Vert.x restart is a new node id; a node
 * that has seen many of them come and go still has to recognise a ferry deployed again under the
 * id of a node that was there all along.
 */
class RouterLivesChurnReviewTest {
  final VirtualLoop loop = new VirtualLoop();
  final Map<String, Router> cluster = new HashMap<>();
  final ArrayDeque<Runnable> wire = new ArrayDeque<>();
  final List<String> calls = new ArrayList<>();
  final List<Promise<List<Object>>> open = new ArrayList<>();

  PerKeyFerry<String, Submission, List<Object>, Object> ferry(String node) {
    return new PerKeyFerry<>(loop, dev.ferry.PerKeyConfig.builder().callTimeout(java.time.Duration.ofMillis(1_000)).build(),
        (Submission in) -> in.key, null, null, (key, inputs) -> {
          calls.add(node + " " + key + " " + inputs.stream().map(in -> in.body).toList());
          Promise<List<Object>> call = Promise.promise();
          open.add(call);
          return call.future();
        }, (in, ok) -> in.body);
  }

  Router router(String self) {
    Router[] me = new Router[1];
    Router r = new Router(loop, self, ferry(self), 1_000, ClusterNode.maxHoldMs(1_000, 1_000), new Router.Links() {
      @Override
      public void forward(Router.Forward f) {
        wire.add(() -> RouterTesting.deliver(cluster.get(self), cluster.get(f.target), f));
      }

      @Override
      public void release(String node, String viewId) {
        Router from = me[0];
        wire.add(() -> {
          Router to = cluster.get(node);
          if (to != null) {
            to.released(self, from.life(), viewId);
          }
        });
      }
    });
    me[0] = r;
    cluster.put(self, r);
    return r;
  }

  void deliver() {
    loop.runPending();
    while (!wire.isEmpty()) {
      wire.poll().run();
      loop.runPending();
    }
  }

  /** A snapshot as HazelcastMembership reads it: the members, the announced ferries and their lives. */
  void snapshot(Set<String> members, Set<String> announced, Router... routers) {
    Map<String, String> lives = new HashMap<>();
    for (String n : announced) {
      lives.put(n, cluster.get(n).life());
    }
    for (Router r : routers) {
      r.snapshot(members, announced, Set.of(), lives);
    }
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
}
