package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A forward refused by its target (not delivered: NO_HANDLERS, here b's 410 while it leaves) is
 * routed again no sooner than a pause or the next view (ADR 0056): the next view goes at once, and
 * the node that refused is no longer taken as unreachable by it.
 */
class RouterRefusedTargetTest {
  private static final long CALL_MS = 1_000;
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Router.Forward> out = new ArrayList<>();
  private final Router a = RouterTesting.routerKeepingForwards(loop, "a", CALL_MS, out);

  @Test
  void anInputRefusedByItsTargetGoesAgainAtTheNextView() throws Exception {
    String key = RouterTesting.keysOf("b", List.of("a", "b"), 1).stream()
        .filter(k -> Rendezvous.owner(k, List.of("a", "b", "c")).equals("b")).findFirst().orElseThrow();
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    Future<Object> x = RouterTesting.submit(a, key, "x", 0, "cl#1");
    loop.runPending();
    a.forwarded(out.get(0), Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, 410, "leaving")));
    loop.runPending();
    assertEquals(1, out.size(), "x waits for a pause or the next view");

    a.snapshot(Set.of("a", "b", "c"), Set.of("a", "b", "c"), Set.of()); // c joins; b still owns the key
    loop.runPending();

    assertEquals(2, out.size(), "x sent again to b at the next view, not after a pause: " + x);
    assertEquals("b", out.get(1).target);
  }
}
