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
}
