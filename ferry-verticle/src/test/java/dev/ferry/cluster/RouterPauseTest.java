package dev.ferry.cluster;

import static dev.ferry.cluster.RouterTesting.keysOf;
import static dev.ferry.cluster.RouterTesting.returned;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The pause before an input held here is sent on once more, in virtual time. */
class RouterPauseTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  private final List<List<Object>> calls = new ArrayList<>();
  private final List<Router.Forward> forwards = new ArrayList<>();

  /**
   * Inputs handed back together each pause once, together: a pause is counted from when it began.
   * Every flush held the key's other inputs again with their pause started anew, and a flush comes
   * whenever one pause ends, so the inputs went on one per pause: fourteen hand-backs took 1.4 s,
   * and the last ones met their hold bound, answered 503 in a run with a settled view
   * (`RouterSimulationTest#ferriesDeployedAgainUnderTheSameId`, views late, storms of 12, seed 7176).
   */
  @Test
  void inputsHandedBackTogetherAreSentOnTogetherAfterOnePause() throws Exception {
    PerKeyFerry<String, Submission, List<Object>, Object> ferry = RouterTesting.recordingFerry(loop, CALL_MS, calls);
    Router a = new Router(loop, "a", ferry, CALL_MS, MAX_HOLD_MS, RouterTesting.recording(forwards));
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    String key = keysOf("b", List.of("a", "b"), 1).get(0);
    int n = 5;
    for (int i = 0; i < n; i++) {
      RouterTesting.submit(a, key, "x" + i, 0);
    }
    loop.runPending();
    assertEquals(n, forwards.size(), "each forwarded to b, the owner");

    // b held them all and hands them back, the latest first: none waits for a later one still out.
    for (int i = n - 1; i >= 0; i--) {
      a.forwarded(forwards.get(i), returned());
    }
    loop.runPending();
    assertEquals(n, forwards.size(), "each held for its pause");

    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("x0", "x1", "x2", "x3", "x4"),
        forwards.subList(n, forwards.size()).stream().map(f -> (Object) f.pending.input.body).toList(),
        "after one pause all go again, in their order");
  }

  /**
   * A pause that ends while the key is handed off here leaves its input held: routed again when the
   * hand-off ends. Its hold bound still runs. The hand-off waits for the key's call in flight, which
   * a downstream that does not answer keeps open past the call timeout (ADR 0005): the input must
   * still be answered at its bound, as every other input held for the hand-off is.
   */
  @Test
  void aPauseEndingDuringTheKeysHandOffKeepsItsHoldBound() throws Exception {
    List<Promise<List<Object>>> openCalls = new ArrayList<>();
    PerKeyFerry<String, Submission, List<Object>, Object> ferry =
        RouterTesting.ferryWithOpenCalls(loop, CALL_MS, calls, openCalls);
    Router a = new Router(loop, "a", ferry, CALL_MS, MAX_HOLD_MS, RouterTesting.recording(forwards));
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    String key = keysOf("b", List.of("a", "b"), 1).get(0);
    Future<Object> p = RouterTesting.submit(a, key, "p", 0);
    loop.runPending();
    assertEquals(1, forwards.size(), "p forwarded to b, the owner");

    // a owns the key now (b, still a member, released the view) and serves what comes from b: its
    // forward of p is still open, and an input along that path goes to a's ferry, whose call hangs.
    a.snapshot(Set.of("a", "b"), Set.of("a"), Set.of());
    a.released("b", a.viewId());
    RouterTesting.forwarded(a, "b", key, "y", null, 0);
    loop.runPending();
    assertEquals(List.of(List.of("y")), calls, "y called at a, its downstream does not answer");

    // b owns it again: a hands the key off once y's call is over, which it is not.
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    assertEquals(1, a.handOffsOpen(), "the key's hand-off waits for y's call");
    a.forwarded(forwards.get(0), Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, "b stopped consuming")));
    loop.runPending();
    assertEquals(1, a.heldCount(), "p held for a pause");

    loop.advanceMillis(Router.RETRY_MS); // the pause ends during the hand-off: p stays held
    loop.advanceMillis(MAX_HOLD_MS);
    assertTrue(RouterTesting.closed(p), "p answered 503 at its hold bound, the hand-off still open: " + p);
    assertEquals(0, a.heldCount());
  }
}
