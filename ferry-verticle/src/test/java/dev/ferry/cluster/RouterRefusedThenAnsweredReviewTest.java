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

  /** a and b members, b released to a: a forwards b's keys at once. */
  private void joined() {
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    a.released("b", "a,b");
    loop.runPending();
  }

  /** x0 of {@code key} refused by b (NO_HANDLERS), sent again after the pause, then answered {@code answer}. */
  private Future<Object> refusedThenAnswered(String key, Future<Object> answer) throws Exception {
    Future<Object> x0 = RouterTesting.submit(a, key, "x0", 0);
    loop.runPending();
    a.forwarded(out.get(0), Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, -1, "no handlers")));
    loop.runPending();
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(2, out.size(), "x0 sent again after the pause");
    a.forwarded(out.get(1), answer);
    loop.runPending();
    return x0;
  }

  @Test
  void aNodeThatTookAForwardAfterRefusingOneIsNoLongerPaused() throws Exception {
    String key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    joined();
    assertTrue(a.settled(), a.describe());

    Future<Object> x0 = refusedThenAnswered(key, Future.succeededFuture("x0"));
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

  /**
   * The handler's own failure (a RECIPIENT_FAILURE: the owner answered the input 4xx/5xx) is an
   * answer of b's handler as much as a success is: b takes forwards again (ADR 0159, rule 3).
   * Mutation testing: without the mark's end in that branch, b stayed refused until the view
   * changed and a key's inputs went one per pause.
   */
  @Test
  void aNodeWhoseHandlerAnsweredAForwardWithAFailureAfterRefusingOneIsNoLongerPaused() throws Exception {
    String key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    joined();

    Future<Object> x0 = refusedThenAnswered(key,
        Future.failedFuture(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, 400, "bad input")));
    assertTrue(x0.failed() && x0.cause() instanceof ReplyException re && re.failureCode() == 400, String.valueOf(x0));

    for (int i = 1; i <= 3; i++) {
      RouterTesting.submit(a, key, "x" + i, 0);
    }
    loop.runPending();
    assertEquals(5, out.size(), "x1..x3 forwarded at once, b's handler answered after its refusal: " + a.describe());
  }

  /**
   * A reply to a forward sent at the very moment of the refusal (before it came back) says nothing
   * of b's handler now (ADR 0159, rule 3: only a forward sent after the refusal ends it). Two keys'
   * inputs go to b at one instant; the first comes back NO_HANDLERS, then the second is answered:
   * b stays refused, and a third key's input waits a pause before it goes. Mutation testing:
   * "sentAt > refusedAt" as ">=" read the second reply as b taking forwards again.
   */
  @Test
  void aReplyToAForwardSentAtTheInstantOfTheRefusalDoesNotEndIt() throws Exception {
    List<String> keys = RouterTesting.keysOf("b", List.of("a", "b"), 3);
    joined();

    Future<Object> x = RouterTesting.submit(a, keys.get(0), "x", 0);
    Future<Object> y = RouterTesting.submit(a, keys.get(1), "y", 0);
    loop.runPending();
    assertEquals(2, out.size());
    assertEquals(out.get(0).sentAt, out.get(1).sentAt, "both sent at one instant");
    a.forwarded(out.get(0), Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, -1, "no handlers")));
    loop.runPending();
    a.forwarded(out.get(1), Future.succeededFuture("y"));
    loop.runPending();
    assertEquals("y", y.result());

    Future<Object> z = RouterTesting.submit(a, keys.get(2), "z", 0);
    loop.runPending();
    assertEquals(2, out.size(), "z waits a pause: b refused, and took nothing sent after: " + a.describe());
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("x", "z"), out.subList(2, out.size()).stream().map(f -> f.pending.input.body).sorted().toList(),
        a.describe());
    a.forwarded(out.get(2), Future.succeededFuture(out.get(2).pending.input.body));
    a.forwarded(out.get(3), Future.succeededFuture(out.get(3).pending.input.body));
    loop.runPending();
    assertEquals("x", x.result());
    assertEquals("z", z.result());
  }
}
