package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What a hand-back (ADR 0109: a held forward answered {@link Router#RETURNED}, never applied) does
 * at the node that gets it and at the node that sends it, in virtual time (ADR 0112).
 */
class RouterHandBackTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  private final List<List<Object>> calls = new ArrayList<>();
  private final List<Router.Forward> forwards = new ArrayList<>();

  private Router router(String self) {
    PerKeyFerry<String, Submission, List<Object>, Object> ferry = RouterTesting.recordingFerry(loop, CALL_MS, calls);
    return new Router(loop, self, ferry, CALL_MS, MAX_HOLD_MS, RouterTesting.recording(forwards));
  }

  @Test
  void aHandBackDoesNotMakeItsHealthyNodeUnreachable() throws Exception {
    Router a = router("a");
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    List<String> keys = keysOf("b", List.of("a", "b"), 2);
    RouterTesting.submit(a, keys.get(0), "x", 0);
    loop.runPending();
    assertEquals(List.of("x"), bodies());

    // b held x for as long as a allowed and hands it back: b is up, it only could not send x on yet.
    a.forwarded(forwards.get(0), returned());
    RouterTesting.submit(a, keys.get(1), "y", 0);
    loop.runPending();
    assertEquals(List.of("x", "y"), bodies(), "y goes to b at once: a hand-back is no refusal by b");

    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("x", "y", "x"), bodies(), "x goes again after its pause");
  }

  /**
   * A caller's input at its entry node a, forwarded to the owner b, which cannot send it on (it
   * waits, say, for a release that does not come) and hands it back each time a's allowance runs
   * out. a holds it for at most its hold bound from the moment it arrived, whatever the hand-backs
   * in between: each forward may only be held for half of what is left of that bound. Before ADR
   * 0112 each forward allowed half a whole bound and a's bound began at the first hand-back, so
   * the caller got its 503 after 4.7 s against a 3 s bound.
   */
  @Test
  void anEntryNodeHoldsAnInputNoLongerThanItsBoundFromArrivalThroughHandBacks() throws Exception {
    Router a = router("a");
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    long start = loop.nowMillis();
    Future<Object> x = RouterTesting.submit(a, keysOf("b", List.of("a", "b"), 1).get(0), "x", 0);
    long[] answeredAt = {-1};
    x.onComplete(ar -> answeredAt[0] = loop.nowMillis());
    loop.runPending();
    for (int sent = 0; forwards.size() > sent && sent < 50; ) {
      Router.Forward f = forwards.get(sent++);
      loop.advanceMillis(f.holdMs); // b holds it as long as it may, then hands it back
      a.forwarded(f, returned());
      loop.advanceMillis(Router.RETRY_MS); // a's pause: it goes again, or its bound ends
    }
    assertTrue(x.failed(), "answered once its bound ran out");
    assertTrue(answeredAt[0] - start <= MAX_HOLD_MS,
        "answered " + (answeredAt[0] - start) + " ms after it arrived, the bound is " + MAX_HOLD_MS + " ms");
  }

  static Future<Object> returned() {
    return Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, Router.RETURNED, "handed back"));
  }

  private List<Object> bodies() {
    return forwards.stream().map(f -> (Object) f.pending.input.body).toList();
  }

  static Submission input(String key, String body) throws Submission.BadInput {
    return Submission.parse(MultiMap.caseInsensitiveMultiMap().add(Submission.KEY, key), body);
  }

  /** {@code n} keys that {@code node} owns by {@code view}. */
  static List<String> keysOf(String node, List<String> view, int n) {
    List<String> keys = new ArrayList<>();
    for (int k = 0; keys.size() < n; k++) {
      if (Rendezvous.owner("k" + k, view).equals(node)) {
        keys.add("k" + k);
      }
    }
    return keys;
  }
}
