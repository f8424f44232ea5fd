package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Hostile review of ADR 0115 at one router (node a, the test answering its forwards): paths on
 * which an input that came back waits behind what went on after it, and whether every such input
 * gets one answer and leaves nothing behind in the router's tables.
 */
class RouterBehindSentReviewTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Router.Forward> fromA = new ArrayList<>();
  private final List<List<Object>> calls = new ArrayList<>();
  private Router a;
  private String key;

  private void start(Set<String> members) {
    a = new Router(loop, "a", RouterTesting.recordingFerry(loop, CALL_MS, calls), CALL_MS, MAX_HOLD_MS,
        RouterTesting.recording(fromA));
    a.snapshot(members, members, Set.of());
    loop.runPending();
    key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
  }

  private void start() {
    start(Set.of("a", "b"));
  }

  private Future<Object> enter(String body, String origin) throws Exception {
    Future<Object> answer = RouterTesting.submit(a, key, body, 0, origin);
    loop.runPending();
    return answer;
  }

  private void answer(int i, Future<Object> outcome) {
    a.forwarded(fromA.get(i), outcome);
    loop.runPending();
  }

  private List<String> sent() {
    return fromA.stream().map(f -> (String) f.pending.input.body).toList();
  }

  private static Future<Object> failed(FerryError kind) {
    return Future.failedFuture(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, kind.code(), kind.name()));
  }

  private static boolean overtaken(Future<Object> f) {
    return RouterTesting.overtaken(f);
  }

  /** Nothing left in the ADR 0115 tables, nothing held, nothing open. */
  private void assertClean() throws Exception {
    RouterTesting.assertClean(a);
  }

  /** b leaves while x1 waits behind x2, open to b: x2 502 (maybe applied), x1 503 never applied. */
  @Test
  void theTargetLeavingWhileAnInputWaitsBehindItsLaterOne() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    answer(0, RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS);
    a.snapshot(Set.of("a"), Set.of("a"), Set.of());
    loop.runPending();
    assertTrue(x2.failed() && ((FerryException) x2.cause()).kind() == FerryError.FAILED, "x2 " + x2);
    assertTrue(overtaken(x1), "x1 " + x1);
    assertEquals(List.of(), calls, "nothing applied at a");
    assertClean();
  }

  /** x1's bound ends while x2 is out; x2 answered later: one answer each, tables empty. */
  @Test
  void aLaterAnswerAfterTheBoundEndedAnswersNothingTwice() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    answer(0, RouterTesting.returned());
    loop.advanceMillis(MAX_HOLD_MS);
    assertTrue(x1.failed(), "x1 " + x1);
    answer(1, Future.succeededFuture("x2"));
    assertTrue(x2.succeeded());
    assertEquals(2, fromA.size());
    assertClean();
  }

  /**
   * x1 waits behind x2 and x3; x2 is refused (429, never applied): x1 still waits for x3, which
   * then is applied: x1 never is.
   */
  @Test
  void oneLaterInputNeverAppliedDoesNotReleaseWhileAnotherIsOut() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    Future<Object> x3 = enter("x3", "c#3");
    answer(0, RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS);
    answer(1, failed(FerryError.REJECTED));
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("x1", "x2", "x3"), sent(), "x1 not sent again while x3 is out");
    answer(2, Future.succeededFuture("x3"));
    loop.advanceMillis(MAX_HOLD_MS);
    assertTrue(overtaken(x1), "x1 " + x1);
    assertTrue(x2.failed() && x3.succeeded());
    assertEquals(3, fromA.size());
    assertClean();
  }

  /**
   * x1 and x2 both come back, go again in order, x1 comes back a second time while x2 is out
   * again: it waits again; x2 is applied: x1 never is. Then x4 goes on.
   */
  @Test
  void comingBackTwiceWaitsBehindTheLaterInputSentAgain() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    answer(0, RouterTesting.returned());
    answer(1, RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS);
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("x1", "x2", "x1", "x2"), sent());
    answer(2, RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(4, fromA.size(), "x1 waits behind x2 sent again");
    Future<Object> x4 = enter("x4", "c#4");
    answer(3, Future.succeededFuture("x2"));
    loop.advanceMillis(Router.RETRY_MS);
    assertTrue(overtaken(x1), "x1 " + x1);
    assertTrue(x2.succeeded());
    assertEquals(List.of("x1", "x2", "x1", "x2", "x4"), sent(), "x4 goes on");
    answer(4, Future.succeededFuture("x4"));
    assertTrue(x4.succeeded());
    assertClean();
  }

  /**
   * While x1 waits behind x2 the key becomes a's (b still a member): x1 is not submitted here
   * while x2 may still be applied at b; x2 is applied: x1 never is, and nothing is applied here.
   */
  @Test
  void theKeyComingHereDoesNotLetTheInputThatCameBackPassTheLaterOne() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    answer(0, RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS);
    // b announces it leaves: a owns every key by the view, b still answers its forwards.
    a.snapshot(Set.of("a", "b"), Set.of("a"), Set.of("b"));
    loop.runPending();
    assertEquals(List.of("a"), a.view(), "the key is a's now");
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of(), calls, "x1 applied here while x2 is out at b: " + a.describe());
    answer(1, Future.succeededFuture("x2"));
    loop.advanceMillis(MAX_HOLD_MS);
    assertTrue(overtaken(x1), "x1 " + x1);
    assertEquals(List.of(), calls);
    assertClean();
  }

  /**
   * An input of another client held behind x1 while x1 waits for x2 that b never answers: it is
   * not held past its own bound.
   */
  @Test
  void anotherClientsInputHeldBehindIsAnsweredWithinItsBound() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    answer(0, RouterTesting.returned());
    Future<Object> y = enter("y", "d#1");
    long yArrived = loop.nowMillis();
    loop.advanceMillis(MAX_HOLD_MS - (loop.nowMillis() - yArrived) + 1);
    assertTrue(x1.failed(), "x1 " + x1);
    assertTrue(y.isComplete() || sent().contains("y"), "y held past its bound: " + a.describe());
    assertFalse(x2.isComplete());
  }

  /**
   * a in the middle: z forwarded x1 and x2 (client c) with an allowance; b hands x1 back; x1
   * waits behind x2 until z's allowance for it ends, then goes back to z; x2 is answered later.
   */
  @Test
  void inTheMiddleTheInputThatCameBackGoesBackToItsSenderAtItsAllowance() throws Exception {
    start(Set.of("a", "b", "z"));
    key = RouterTesting.keysOf("b", a.view(), 1).get(0);
    long allowance = MAX_HOLD_MS / 4;
    Future<Object> x1 = RouterTesting.forwarded(a, "z", key, "x1", "c#1", allowance);
    Future<Object> x2 = RouterTesting.forwarded(a, "z", key, "x2", "c#2", allowance);
    loop.runPending();
    assertEquals(List.of("x1", "x2"), sent());
    answer(0, RouterTesting.returned());
    loop.advanceMillis(allowance);
    RouterTesting.assertReturned(x1);
    assertEquals(2, fromA.size(), "x1 never sent again");
    answer(1, Future.succeededFuture("x2"));
    assertTrue(x2.succeeded());
    assertClean();
  }

  /**
   * a closes while x1 waits behind x2: x1 answered once; x2, still open, is given up when a closes
   * (502: b may apply it; its answer may never come back to a closed node, ADR 0115), and its late
   * answer answers nothing twice.
   */
  @Test
  void closingWhileAnInputWaitsAnswersItOnce() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    answer(0, RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS);
    a.close();
    loop.runPending();
    assertTrue(x1.failed(), "x1 " + x1);
    assertTrue(x2.failed() && x2.cause().getMessage().startsWith(Router.GIVEN_UP), "x2 " + x2);
    answer(1, Future.succeededFuture("x2"));
    assertTrue(x2.failed(), "answered once");
    assertClean();
  }

  /** A leave that gives up its forwards while x1 waits: x1 answered once (503), tables empty. */
  @Test
  void abandoningForwardsWhileAnInputWaitsLeavesNothingBehind() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    Future<Object> x3 = enter("x3", "c#3");
    answer(0, RouterTesting.returned());
    answer(1, RouterTesting.returned());
    a.abandonForwards("leaving took too long");
    loop.advanceMillis(MAX_HOLD_MS);
    assertTrue(overtaken(x1) && overtaken(x2), x1 + " " + x2);
    assertTrue(x3.failed());
    assertEquals(3, fromA.size());
    assertClean();
  }

  /**
   * b leaves while x1 waits behind x2 and another client's y waits behind x1. x1 answered 503 lets
   * y go on: it must not be forwarded to b, which is no member any more. It is: overtaken's flush
   * runs inside failForwardsToNonMembers, before the snapshot adopts the view without b, so y is
   * routed by the old view (and the path to b, not cleared yet) and forwarded to b. y then waits on
   * a dead link, keeps the key's path to b open (a's later inputs of the key wait for it), and the
   * next snapshot answers it 502 "may have applied", though a owns the key and could serve it.
   */
  @Test
  void whatTheOvertakenInputLetsGoIsNotSentToTheNodeThatLeft() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    answer(0, RouterTesting.returned());
    Future<Object> y = enter("y", "d#1");
    assertEquals(2, fromA.size(), "y held behind x1");
    a.snapshot(Set.of("a"), Set.of("a"), Set.of());
    loop.runPending();
    assertTrue(overtaken(x1), "x1 " + x1);
    List<String> toB = fromA.subList(2, fromA.size()).stream().filter(f -> f.target.equals("b"))
        .map(f -> (String) f.pending.input.body).toList();
    // With the assertion below it in mind: the next snapshot answers y 502 ("the key's owner b left
    // the cluster before answering, it may have applied the input") though a owns the key by then.
    a.snapshot(Set.of("a"), Set.of("a"), Set.of());
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of(), toB, "forwarded to b after b left the members");
    assertTrue(y.succeeded(), "y applied here, a owns the key now: " + y + " " + a.describe());
  }

  /**
   * The key moved from b to c while x2 is out at b and x1, come back, waits behind it; another
   * client's y waits behind x1. x2 is applied at b: x1 503, y goes on. Nothing of the key is out
   * at b any more, so y goes to its owner c, not through b. It goes through b: in forwarded(),
   * overtaken(f) flushes the key before clearPath(f) drops x2's forward from the key's path, so y
   * follows a path with nothing on it, through a node that is leaving, and opens that path again
   * for the key's later inputs. Order holds (b passes it on); it costs a hop, and if b's leave
   * gives up its forwards, y's 502 "may have applied".
   */
  @Test
  void whatTheOvertakenInputLetsGoGoesToTheOwnerNotAlongAClosedPath() throws Exception {
    start(Set.of("a", "b", "c"));
    key = null;
    for (int k = 0; key == null; k++) {
      if (Rendezvous.owner("k" + k, List.of("a", "b", "c")).equals("b") && Rendezvous.owner("k" + k, List.of("a", "c")).equals("c")) {
        key = "k" + k;
      }
    }
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    answer(0, RouterTesting.returned());
    Future<Object> y = enter("y", "d#1");
    a.snapshot(Set.of("a", "b", "c"), Set.of("a", "c"), Set.of("b"));
    loop.runPending();
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(2, fromA.size(), "x1 and y held: " + a.describe());
    answer(1, Future.succeededFuture("x2"));
    assertTrue(overtaken(x1), "x1 " + x1);
    assertEquals(3, fromA.size(), "y sent on");
    assertEquals("c", fromA.get(2).target, "y sent through b, where nothing of the key is open: " + a.describe());
    assertFalse(y.isComplete());
  }

  /**
   * x2's forward fails with the event bus's generic ERROR (Vert.x 5 raises it only when the target
   * node cannot decode the message, before any consumer sees it). a answers x2 503 "never applied";
   * it must read that answer the same way for x1: x2 never applied, so x1 goes on rather than being
   * given up as overtaken. Before the fix x2 was answered never applied and yet counted as maybe
   * applied, and a node in the middle passed that 503 back to a sender that read it as never applied.
   */
  @Test
  void aGenericSendErrorIsNotBothNeverAppliedAndMaybeApplied() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    answer(0, RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS);
    answer(1, Future.failedFuture(new ReplyException(ReplyFailure.ERROR, -1, "cannot decode")));
    loop.advanceMillis(Router.RETRY_MS);
    assertTrue(RouterTesting.closed(x2), "x2 answered never applied: " + x2);
    assertFalse(overtaken(x1), "x1 given up behind an x2 answered never applied: " + x1);
    assertEquals(List.of("x1", "x2", "x1"), sent(), "x1 sent again once x2 is answered");
    answer(2, Future.succeededFuture("x1"));
    assertTrue(x1.succeeded(), "x1 " + x1);
    assertClean();
  }

  /**
   * As above, with y sent here by node z, and z leaving in the same snapshot as b: y is held from a
   * node that left, to be answered never applied and not sent on (ADR 0110). overtaken's flush runs
   * before the snapshot marks z departed, so y is forwarded (to b, gone too) instead.
   */
  @Test
  void whatTheOvertakenInputLetsGoIsNotSentOnForASenderThatLeft() throws Exception {
    start(Set.of("a", "b", "z"));
    key = RouterTesting.keysOf("b", List.of("a", "b", "z"), 1).get(0);
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    answer(0, RouterTesting.returned());
    Future<Object> y = RouterTesting.forwarded(a, "z", key, "y", "d#1", MAX_HOLD_MS / 2);
    loop.runPending();
    assertEquals(2, fromA.size(), "y held behind x1");
    a.snapshot(Set.of("a"), Set.of("a"), Set.of());
    loop.runPending();
    assertTrue(overtaken(x1), "x1 " + x1);
    assertEquals(2, fromA.size(), "y sent on though its sender z left: " + sent());
    assertTrue(y.failed(), "y answered never applied: " + y);
  }
}
