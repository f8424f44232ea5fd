package dev.ferry.cluster;

import static dev.ferry.cluster.RouterTesting.assertReturned;
import static dev.ferry.cluster.RouterTesting.input;
import static dev.ferry.cluster.RouterTesting.keysOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A forward its sender gave up on is never applied afterwards (ADR 0109, 0110): the node it was
 * forwarded to holds it at most half the sender's wait and then hands it back unapplied, with
 * what came after it from the same node; and what a node that left the members forwarded is
 * dropped, never applied, since the node it came through answered its caller when it left.
 */
class RouterGivenUpHoldTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  private final List<List<Object>> calls = new ArrayList<>();
  private final List<Router.Forward> forwards = new ArrayList<>();

  private Router router(String self, Router.Links links) {
    PerKeyFerry<String, Submission, List<Object>, Object> ferry = RouterTesting.recordingFerry(loop, CALL_MS, calls);
    return new Router(loop, self, ferry, CALL_MS, MAX_HOLD_MS, links);
  }

  @Test
  void aHeldForwardGoesBackUnappliedBeforeItsSenderStopsWaitingAndTakesWhatFollowedItAlong() throws Exception {
    Router b = router("b", RouterTesting.recording(forwards));
    // No view yet: b holds what it gets.
    Future<Object> x1 = forwarded(b, "a", "x1", "c#1", 1_000);
    loop.advanceMillis(100);
    Future<Object> x2 = forwarded(b, "a", "x2", "c#2", 1_000);
    Future<Object> other = forwarded(b, "d", "y1", "e#1", 1_000);
    loop.runPending();

    loop.advanceMillis(899);
    loop.runPending();
    assertFalse(x1.isComplete(), "held within the sender's hold bound");

    loop.advanceMillis(1);
    loop.runPending();
    assertReturned(x1);
    assertReturned(x2); // its own bound runs 100 ms more, but it came after x1 from a
    assertFalse(other.isComplete(), "from another node: held on");

    b.snapshot(Set.of("b"), Set.of("b"), Set.of());
    loop.advanceMillis(10);
    loop.runPending();
    assertEquals(List.of(List.of("y1")), calls, "x1 and x2 were never applied here");
  }

  @Test
  void aForwardHoldsAtMostHalfOfWhatItsSenderWaits() throws Exception {
    Router a = router("a", RouterTesting.recording(forwards));
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    String key = keysOf("b", List.of("a", "b"), 1).get(0);
    RouterTesting.submit(a, key, "x", 0);
    forwarded(a, "c", key, "y", "c#1", 1_000);
    loop.runPending();
    assertEquals(2, forwards.size());

    Router.Forward x = forwards.get(0);
    assertEquals(MAX_HOLD_MS + 3 * CALL_MS, x.sendTimeoutMs, "a caller's input without a deadline: the hold bound, and calls");
    assertEquals(MAX_HOLD_MS / 2, x.holdMs);

    Router.Forward y = forwards.get(1);
    assertEquals(1_000 + 3 * CALL_MS, y.sendTimeoutMs, "no longer than the node it came from waits for it");
    assertEquals(500, y.holdMs);
  }

  @Test
  void anInputForwardedByANodeThatLeftTheMembersIsNeverApplied() throws Exception {
    Router b = router("b", RouterTesting.recording(forwards));
    // b's view names c, which forwards it an input of a key c owns by that view: views disagree,
    // b holds it for a pause.
    b.snapshot(Set.of("b", "c"), Set.of("c"), Set.of());
    loop.runPending();
    Promise<Object> answer = Promise.promise();
    b.accept(input("k1", "x1"), 1, false, "c", "client#1", answer);
    loop.runPending();
    assertEquals(1, b.heldCount());

    b.snapshot(Set.of("b"), Set.of("b"), Set.of()); // c crashed: b owns every key now
    loop.advanceMillis(Router.RETRY_MS * 2);
    loop.runPending();
    assertTrue(answer.future().failed(), "answered (nobody hears it: its sender is gone)");
    assertEquals(FerryError.CLOSED, ((FerryException) answer.future().cause()).kind());
    assertEquals(List.of(), calls, "never applied");
  }

  /**
   * a forwarded x1 to b, b passed it on to c, which holds it; a crashes. Whoever sent x1 to a was
   * answered 502 by a's removal (or times out, if a was its entry), and its next input may already
   * be on its way to the owner: c must not apply x1 after it, though its own sender b is alive
   * (ADR 0112).
   */
  @Test
  void anInputIsNeverAppliedOnceAnyNodeOnItsWayLeftTheMembers() throws Exception {
    Router c = router("c", RouterTesting.recording(forwards));
    // c's view makes b the owner, but x1 comes from b: views disagree, c holds it for a pause.
    c.snapshot(Set.of("a", "b", "c"), Set.of("b"), Set.of());
    loop.runPending();
    Promise<Object> answer = Promise.promise();
    c.accept(input("k1", "x1"), 2, false, "a,b", "client#1", 1_000, answer);
    loop.runPending();
    assertEquals(1, c.heldCount());

    c.snapshot(Set.of("b", "c"), Set.of("c"), Set.of()); // a crashed; c owns every key now
    loop.advanceMillis(Router.RETRY_MS * 2);
    loop.runPending();
    assertEquals(List.of(), calls, "never applied");
    assertTrue(answer.future().failed(), "answered (b hears it, and its own sender is gone)");
    assertEquals(FerryError.CLOSED, ((FerryException) answer.future().cause()).kind());

    // What still arrives that passed a is dropped too.
    Promise<Object> late = Promise.promise();
    c.accept(input("k1", "x2"), 2, false, "a,b", "client#2", 1_000, late);
    loop.runPending();
    assertEquals(FerryError.CLOSED, ((FerryException) late.future().cause()).kind());
    assertEquals(List.of(), calls, "never applied");
  }

  /**
   * A member that left and is seen again (a partition that healed: Hazelcast merges the member
   * back with its Vert.x node id, which is set once per Vert.x instance) is a member like any
   * other: what it forwards from then on is applied (ADR 0112).
   */
  @Test
  void aNodeSeenAgainAsAMemberIsNoLongerDeparted() throws Exception {
    Router b = router("b", RouterTesting.recording(forwards));
    b.snapshot(Set.of("b", "c"), Set.of("b"), Set.of());
    loop.runPending();
    b.snapshot(Set.of("b"), Set.of("b"), Set.of()); // c is cut off
    loop.runPending();
    b.snapshot(Set.of("b", "c"), Set.of("b"), Set.of()); // and merged back, the same id
    loop.runPending();

    Promise<Object> answer = Promise.promise();
    b.accept(input("k1", "x1"), 1, false, "c", "client#1", 1_000, answer);
    loop.advanceMillis(10);
    loop.runPending();
    assertTrue(answer.future().succeeded(), () -> "refused: " + answer.future().cause());
    assertEquals(List.of(List.of("x1")), calls);
  }

  private Future<Object> forwarded(Router r, String from, String body, String origin, long holdMs) throws Exception {
    return forwarded(r, from, "k1", body, origin, holdMs);
  }

  private Future<Object> forwarded(Router r, String from, String key, String body, String origin, long holdMs)
      throws Exception {
    return RouterTesting.forwarded(r, from, key, body, origin, holdMs);
  }
}
