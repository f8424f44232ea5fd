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
 * ADR 0115 at the sending node: an input that comes back not delivered while its client's later
 * inputs of the key, forwarded from here after it, are still out is not sent again until they are
 * answered; once one of them may have been applied, it never is. Node a alone, the test answering
 * its forwards to b (the same link, in order).
 */
class RouterBehindSentTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Router.Forward> fromA = new ArrayList<>();
  private Router a;
  private String key;

  private void start() {
    a = new Router(loop, "a", RouterTesting.recordingFerry(loop, CALL_MS, new ArrayList<>()), CALL_MS, MAX_HOLD_MS,
        RouterTesting.recording(fromA));
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
  }

  /** x1 and x2 of client c go to b; b hands x1 back. */
  private List<Future<Object>> x1BackWhileX2IsOut() throws Exception {
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    assertEquals(2, fromA.size(), "both forwarded to b");
    a.forwarded(fromA.get(0), RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS); // x1's pause is over
    return List.of(x1, x2);
  }

  /**
   * x2 then goes back too: x1 goes first, x2 after it. Before ADR 0115 x1 went again when its pause
   * ended, behind x2 on the link, and b could take x2 first once its mark of x1 had ended.
   */
  @Test
  void anInputThatCameBackWaitsForTheLaterInputsSentAfterIt() throws Exception {
    start();
    List<Future<Object>> x = x1BackWhileX2IsOut();
    assertEquals(2, fromA.size(), "x1 sent again while x2, sent after it, is still out");
    a.forwarded(fromA.get(1), RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("x1", "x2", "x1", "x2"), fromA.stream().map(f -> f.pending.input.body).toList());
    a.forwarded(fromA.get(2), Future.succeededFuture("x1"));
    a.forwarded(fromA.get(3), Future.succeededFuture("x2"));
    loop.runPending();
    assertTrue(x.get(0).succeeded() && x.get(1).succeeded(), "both served");
  }

  /** x2 was applied (b's mark of x1 had ended when it arrived): x1 never is, and says so (503). */
  @Test
  void anInputThatCameBackIsNeverAppliedOnceALaterOneSentAfterItMayHaveBeen() throws Exception {
    start();
    List<Future<Object>> x = x1BackWhileX2IsOut();
    a.forwarded(fromA.get(1), Future.succeededFuture("x2"));
    loop.advanceMillis(MAX_HOLD_MS);
    assertEquals(2, fromA.size(), "x1 sent again after x2 was applied");
    assertTrue(x.get(1).succeeded());
    assertTrue(x.get(0).failed() && x.get(0).cause() instanceof FerryException fe && fe.kind() == FerryError.CLOSED,
        "x1 answered " + x.get(0));
    assertEquals(0, a.heldCount());
  }

  /** x2 failed without being applied (here the owner's queue was full: 429): x1 goes on. */
  @Test
  void aLaterInputNeverAppliedLetsTheEarlierOneGoOn() throws Exception {
    start();
    List<Future<Object>> x = x1BackWhileX2IsOut();
    a.forwarded(fromA.get(1), Future.failedFuture(new ReplyException(ReplyFailure.RECIPIENT_FAILURE,
        FerryError.REJECTED.code(), "full")));
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(3, fromA.size(), "x1 sent again");
    a.forwarded(fromA.get(2), Future.succeededFuture("x1"));
    loop.runPending();
    assertTrue(x.get(0).succeeded(), "x1 served: " + x.get(0));
  }

  /**
   * x2's send failed here, no reply at all (the event bus refused it locally): never applied, as its
   * 503 says, so x1 is not given up for it but goes again (Router#mayHaveApplied).
   */
  @Test
  void aLaterInputWhoseSendFailedHereLetsTheEarlierOneGoOn() throws Exception {
    start();
    List<Future<Object>> x = x1BackWhileX2IsOut();
    a.forwarded(fromA.get(1), Future.failedFuture(new IllegalStateException("not sent: the event bus is closed")));
    loop.advanceMillis(Router.RETRY_MS);
    assertTrue(x.get(1).failed() && x.get(1).cause() instanceof FerryException fe && fe.kind() == FerryError.CLOSED,
        "x2 answered " + x.get(1));
    assertEquals(3, fromA.size(), "x1 sent again, x1 " + x.get(0));
    a.forwarded(fromA.get(2), Future.succeededFuture("x1"));
    loop.runPending();
    assertTrue(x.get(0).succeeded(), "x1 served: " + x.get(0));
  }

  /**
   * x1 waits for x2 and x3, sent after it; y, another client's input, waits behind x1. x2 is
   * applied, so x1 never is: y goes on at once, along the key's path to b where x3 is still out,
   * and does not wait for x3's answer (Router#forwarded: what waited behind an input given up goes
   * on).
   */
  @Test
  void whatWaitedBehindAnInputGivenUpGoesOnWhileTheKeysPathIsStillOpen() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    enter("x2", "c#2");
    enter("x3", "c#3");
    a.forwarded(fromA.get(0), RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS);
    Future<Object> y = enter("y", "d#1");
    assertEquals(3, fromA.size(), "y held behind x1");

    a.forwarded(fromA.get(1), Future.succeededFuture("x2"));
    loop.runPending();

    assertTrue(RouterTesting.overtaken(x1), "x1 answered " + x1);
    assertEquals(List.of("x1", "x2", "x3", "y"), fromA.stream().map(f -> f.pending.input.body).toList(),
        "y forwarded behind x3 before x3's answer");
    a.forwarded(fromA.get(2), Future.succeededFuture("x3"));
    a.forwarded(fromA.get(3), Future.succeededFuture("y"));
    loop.runPending();
    assertTrue(y.succeeded(), "y: " + y);
    assertEquals(0, loop.liveTimers(), "x1's hold timer outlived its hold");
  }

  /**
   * x1 waits for x2, sent after it; z, another client's input, is out at b too. x2 is refused
   * there, never applied: x1 goes again at once, without waiting for z's answer (Router#sentAfterAnswered).
   */
  @Test
  void anInputThatCameBackGoesOnOnceTheLaterOnesAreAnsweredWhileOthersAreOut() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    enter("x2", "c#2");
    enter("z", "d#1");
    a.forwarded(fromA.get(0), RouterTesting.returned());
    loop.advanceMillis(Router.RETRY_MS); // x1's pause is over: it waits for x2 only
    assertEquals(3, fromA.size());

    a.forwarded(fromA.get(1), Future.failedFuture(new ReplyException(ReplyFailure.RECIPIENT_FAILURE,
        FerryError.REJECTED.code(), "full")));
    loop.runPending();

    assertEquals(List.of("x1", "x2", "z", "x1"), fromA.stream().map(f -> f.pending.input.body).toList(),
        "x1 sent again before z's answer");
    a.forwarded(fromA.get(3), Future.succeededFuture("x1"));
    loop.runPending();
    assertTrue(x1.succeeded(), "x1: " + x1);
  }

  /** x2 is never answered: x1's wait ends within its hold bound from its arrival (503, never sent again). */
  @Test
  void theWaitEndsWithinTheHoldBound() throws Exception {
    start();
    long arrived = loop.nowMillis();
    List<Future<Object>> x = x1BackWhileX2IsOut();
    loop.advanceMillis(MAX_HOLD_MS - (loop.nowMillis() - arrived));
    assertTrue(x.get(0).failed(), "x1 still held at its bound");
    assertEquals(2, fromA.size());
    assertFalse(x.get(1).isComplete(), "x2 still out");
  }

  /**
   * A leave that gives up its forwards answers x2 502 (it may have been applied), so x1 never is;
   * what waited behind x1 goes on, and its forward, made while the leave gives up the others, is
   * answered like any other. Before, it was made and then forgotten with the forwards given up:
   * its answer found no open forward and its caller was never answered.
   */
  @Test
  void aForwardMadeWhileALeaveGivesUpItsForwardsIsStillAnswered() throws Exception {
    start();
    List<Future<Object>> x = x1BackWhileX2IsOut();
    Future<Object> y = enter("y", "d#1"); // another client's input of the key, held behind x1
    assertEquals(2, fromA.size());
    a.abandonForwards("leaving took too long");
    loop.runPending();
    assertTrue(x.get(1).failed() && x.get(0).failed(), "x2 502, x1 never applied");
    assertEquals(3, fromA.size(), "y goes on once x1 is answered");
    a.forwarded(fromA.get(2), Future.succeededFuture("y"));
    loop.runPending();
    assertTrue(y.succeeded(), "y answered: " + y);
  }

  /**
   * x2 is answered "may have applied" (its send timeout, here a reply timeout) while x1's hand-back
   * is still on its way (a slow wire: formal/Handoff.pml, "a 408 on a slow wire and a send
   * timeout"). x1 comes back after that: sent again, it could be applied after x2. Before ADR 0144
   * nothing waited behind x2 when it was answered, and x1 went again when it came back.
   */
  @Test
  void anInputThatComesBackAfterALaterOneSentAfterItMayHaveBeenAppliedIsNeverSentAgain() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    Future<Object> x2 = enter("x2", "c#2");
    assertEquals(2, fromA.size(), "both forwarded to b");
    a.forwarded(fromA.get(1), Future.failedFuture(new ReplyException(ReplyFailure.TIMEOUT, -1, "timed out")));
    assertTrue(x2.failed(), "x2 answered 502, may have applied");
    a.forwarded(fromA.get(0), RouterTesting.returned()); // x1's 408, slower than x2's send timeout
    loop.advanceMillis(MAX_HOLD_MS);
    assertEquals(2, fromA.size(), "x1 sent again after x2 may have been applied");
    assertTrue(x1.failed() && x1.cause() instanceof FerryException fe && fe.kind() == FerryError.CLOSED,
        "x1 answered " + x1);
    assertEquals(0, a.heldCount());

    // What waits behind x1 goes on: another client's input of the key.
    Future<Object> y = enter("y", "d#1");
    assertEquals(3, fromA.size(), "y forwarded");
    a.forwarded(fromA.get(2), Future.succeededFuture("y"));
    loop.runPending();
    assertTrue(y.succeeded(), "y answered: " + y);
  }

  /** The same with x1 refused by b (410, b leaving): b is also taken as unreachable, as for any 410. */
  @Test
  void anInputRefusedAfterALaterOneMayHaveBeenAppliedIsClosedAndItsTargetUnreachable() throws Exception {
    start();
    Future<Object> x1 = enter("x1", "c#1");
    enter("x2", "c#2");
    a.forwarded(fromA.get(1), Future.failedFuture(new ReplyException(ReplyFailure.TIMEOUT, -1, "timed out")));
    a.forwarded(fromA.get(0), Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, 410, "leaving")));
    loop.runPending();
    assertTrue(x1.failed() && x1.cause() instanceof FerryException fe && fe.kind() == FerryError.CLOSED,
        "x1 answered " + x1);
    assertTrue(a.describe().contains("unreachable=[b]"), a.describe());
  }

  private Future<Object> enter(String body, String origin) throws Exception {
    Future<Object> answer = RouterTesting.submit(a, key, body, 0, origin);
    loop.runPending();
    return answer;
  }
}
