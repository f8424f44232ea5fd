package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.testing.VirtualLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A forward names every node its input passed, in order, this one last: the next node reads its
 * sender from it (hand-backs go there, ADR 0109) and drops the input if any of them left the
 * members (ADR 0110); and it counts them (its hop, at most {@link Router#MAX_HOPS}: ADR 0053).
 */
class RouterForwardVisitedTest {
  private static final long CALL_MS = 1_000;
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Router.Forward> out = new ArrayList<>();
  private final Router b = RouterTesting.routerKeepingForwards(loop, "b", CALL_MS, out);

  @Test
  void aForwardNamesAndCountsTheNodesItsInputPassedThisOneLast() throws Exception {
    String key = RouterTesting.keysOf("c", List.of("a", "b", "c"), 1).get(0);
    b.snapshot(Set.of("a", "b", "c"), Set.of("a", "b", "c"), Set.of());
    loop.runPending();

    RouterTesting.submit(b, key, "entered", 0, "cl#1");
    RouterTesting.forwarded(b, "a", key, "from-a", "cl#2", 1_000);
    loop.runPending();

    assertEquals(List.of("b", "a,b"), out.stream().map(f -> f.visited).toList());
    assertEquals(List.of(1, 2), out.stream().map(f -> f.hop).toList(), "the number of nodes passed");
  }
}
