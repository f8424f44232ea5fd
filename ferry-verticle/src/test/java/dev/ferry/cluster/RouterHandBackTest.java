package dev.ferry.cluster;

import static dev.ferry.cluster.RouterTesting.assertReturned;
import static dev.ferry.cluster.RouterTesting.input;
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

  /** Calls of {@link #bWithOpenCalls}'s ferry, open until a test completes them, in call order. */
  private final List<Promise<List<Object>>> open = new ArrayList<>();

  /**
   * Node b in view {a, b, n}, the only one announced (b owns every key), whose ferry's calls stay
   * open ({@link #open}); n's keys move to n once it is announced.
   */
  private Router bWithOpenCalls() {
    PerKeyFerry<String, Submission, List<Object>, Object> ferry = RouterTesting.ferryWithOpenCalls(loop, CALL_MS, calls, open);
    Router b = new Router(loop, "b", ferry, CALL_MS, MAX_HOLD_MS, RouterTesting.recording(forwards));
    b.snapshot(Set.of("a", "b", "n"), Set.of("b"), Set.of());
    loop.runPending();
    return b;
  }

  /**
   * A hand-back takes along what came later from the same node, which may be the key's first held
   * input (a hand-off goes first): what waited behind it must go on then. b holds y (from a, at the
   * hop limit: a pause) and x (a hand-off from a, later, also at the hop limit, ahead of y), and a
   * caller's z behind them. y's allowance ends first: y goes back and takes x along. Before, z
   * stayed held with nothing left to route it until its bound (503), as y was neither first nor
   * older than z: `rawSendersForgingOrigins`, views late, seeds 14377 and 22760.
   */
  @Test
  void whatWaitedBehindAnInputTakenAlongByAHandBackGoesOn() throws Exception {
    Router b = router("b");
    b.snapshot(Set.of("a", "b", "c"), Set.of("b", "c"), Set.of());
    loop.runPending();
    String key = keysOf("c", List.of("b", "c"), 1).get(0);
    Promise<Object> y = Promise.promise();
    b.accept(input(key, "y"), Router.MAX_HOPS, false, "a", null, 50, y);
    Promise<Object> x = Promise.promise();
    b.accept(input(key, "x"), Router.MAX_HOPS, true, "a", null, 1_000, x);
    Future<Object> z = RouterTesting.submit(b, key, "z", 0);
    loop.runPending();
    assertEquals(List.of(), bodies(), "all three held");

    loop.advanceMillis(50); // y's allowance ends before any pause
    assertReturned(y.future());
    assertReturned(x.future());
    assertEquals(List.of("z"), bodies(), "z goes on to c once nothing is held before it");
    assertTrue(!z.isComplete(), "z waits for c's answer, not its bound");
    assertEquals(0, loop.liveTimers(), "the hold timer of x, taken along, outlived its hold");
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

  /**
   * An input forwarded here waits in this node's ferry when its key moves: its hand-off to the new
   * owner is held there no longer than the node that forwarded it here allows, and once that is
   * over it goes back to that node unapplied, as it would from a hold here (ADR 0109): that node
   * may give it up (502) and send its next input to the new owner directly, which must not be
   * passed by this one afterwards. Before ADR 0112 the hand-off forgot its sender's allowance: it
   * was held and sent on here, and held further on, as if it had entered here.
   */
  @Test
  void aHandOffKeepsItsSendersAllowanceAndGoesBackUnappliedOnceItIsOver() throws Exception {
    Router b = bWithOpenCalls();
    String key = keysOf("n", List.of("b", "n"), 1).get(0);
    long start = loop.nowMillis();
    Future<Object> x0 = forwarded(b, key, "x0", "c#1");
    Future<Object> x1 = forwarded(b, key, "x1", "c#2"); // a waits 2,000 ms for it: b may hold it 1,000
    loop.runPending();
    assertEquals(List.of(List.of("x0")), calls, "x1 waits in b's ferry behind x0's call");

    loop.advanceMillis(100);
    b.snapshot(Set.of("a", "b", "n"), Set.of("b", "n"), Set.of()); // n joins and owns the key
    loop.runPending();
    open.get(0).complete(List.of("done")); // x0's call ends: b hands x1 over to n
    loop.runPending();
    assertTrue(x0.succeeded());
    assertEquals(List.of("x1"), bodies());

    // n cannot send it on (say, it waits for another node's release): it hands it back each time
    // b's allowance runs out, and b sends it again after a pause, while a's allowance lasts.
    for (int sent = 0; forwards.size() > sent && sent < 50; ) {
      Router.Forward f = forwards.get(sent++);
      assertTrue(loop.nowMillis() - start < 1_000, "sent to n at " + (loop.nowMillis() - start)
          + " ms, after a's allowance (1,000 ms) ran out");
      loop.advanceMillis(f.holdMs);
      b.forwarded(f, returned());
      loop.advanceMillis(Router.RETRY_MS);
    }
    loop.advanceMillis(MAX_HOLD_MS);
    assertTrue(x1.failed(), "answered");
    ReplyException re = (ReplyException) x1.cause();
    assertEquals(ReplyFailure.NO_HANDLERS, re.failureType(), "handed back to a, never applied: " + re);
    assertEquals(Router.RETURNED, re.failureCode());
    assertEquals(List.of(List.of("x0")), calls, "x1 never applied at b");
  }

  /**
   * As above, with x1's allowance over by the time its key is handed off: it goes back to a at
   * once, and x2, which a sent after it, goes back with it instead of on to the new owner, where it
   * would be applied before a sends x1 again.
   */
  @Test
  void aHandOffTooLateToSendOnGoesBackWithWhatCameAfterItFromTheSameNode() throws Exception {
    Router b = bWithOpenCalls();
    String key = keysOf("n", List.of("b", "n"), 1).get(0);
    forwarded(b, key, "x0", "c#1", 1_000);
    Future<Object> x1 = forwarded(b, key, "x1", "c#2", 100);
    Future<Object> x2 = forwarded(b, key, "x2", "c#3", 1_000);
    loop.runPending();

    loop.advanceMillis(200); // past x1's allowance
    b.snapshot(Set.of("a", "b", "n"), Set.of("b", "n"), Set.of());
    loop.runPending();
    open.get(0).complete(List.of("done"));
    loop.advanceMillis(1);
    assertEquals(List.of(), bodies(), "nothing goes to n ahead of x1");
    assertReturned(x1);
    assertReturned(x2);
    assertEquals(List.of(List.of("x0")), calls);
  }

  /**
   * b hands x1 back to a; a had already sent x2, the same client's next input of the key, along the
   * same way, and it reaches b after the hand-back, before a sends x1 again. b can send x2 on by
   * then: applied, x2 would pass x1 (finding 1 of ADR 0112). b goes by the inputs' origin (the
   * client and its order, ADR 0098): having handed back c#1, it hands back c's later inputs of the
   * key until c#1 comes again or its sender's allowance for it is over.
   */
  @Test
  void anInputThatReachesTheNodeAfterItHandedBackItsSendersEarlierOneGoesBackToo() throws Exception {
    Router b = router("b"); // no view yet: b holds what it gets
    String key = "k1";
    Future<Object> x1 = forwarded(b, key, "x1", "c#1");
    loop.advanceMillis(1_000);
    assertReturned(x1);

    Future<Object> x2 = forwarded(b, key, "x2", "c#2"); // sent before a saw x1 come back
    b.snapshot(Set.of("b"), Set.of("b"), Set.of()); // b owns the key now, nothing holds it
    loop.advanceMillis(10);
    assertReturned(x2);
    assertEquals(List.of(), calls, "x2 is not applied ahead of x1");

    // a sends them again, in its order (x2 was held there behind x1).
    Future<Object> again1 = forwarded(b, key, "x1", "c#1");
    Future<Object> again2 = forwarded(b, key, "x2", "c#2");
    loop.advanceMillis(10);
    assertTrue(again1.succeeded() && again2.succeeded());
    assertEquals(List.of("x1", "x2"), calls.stream().flatMap(List::stream).toList());
  }

  /**
   * Marks are per client: b handed back c's x1 and e's y1; x1 comes again and ends c's mark, but e's
   * stays, and e's y2, sent before a saw y1 come back, goes back too.
   */
  @Test
  void anInputComingAgainEndsOnlyItsOwnClientsMark() throws Exception {
    Router b = router("b"); // no view yet: b holds what it gets
    String key = "k1";
    Future<Object> x1 = forwarded(b, key, "x1", "c#1");
    Future<Object> y1 = forwarded(b, key, "y1", "e#1");
    loop.advanceMillis(1_000);
    assertReturned(x1);
    assertReturned(y1);
    b.snapshot(Set.of("b"), Set.of("b"), Set.of());

    Future<Object> again1 = forwarded(b, key, "x1", "c#1");
    loop.advanceMillis(10);
    assertTrue(again1.succeeded(), "x1: " + again1);
    Future<Object> y2 = forwarded(b, key, "y2", "e#2");
    loop.advanceMillis(10);

    assertReturned(y2);
    assertEquals(List.of("x1"), calls.stream().flatMap(List::stream).toList(), "y2 is not applied ahead of y1");
  }

  /**
   * Sent again, x1 and x2 come in a's order: x2, handed back itself, then goes on. But when x1 goes
   * back once more before x2 arrives again, x2 was sent before a saw that, and goes back again.
   */
  @Test
  void anInputSentAgainBeforeItsSendersEarlierOneWentBackOnceMoreGoesBackAgain() throws Exception {
    Router b = router("b");
    String key = "k1";
    Future<Object> x1 = forwarded(b, key, "x1", "c#1");
    Future<Object> x2 = forwarded(b, key, "x2", "c#2");
    loop.advanceMillis(1_000);
    assertReturned(x1);
    assertReturned(x2);

    Future<Object> again1 = forwarded(b, key, "x1", "c#1", 10); // a allows 20 ms this time
    loop.advanceMillis(10);
    assertReturned(again1);
    b.snapshot(Set.of("b"), Set.of("b"), Set.of());
    Future<Object> again2 = forwarded(b, key, "x2", "c#2"); // sent by a right after x1
    loop.advanceMillis(10);
    assertReturned(again2);
    assertEquals(List.of(), calls, "x2 is not applied ahead of x1");

    forwarded(b, key, "x1", "c#1");
    forwarded(b, key, "x2", "c#2");
    loop.advanceMillis(10);
    assertEquals(List.of("x1", "x2"), calls.stream().flatMap(List::stream).toList());
  }

  /**
   * What is held here of the same client's later inputs of the key goes back with the input handed
   * back, also when another node sent it: kept, it would go before that input once it comes again
   * (it arrived here first).
   */
  @Test
  void aHandBackTakesAlongTheSameClientsLaterInputsFromOtherNodes() throws Exception {
    Router b = router("b");
    String key = "k1";
    b.accept(input(key, "y1"), 1, false, "d", "e#1", 2_000, Promise.promise()); // another client's, first
    Future<Object> x1 = forwarded(b, key, "x1", "c#1");
    Promise<Object> x3 = Promise.promise();
    b.accept(input(key, "x3"), 1, false, "d", "c#3", 2_000, x3); // d allows more time
    loop.advanceMillis(1_000);
    assertReturned(x1);
    assertReturned(x3.future());
  }

  /**
   * The mark ends with the allowance: if a sent x1 elsewhere (its view moved on) and only its
   * later inputs come to b, they are taken once a's allowance for x1 is over.
   */
  @Test
  void aHandBackHoldsUpItsSendersLaterInputsNoLongerThanItsAllowance() throws Exception {
    Router b = router("b");
    String key = "k1";
    Future<Object> x1 = forwarded(b, key, "x1", "c#1"); // a waits 2,000 ms for it
    loop.advanceMillis(1_000);
    assertReturned(x1);
    b.snapshot(Set.of("b"), Set.of("b"), Set.of());
    loop.advanceMillis(999);
    assertReturned(forwarded(b, key, "x2", "c#2"));

    loop.advanceMillis(1);
    Future<Object> x2 = forwarded(b, key, "x2", "c#2");
    loop.advanceMillis(10);
    assertTrue(x2.succeeded(), () -> "refused: " + x2.cause());
  }

  /** Input {@code body} forwarded to {@code r} by a, which waits 2,000 ms for it. */
  private static Future<Object> forwarded(Router r, String key, String body, String origin) throws Exception {
    return forwarded(r, key, body, origin, 1_000);
  }

  private static Future<Object> forwarded(Router r, String key, String body, String origin, long holdMs)
      throws Exception {
    return RouterTesting.forwarded(r, "a", key, body, origin, holdMs);
  }

  private List<Object> bodies() {
    return forwards.stream().map(f -> (Object) f.pending.input.body).toList();
  }
}
