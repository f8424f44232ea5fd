package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The rarer ways a router answers an input itself (Router's first invariant: every input accepted is
 * answered exactly once), and its second: an input's hold timer is live only while it is held. Each
 * case was left unchecked by the other Router tests (a mutation run removed the answer, or the
 * timer's cancel, and nothing failed).
 */
class RouterEveryInputAnsweredTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  private final List<List<Object>> calls = new ArrayList<>();
  private final List<Router.Forward> out = new ArrayList<>();

  private Router router(String self) {
    return new Router(loop, self, RouterTesting.recordingFerry(loop, CALL_MS, calls), CALL_MS, MAX_HOLD_MS,
        RouterTesting.recording(out));
  }

  private static boolean failedWith(Future<Object> answer, FerryError kind) {
    return answer.failed() && answer.cause() instanceof FerryException fe && fe.kind() == kind;
  }

  /** Once closed, a node answers what still arrives (a caller's input or a forward) 503 at once. */
  @Test
  void whatArrivesAfterCloseIsAnsweredClosed() throws Exception {
    Router b = router("b");
    b.snapshot(Set.of("b"), Set.of("b"), Set.of());
    loop.runPending();
    b.close();
    loop.runPending();

    Future<Object> entered = RouterTesting.submit(b, "k", "x", 0);
    Future<Object> forwarded = RouterTesting.forwarded(b, "a", "k", "y", "cl#1", MAX_HOLD_MS / 2);
    loop.runPending();

    assertTrue(failedWith(entered, FerryError.CLOSED), "entered: " + entered);
    assertTrue(failedWith(forwarded, FerryError.CLOSED), "forwarded: " + forwarded);
    assertTrue(calls.isEmpty() && out.isEmpty(), "nothing sent: " + calls + " " + out);
  }

  /** A view with no ferry in it (every ferry closed, members remain): no node serves the key, 503 at once. */
  @Test
  void anInputNoNodeServesIsAnsweredClosed() throws Exception {
    Router b = router("b");
    b.snapshot(Set.of("a", "b"), Set.of(), Set.of());
    loop.runPending();

    Future<Object> x = RouterTesting.submit(b, "k", "x", 0);
    loop.runPending();

    assertTrue(failedWith(x, FerryError.CLOSED) && x.cause().getMessage().contains("no node"), "x: " + x);
    assertEquals(0, b.heldCount());
  }

  /**
   * Held before the first view, an input whose deadline passes before the view comes (the loop was
   * busy, its timer not run yet) is answered 504 when routed, neither submitted to the ferry nor
   * forwarded: here one the node owns and one it would forward.
   */
  @Test
  void anInputWhoseDeadlinePassedWhileHeldIsAnsweredTimeoutWhenRouted() throws Exception {
    Router a = router("a");
    String own = RouterTesting.keysOf("a", List.of("a", "b"), 1).get(0);
    String other = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    Future<Object> mine = RouterTesting.submit(a, own, "mine", 50);
    Future<Object> theirs = RouterTesting.submit(a, other, "theirs", 50);
    loop.runPending();
    assertEquals(2, a.heldCount(), "no view yet: held");

    loop.stallMillis(60);
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    a.released("b", "a,b");
    loop.runPending();

    assertTrue(failedWith(mine, FerryError.TIMEOUT), "mine: " + mine);
    assertTrue(failedWith(theirs, FerryError.TIMEOUT), "theirs: " + theirs);
    assertTrue(calls.isEmpty() && out.isEmpty(), "nothing sent: " + calls + " " + out);
    loop.advanceMillis(MAX_HOLD_MS);
    assertEquals(0, loop.liveTimers());
  }

  /** Closing answers what is held 503 and leaves no hold timer behind. */
  @Test
  void closeAnswersWhatIsHeldAndCancelsItsTimers() throws Exception {
    Router b = router("b");
    Future<Object> x = RouterTesting.submit(b, "k", "x", 0);
    loop.runPending();
    assertEquals(1, loop.liveTimers(), "held before the first view, with its bound's timer");

    b.close();
    loop.runPending();

    assertTrue(failedWith(x, FerryError.CLOSED), "x: " + x);
    assertEquals(0, loop.liveTimers(), "a hold timer outlived the hold");
  }

  /**
   * An input forwarded here through a node that then leaves the members is dropped, never applied
   * (ADR 0110), and its hold timer goes with it.
   */
  @Test
  void anInputDroppedWhenANodeOnItsWayDepartsLeavesNoTimer() throws Exception {
    Router b = router("b");
    String key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    b.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of()); // b's first view: it waits for a's release
    loop.runPending();
    int timers = loop.liveTimers();
    Future<Object> x = RouterTesting.forwarded(b, "a", key, "x", "cl#1", MAX_HOLD_MS / 2);
    loop.runPending();
    assertEquals(1, b.heldCount(), "held until a releases");
    assertEquals(timers + 1, loop.liveTimers());

    b.snapshot(Set.of("b"), Set.of("b"), Set.of()); // a left the members
    loop.runPending();

    assertTrue(failedWith(x, FerryError.CLOSED) && x.cause().getMessage().contains("left"), "x: " + x);
    assertEquals(timers, loop.liveTimers(), "the dropped input's hold timer is still set");
  }

  /**
   * A leave gives up a's forward of x1 (502); x2 of the same client, held at a for a pause, could
   * pass x1 with the key's path gone: it is answered 503, never applied (ADR 0115), and its hold
   * timer goes with it.
   */
  @Test
  void anInputHeldBehindOneALeaveGaveUpIsAnsweredAndLeavesNoTimer() throws Exception {
    Router a = router("a");
    String key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    Future<Object> x1 = RouterTesting.submit(a, key, "x1", 0, "c#1");
    loop.runPending();
    assertEquals(1, out.size(), "x1 forwarded to b");
    int timers = loop.liveTimers();
    Future<Object> x2 = RouterTesting.forwarded(a, "b", key, "x2", "c#2", MAX_HOLD_MS / 2); // views disagree: a pause
    loop.runPending();
    assertEquals(1, a.heldCount(), "x2 held for a pause");

    a.abandonForwards("leaving took too long");
    loop.runPending();

    assertTrue(failedWith(x1, FerryError.FAILED), "x1: " + x1);
    assertTrue(failedWith(x2, FerryError.CLOSED), "x2: " + x2);
    assertEquals(timers, loop.liveTimers(), "x2's hold timer outlived its hold");
  }

  /**
   * Held before the first view with a timer at its bound, x is held again for a pause once the view
   * comes (b, its sender, owns the key by a's view: views disagree): one timer, the pause's.
   */
  @Test
  void anInputHeldAgainKeepsOneTimer() throws Exception {
    Router a = router("a");
    String key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    RouterTesting.forwarded(a, "b", key, "x", "cl#1", MAX_HOLD_MS / 2);
    loop.runPending();
    assertEquals(1, loop.liveTimers(), "held before the first view");

    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();

    assertEquals(1, a.heldCount(), "held for a pause");
    assertEquals(1, loop.liveTimers(), "the first hold's timer is still set");
  }
}
