package dev.ferry.cluster;

import static dev.ferry.cluster.RouterTesting.assertAppliedInOrder;
import static dev.ferry.cluster.RouterTesting.deliver;
import static dev.ferry.cluster.RouterTesting.deliverAll;
import static dev.ferry.cluster.RouterTesting.returned;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Hostile review of ADR 0115 with two and three routers on one virtual loop: the test is the
 * network (it delivers each forward when it says, in order per link, and carries answers back at
 * once in their wire form). What it attacks: one answer per input, a client's order per key, a 503
 * "never applied" ({@link Router#OVERTAKEN}) only for what was never applied, and empty tables once
 * everything is answered. Node c is a real router where what it applies matters, else the test
 * answers b's forwards to it.
 */
class RouterBehindSentMultiReviewTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  /** What every node applied, in order: one list for the whole cluster. */
  private final List<List<Object>> calls = new ArrayList<>();
  private final Map<String, List<Router.Forward>> out = new HashMap<>();

  private Router router(String self) {
    return router(self, RouterTesting.recordingFerry(loop, CALL_MS, calls));
  }

  private Router router(String self, PerKeyFerry<String, Submission, List<Object>, Object> ferry) {
    return new Router(loop, self, ferry, CALL_MS, MAX_HOLD_MS, RouterTesting.recording(sent(self)));
  }

  /** The forwards {@code node} made, in order. */
  private List<Router.Forward> sent(String node) {
    return out.computeIfAbsent(node, n -> new ArrayList<>());
  }

  private List<Object> bodies(String node) {
    return sent(node).stream().map(f -> (Object) f.pending.input.body).toList();
  }

  private List<Object> applied() {
    return calls.stream().flatMap(List::stream).toList();
  }

  private Future<Object> enter(Router r, String key, String body, String origin) throws Exception {
    Future<Object> answer = RouterTesting.submit(r, key, body, 0, origin);
    loop.runPending();
    return answer;
  }

  /** A key that a's view [a, b] gives b and b's view [a, b, c] gives c: a sends it to b, b on to c. */
  private static String keyViaBToC() {
    for (int k = 0; ; k++) {
      String key = "k" + k;
      if (Rendezvous.owner(key, List.of("a", "b")).equals("b") && Rendezvous.owner(key, List.of("a", "b", "c")).equals("c")) {
        return key;
      }
    }
  }

  /** a routes by [a, b], b by [a, b, c]: they disagree on the key's owner, so inputs hop a, b, c. */
  private void chainViews(Router a, Router b) {
    a.snapshot(Set.of("a", "b", "c"), Set.of("a", "b"), Set.of());
    b.snapshot(Set.of("a", "b", "c"), Set.of("a", "b", "c"), Set.of());
    loop.runPending();
  }

  /**
   * a -> b -> c. c holds x1 (no view yet) and hands it back to b; x2, sent after it along the
   * same way, is slow on the wire from b to c. b keeps x1 behind x2 until a's allowance for it
   * ends, then hands it back to a, which keeps it behind its own forward of x2. x2 reaches c after
   * c's mark of x1 ended and is applied: x1 is answered 503 never applied, sent again by nobody.
   */
  @Test
  void inAChainTheInputHandedBackToTheEntryNodeWaitsForTheLaterOneOutThroughTheMiddle() throws Exception {
    Router a = router("a");
    Router b = router("b");
    Router c = router("c"); // no view yet: holds what it gets
    chainViews(a, b);
    String key = keyViaBToC();

    Future<Object> x1 = enter(a, key, "x1", "c#1");
    deliver(a, b, sent("a").get(0));
    deliver(b, c, sent("b").get(0));
    loop.advanceMillis(1);
    Future<Object> x2 = enter(a, key, "x2", "c#2");
    deliver(a, b, sent("a").get(1));
    assertEquals(List.of("x1", "x2"), bodies("b"), "b sends x2 on behind x1");

    loop.advanceMillis(MAX_HOLD_MS / 2); // c hands x1 back at b's allowance, b at a's
    assertEquals(List.of("x1", "x2"), bodies("b"), "b never sent x1 again while x2 was out");
    assertEquals(List.of("x1", "x2"), bodies("a"));
    assertFalse(x1.isComplete(), "a holds x1 behind x2: " + x1);

    c.snapshot(Set.of("c"), Set.of("c"), Set.of()); // c owns the key now
    loop.advanceMillis(MAX_HOLD_MS / 4); // past c's mark of x1
    deliver(b, c, sent("b").get(1)); // x2, slow on the wire
    loop.advanceMillis(Router.RETRY_MS);
    assertTrue(x2.succeeded(), "x2 " + x2);
    assertTrue(RouterTesting.overtaken(x1), "x1 " + x1);
    assertEquals(List.of("x2"), applied(), "x1 answered never applied, so never applied");
    assertEquals(2, sent("a").size());
    assertEquals(2, sent("b").size());
    for (Router r : List.of(a, b, c)) {
      RouterTesting.assertClean(r);
    }
  }

  /** How c's answer to b's forward of x2 can fail, and whether x2 may have been applied then. */
  enum Outcome {
    APPLIED(true), OWNER_FAILED(true), SEND_TIMEOUT(true),
    NEVER_APPLIED(false), REFUSED_429(false), DEADLINE_504(false), NOT_DECODED(false);

    final boolean mayHaveApplied;

    Outcome(boolean mayHaveApplied) {
      this.mayHaveApplied = mayHaveApplied;
    }

    Future<Object> result() {
      return switch (this) {
        case APPLIED -> Future.succeededFuture("x2");
        case OWNER_FAILED -> failed(FerryError.FAILED);
        case SEND_TIMEOUT -> Future.failedFuture(new ReplyException(ReplyFailure.TIMEOUT, "send timeout"));
        case NEVER_APPLIED -> failed(FerryError.CLOSED);
        case REFUSED_429 -> failed(FerryError.REJECTED);
        case DEADLINE_504 -> failed(FerryError.TIMEOUT);
        case NOT_DECODED -> Future.failedFuture(new ReplyException(ReplyFailure.ERROR, -1, "cannot decode"));
      };
    }

    private static Future<Object> failed(FerryError kind) {
      return Future.failedFuture(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, kind.code(), kind.name()));
    }
  }

  /**
   * a -> b -> (c, the test). x1 came back through b to a and waits there behind x2; c's answer to
   * x2 reaches a only through b's answer, in b's words. a must read b's answer as c's: x1 is given
   * up (503 never applied) exactly when x2 may have been applied, else sent again.
   */
  @ParameterizedTest
  @EnumSource(Outcome.class)
  void aLaterInputAnsweredThroughAMiddleNode(Outcome outcome) throws Exception {
    Router a = router("a");
    Router b = router("b");
    chainViews(a, b);
    String key = keyViaBToC();
    Future<Object> x1 = enter(a, key, "x1", "c#1");
    deliver(a, b, sent("a").get(0));
    loop.advanceMillis(1);
    Future<Object> x2 = enter(a, key, "x2", "c#2");
    deliver(a, b, sent("a").get(1));
    b.forwarded(sent("b").get(0), returned()); // c hands x1 back to b
    loop.advanceMillis(MAX_HOLD_MS / 2); // b keeps it behind x2 until a's allowance ends
    assertFalse(x1.isComplete(), "x1 handed back to a and held there: " + x1);

    b.forwarded(sent("b").get(1), outcome.result());
    loop.advanceMillis(Router.RETRY_MS);
    assertTrue(x2.isComplete(), "x2 answered to a through b: " + x2);
    if (outcome.mayHaveApplied) {
      assertTrue(RouterTesting.overtaken(x1), "x1 " + x1);
      assertEquals(List.of("x1", "x2"), bodies("a"), "x1 never sent again");
      RouterTesting.assertClean(a);
    } else {
      assertFalse(x1.isComplete(), "x1 given up behind an x2 never applied: " + x1);
      assertEquals(List.of("x1", "x2", "x1"), bodies("a"), "x1 sent again once x2 is answered");
    }
    RouterTesting.assertClean(b);
  }

  /**
   * c refuses x2 NO_HANDLERS (it is leaving): b holds x2 and does not answer a; once x2's pause at
   * b ends, b's mark of x1 (handed back to a) sends x2 back to a too. a then sends x1 before x2.
   */
  @Test
  void aLaterInputRefusedBeyondTheMiddleNodeComesBackBehindTheEarlierOne() throws Exception {
    Router a = router("a");
    Router b = router("b");
    chainViews(a, b);
    String key = keyViaBToC();
    Future<Object> x1 = enter(a, key, "x1", "c#1");
    deliver(a, b, sent("a").get(0));
    loop.advanceMillis(1);
    Future<Object> x2 = enter(a, key, "x2", "c#2");
    deliver(a, b, sent("a").get(1));
    b.forwarded(sent("b").get(0), returned());
    loop.advanceMillis(MAX_HOLD_MS / 2);

    b.forwarded(sent("b").get(1), Future.failedFuture(
        new ReplyException(ReplyFailure.NO_HANDLERS, ClientRouter.GONE, "node c is leaving the cluster")));
    loop.advanceMillis(Router.RETRY_MS);
    assertFalse(x1.isComplete() || x2.isComplete(), "neither given up: " + x1 + " " + x2);
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("x1", "x2", "x1", "x2"), bodies("a"), "x2 came back to a and goes again behind x1");
    assertEquals(List.of("x1", "x2"), bodies("b"), "b sent nothing on to c");
  }

  /**
   * Two routers each hold an input of the same client and key that came back: b holds x2 (c handed
   * it back) behind x3, out at c; a holds x1 (b handed it back) behind x2 and x3, out at b. c
   * applies x3: x2 is answered never applied by b, x1 by a; nothing is sent again, nothing left.
   */
  @Test
  void twoRoutersHoldingInputsThatCameBackBehindTheSameLaterOne() throws Exception {
    Router a = router("a");
    Router b = router("b");
    chainViews(a, b);
    String key = keyViaBToC();
    List<Future<Object>> x = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      x.add(enter(a, key, "x" + i, "c#" + i));
      deliver(a, b, sent("a").get(i - 1));
      loop.advanceMillis(1);
    }
    assertEquals(List.of("x1", "x2", "x3"), bodies("b"));
    b.forwarded(sent("b").get(0), returned());
    b.forwarded(sent("b").get(1), returned());
    loop.advanceMillis(MAX_HOLD_MS / 2 - 3); // a's allowance for x1 ends at b, not yet for x2
    assertFalse(x.get(0).isComplete() || x.get(1).isComplete(), "x1 held at a, x2 at b");

    b.forwarded(sent("b").get(2), Future.succeededFuture("x3")); // c applied x3
    loop.runPending();
    assertTrue(x.get(2).succeeded(), "x3 " + x.get(2));
    assertTrue(RouterTesting.overtaken(x.get(0)), "x1 " + x.get(0));
    assertTrue(RouterTesting.overtaken(x.get(1)), "x2 " + x.get(1));
    loop.advanceMillis(MAX_HOLD_MS);
    assertEquals(3, sent("a").size());
    assertEquals(3, sent("b").size());
    RouterTesting.assertClean(a);
    RouterTesting.assertClean(b);
  }

  /**
   * The key moves from a to b while x1 and x2 (a's own callers, one origin) wait in a's ferry behind
   * x0's call: both are handed off to b, which holds x1 (no view yet) and hands it back; x2 is slow
   * on the wire. a keeps x1's hand-off behind x2's; x2 reaches b while b's mark of x1 lasts (from
   * an entry node it lasts as long as a's bound for x1: past it x1 is answered anyway) and goes
   * back too. Both go again in order, and b applies them in order.
   */
  @Test
  void handOffsThatComeBackGoAgainInTheirOrder() throws Exception {
    List<Promise<List<Object>>> open = new ArrayList<>();
    Router a = router("a", RouterTesting.ferryWithOpenCalls(loop, CALL_MS, calls, open));
    Router b = router("b"); // no view yet: holds
    a.snapshot(Set.of("a"), Set.of("a"), Set.of());
    loop.runPending();
    String key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    Future<Object> x0 = enter(a, key, "x0", null);
    Future<Object> x1 = enter(a, key, "x1", null);
    Future<Object> x2 = enter(a, key, "x2", null);
    assertEquals(List.of(List.of("x0")), calls, "x1 and x2 wait in a's ferry");

    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of()); // b joins and owns the key
    loop.runPending();
    open.get(0).complete(List.of()); // x0's call ends: a hands x1 and x2 to b
    loop.runPending();
    assertTrue(x0.succeeded());
    assertEquals(List.of("x1", "x2"), bodies("a"));
    deliver(a, b, sent("a").get(0));
    loop.advanceMillis(MAX_HOLD_MS / 2 + Router.RETRY_MS); // b hands x1 back; a's pause for it ends
    assertEquals(2, sent("a").size(), "x1 not sent again while x2 is out");

    b.snapshot(Set.of("b"), Set.of("b"), Set.of()); // b owns the key now
    deliver(a, b, sent("a").get(1)); // x2, slow on the wire: b hands it back behind x1
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("x1", "x2", "x1", "x2"), bodies("a"));
    deliver(a, b, sent("a").get(2));
    deliver(a, b, sent("a").get(3));
    loop.runPending();
    assertTrue(x1.succeeded() && x2.succeeded(), x1 + " " + x2);
    assertEquals(List.of("x0", "x1", "x2"), applied());
    RouterTesting.assertClean(a);
    RouterTesting.assertClean(b);
  }

  /**
   * a's leave gives up its forwards while two clients' inputs, c1 and d1, came back from b and wait
   * behind their later ones c2 and d2, slow on the wire to b. Both c2 and d2 are answered 502 (may
   * have been applied), so c1 and d1 must never be applied. But giving up c2 answers c1 and routes
   * the key's held inputs again at once, with every forward already dropped from openByOrigin and
   * d2 not yet looked at: d1, its pause over, no longer sees d2 out and was forwarded again, right
   * behind d2 on the link, and b applied d2, then d1, both callers OK. Now the key's held inputs
   * are routed only once every given-up forward was counted: d1 is answered never applied.
   */
  @Test
  void aLeaveGivingUpItsForwardsDoesNotSendAgainWhatCameBackBehindOneOfThem() throws Exception {
    Router a = router("a");
    Router b = router("b"); // no view yet: holds
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    String key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    Future<Object> d1 = enter(a, key, "d1", "d#1");
    // c1's deadline (2 s) lets b hold it 1 s: b hands it back alone, before d1 (had they gone back
    // together, as what came later from a goes back with an earlier one, the defect would hide).
    Future<Object> c1 = RouterTesting.submit(a, key, "c1", 2_000, "c#1");
    Future<Object> c2 = enter(a, key, "c2", "c#2");
    Future<Object> d2 = enter(a, key, "d2", "d#2");
    deliver(a, b, sent("a").get(0));
    deliver(a, b, sent("a").get(1)); // c2 and d2 stay on the wire
    loop.advanceMillis(MAX_HOLD_MS / 2 + Router.RETRY_MS); // b hands c1, then d1 back; d1's pause ends
    assertEquals(List.of("d1", "c1", "c2", "d2"), bodies("a"), "c1 and d1 wait behind c2 and d2");
    assertFalse(c1.isComplete() || d1.isComplete(), c1 + " " + d1);

    a.abandonForwards("leaving took too long");
    loop.runPending();
    assertTrue(c2.failed() && d2.failed(), "given up: 502");
    assertTrue(RouterTesting.overtaken(c1), "c1 " + c1);

    b.snapshot(Set.of("b"), Set.of("b"), Set.of());
    loop.advanceMillis(MAX_HOLD_MS / 2); // past b's marks: what a sent is still on the wire
    // In order on the link: c2, d2, then whatever a sent after them.
    deliverAll(a, b, sent("a").subList(2, sent("a").size()));
    loop.advanceMillis(Router.RETRY_MS);
    List<Object> applied = applied();
    assertFalse(applied.contains("d1") && applied.indexOf("d1") > applied.indexOf("d2"),
        "applied " + applied + ": d1 after d2, its client's later input (d1 " + d1 + ", d2 " + d2 + ")");
    assertTrue(RouterTesting.overtaken(d1), "d1 answered never applied: " + d1);
  }

  /** A key that [a, b] gives b and [b, c] gives c: a sends it to b, then (a leaving, c joined) owns c. */
  private static String keyFromBToC() {
    for (int k = 0; ; k++) {
      String key = "k" + k;
      if (Rendezvous.owner(key, List.of("a", "b")).equals("b") && Rendezvous.owner(key, List.of("b", "c")).equals("c")) {
        return key;
      }
    }
  }

  /**
   * a routes by [a, b] and sends the key's inputs to b; b and c route by [b, c] (a withdrew, c
   * joined; c owns the key, both releases arrived); a adopts [b, c] too: the key's owner is now c,
   * while what a sent is still open at b.
   */
  private List<Router> leaveViews() {
    Router a = router("a");
    Router b = router("b");
    Router c = router("c");
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    b.snapshot(Set.of("a", "b", "c"), Set.of("b", "c"), Set.of("a"));
    c.snapshot(Set.of("a", "b", "c"), Set.of("b", "c"), Set.of("a"));
    c.released("a", "b,c");
    c.released("b", "b,c");
    loop.runPending();
    return List.of(a, b, c);
  }

  private static final ReplyException NOT_DELIVERED =
      new ReplyException(ReplyFailure.NO_HANDLERS, ClientRouter.GONE, "no consumer at b");

  /**
   * The leave gives up x2 (502, may have been applied) while it is still on the wire to b, and
   * answers x1, which came back behind it, never applied. x3, the same client's next input, was
   * held at a behind them (b refused x1, so a does not follow the key's path through b and waits
   * for it). Routed again once the leave cleared the key's path, x3 went to the owner c directly:
   * c applied x3 (OK), then x2, which reached it later through b. x3 was never sent: it is answered
   * 503, never applied, and c applies x2 alone.
   */
  @Test
  void aLeaveGivingUpItsForwardsDoesNotSendPastThemWhatWaitedForTheirPath() throws Exception {
    List<Router> r = leaveViews();
    Router a = r.get(0);
    Router b = r.get(1);
    Router c = r.get(2);
    String key = keyFromBToC();
    Future<Object> x1 = enter(a, key, "x1", "x#1");
    Future<Object> x2 = enter(a, key, "x2", "x#2");
    assertEquals(List.of("x1", "x2"), bodies("a"));
    a.snapshot(Set.of("a", "b", "c"), Set.of("b", "c"), Set.of("a")); // a leaves: c owns the key
    loop.runPending();
    a.forwarded(sent("a").get(0), Future.failedFuture(NOT_DELIVERED)); // x1 came back; x2 still out
    loop.advanceMillis(Router.RETRY_MS);
    Future<Object> x3 = enter(a, key, "x3", "x#3");
    assertEquals(List.of("x1", "x2"), bodies("a"), "x1 waits behind x2, x3 behind the path through b");

    a.abandonForwards("leaving took too long");
    loop.runPending();
    assertTrue(x2.failed() && RouterTesting.overtaken(x1), "x2 502, x1 never applied: " + x2 + " " + x1);
    // What a sent after the leave gave up, straight to the owner.
    deliverAll(a, c, sent("a").subList(2, sent("a").size()));
    deliver(a, b, sent("a").get(1)); // x2, slow on the wire: b sends it on to c
    deliver(b, c, sent("b").get(0));
    loop.runPending();
    List<Object> applied = applied();
    assertAppliedInOrder(applied, "x2", "x3", "x2 " + x2 + ", x3 " + x3);
    assertEquals(List.of("x2"), applied);
    assertTrue(RouterTesting.closed(x3), "x3 never sent, answered 503: " + x3);
    RouterTesting.assertClean(a);
  }

  /**
   * As the first of these, with x3 arriving only after the leave gave up (its client's bridge stays
   * open while the node lingers): with the key's path cleared it went to the owner c directly, ahead
   * of x2 on the wire to b. It is answered 503 never applied; another client's input goes on.
   */
  @Test
  void anInputArrivingAfterALeaveGaveUpDoesNotPassItsClientsGivenUpInput() throws Exception {
    List<Router> r = leaveViews();
    Router a = r.get(0);
    Router b = r.get(1);
    Router c = r.get(2);
    String key = keyFromBToC();
    Future<Object> x1 = enter(a, key, "x1", "x#1");
    Future<Object> x2 = enter(a, key, "x2", "x#2");
    a.snapshot(Set.of("a", "b", "c"), Set.of("b", "c"), Set.of("a"));
    loop.runPending();
    a.abandonForwards("leaving took too long");
    loop.runPending();
    assertTrue(x1.failed() && x2.failed(), "given up, 502: " + x1 + " " + x2);
    Future<Object> x3 = enter(a, key, "x3", "x#3");
    Future<Object> y = enter(a, key, "y", "y#1");
    // What a sent after the leave gave up, straight to the owner.
    deliverAll(a, c, sent("a").subList(2, sent("a").size()));
    deliver(a, b, sent("a").get(0)); // x1 and x2, slow on the wire: b sends them on to c
    deliver(a, b, sent("a").get(1));
    deliverAll(b, c, sent("b"));
    loop.runPending();
    List<Object> applied = applied();
    assertAppliedInOrder(applied, "x2", "x3", "x2 " + x2 + ", x3 " + x3);
    assertTrue(RouterTesting.closed(x3), "x3 never sent, answered 503: " + x3);
    assertTrue(y.succeeded() && applied.contains("y"), "y, whose client has nothing out, goes on: " + y + " " + applied);
    RouterTesting.assertClean(a);
  }

  /**
   * As above, but nothing came back behind x1: x2 waits for the key's path through b (b refused
   * another client's y), and the leave routes nothing at once. The next snapshot routes what is
   * held, with the path gone: x2 went to c directly, ahead of x1 on the wire to b. x2 is answered
   * 503, never applied; y, whose client has nothing out, goes on.
   */
  @Test
  void aSnapshotAfterALeaveGaveUpItsForwardsDoesNotSendPastThemWhatWaitedForTheirPath() throws Exception {
    List<Router> r = leaveViews();
    Router a = r.get(0);
    Router b = r.get(1);
    Router c = r.get(2);
    String key = keyFromBToC();
    Future<Object> y = enter(a, key, "y", "y#1");
    Future<Object> x1 = enter(a, key, "x1", "x#1");
    a.snapshot(Set.of("a", "b", "c"), Set.of("b", "c"), Set.of("a"));
    loop.runPending();
    a.forwarded(sent("a").get(0), Future.failedFuture(NOT_DELIVERED)); // y came back: b unreachable
    Future<Object> x2 = enter(a, key, "x2", "x#2");
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("y", "x1"), bodies("a"), "y and x2 wait for the path through b");

    a.abandonForwards("leaving took too long");
    loop.runPending();
    assertTrue(x1.failed(), "x1 given up, 502: " + x1);
    a.snapshot(Set.of("a", "b", "c"), Set.of("b", "c"), Set.of("a"));
    loop.runPending();
    deliverAll(a, c, sent("a").subList(2, sent("a").size()));
    deliver(a, b, sent("a").get(1)); // x1, slow on the wire
    deliver(b, c, sent("b").get(0));
    loop.runPending();
    List<Object> applied = applied();
    assertAppliedInOrder(applied, "x1", "x2", "x1 " + x1 + ", x2 " + x2);
    assertEquals(List.of("y", "x1"), applied);
    assertTrue(y.succeeded(), "y " + y);
    assertTrue(RouterTesting.closed(x2), "x2 never sent, answered 503: " + x2);
    RouterTesting.assertClean(a);
  }
}
