package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.testing.VirtualLoop;
import java.util.ArrayList;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review P: bounded state under churn. Every Vert.x node that crashes or leaves is gone for good
 * under its id (a restart is a new id), and a node remembers each one it saw go ({@code
 * Router#departed}, ADR 0110) until it sees it as a member again, which a new id never is: one entry
 * per departure, for the node's whole life, long after anything that passed the departed node
 * could still arrive (the hold bound, here 3 s).
 */
class RouterDepartedChurnReviewTest {
  @Test
  void departedNodesAreNotRememberedForEver() throws Exception {
    VirtualLoop loop = new VirtualLoop();
    Router a = RouterTesting.routerKeepingForwards(loop, "a", 1_000, new ArrayList<>());
    a.snapshot(Set.of("a"), Set.of("a"), Set.of());
    for (int i = 0; i < 10_000; i++) {
      String n = "n" + i;
      a.snapshot(Set.of("a", n), Set.of("a", n), Set.of());
      loop.runPending();
      a.snapshot(Set.of("a"), Set.of("a"), Set.of()); // n crashed
      loop.runPending();
      loop.advanceMillis(10_000); // far past any hold of what n could have sent
    }
    java.lang.reflect.Field field = Router.class.getDeclaredField("departed");
    field.setAccessible(true);
    Object departed = field.get(a);
    int kept = departed instanceof java.util.Map<?, ?> m ? m.size() : ((Set<?>) departed).size();
    assertTrue(kept <= 100, "a remembers " + kept + " departed nodes, 10,000 of them gone for more than 10 s");
  }
  /**
   * A departed node is forgotten only twice the hold bound after this node saw it go (ADR 0159,
   * rule 4): until then, what passed it and arrives here is never applied (ADR 0110), however
   * many membership reads (one a second, ADR 0113) came in between. Mutation testing: "now - at"
   * as "now + at", or "2 * maxHoldNanos" as "2 / maxHoldNanos", forgot it at the next read, and
   * an input a sent before it crashed, arriving 5 s later (the hold bound is 3 s), was applied.
   */
  @Test
  void whatPassedADepartedNodeIsDroppedUntilTwiceTheHoldBoundAfterItWent() throws Exception {
    VirtualLoop loop = new VirtualLoop();
    Router b = RouterTesting.routerKeepingForwards(loop, "b", 1_000, new ArrayList<>()); // hold bound 3 s
    java.util.List<String> abc = java.util.List.of("a", "b", "c");
    b.snapshot(Set.copyOf(abc), Set.copyOf(abc), Set.of());
    loop.runPending();
    String key = RouterTesting.keysOf("b", java.util.List.of("b", "c"), 1).get(0);
    b.snapshot(Set.of("b", "c"), Set.of("b", "c"), Set.of()); // a crashed
    loop.runPending();
    for (int second = 1; second <= 5; second++) {
      loop.advanceMillis(1_000);
      b.snapshot(Set.of("b", "c"), Set.of("b", "c"), Set.of());
      loop.runPending();
    }
    io.vertx.core.Future<Object> late = RouterTesting.forwarded(b, "a", key, "from-a", "cl#1", 1_000);
    io.vertx.core.Future<Object> viaC = RouterTesting.forwarded(b, "a,c", key, "via-c", "cl#2", 1_000);
    loop.runPending();
    for (io.vertx.core.Future<Object> f : java.util.List.of(late, viaC)) {
      assertTrue(RouterTesting.closed(f) && f.cause().getMessage().contains("(a) left the cluster"),
          "passed a, 5 s after a went: " + (f.succeeded() ? "applied" : f.cause()));
    }

    // Twice the hold bound after: a is forgotten.
    loop.advanceMillis(2_000);
    b.snapshot(Set.of("b", "c"), Set.of("b", "c"), Set.of());
    loop.runPending();
    java.lang.reflect.Field field = Router.class.getDeclaredField("departed");
    field.setAccessible(true);
    assertTrue(((java.util.Map<?, ?>) field.get(b)).isEmpty(), "a is remembered 7 s after it went");
  }
}
