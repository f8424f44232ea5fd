package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review P: a node that refused one forward (NO_HANDLERS: its consumer was missing for that one
 * send, as for a ferry deployed again under its id between two membership reads, or a joiner whose
 * registration reached this node's event bus after its announcement, ADR 0148) and then took the
 * forward sent again. The routing client stops pausing such a node once its handler answers a
 * request sent after the refusal (ADR 0148); the node's own router kept it "refused" until its
 * view changed, which nothing here makes it do.
 */
class RouterRefusedThenAnsweredReviewTest {
  private static final long CALL_MS = 1_000;
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Router.Forward> out = new ArrayList<>();
  private final Router a = RouterTesting.routerKeepingForwards(loop, "a", CALL_MS, out);

  @Test
  void aNodeThatTookAForwardAfterRefusingOneIsNoLongerPaused() throws Exception {
    String key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    a.released("b", "a,b");
    loop.runPending();
    assertTrue(a.settled(), a.describe());

    Future<Object> x0 = RouterTesting.submit(a, key, "x0", 0);
    loop.runPending();
    a.forwarded(out.get(0), Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, -1, "no handlers")));
    loop.runPending();
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(2, out.size(), "x0 sent again after the pause");
    a.forwarded(out.get(1), Future.succeededFuture("x0"));
    loop.runPending();
    assertEquals("x0", x0.result());

    // b's handler took a forward sent after its refusal: it takes inputs again. A key's inputs
    // entering here go on to it at once, not one per pause.
    List<Future<Object>> answers = new ArrayList<>();
    for (int i = 1; i <= 10; i++) {
      answers.add(RouterTesting.submit(a, key, "x" + i, 0));
    }
    loop.runPending();
    long began = loop.nowMillis();
    int sent = out.size() - 2;
    while (out.size() < 12 && loop.nowMillis() - began < 5_000) {
      loop.advanceMillis(1);
    }
    assertEquals(10, sent, "forwarded at once of x1..x10 (all of them went after "
        + (loop.nowMillis() - began) + " ms): " + a.describe());
    for (int i = 2; i < out.size(); i++) {
      a.forwarded(out.get(i), Future.succeededFuture(out.get(i).pending.input.body));
    }
    loop.runPending();
    for (Future<Object> f : answers) {
      assertTrue(f.succeeded(), String.valueOf(f));
    }
  }
}
