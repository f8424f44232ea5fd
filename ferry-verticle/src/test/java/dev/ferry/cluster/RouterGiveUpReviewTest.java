package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Hostile review of the leave give-up wait (ADR 0115, last section): a forward answered "given up
 * by a leave" stays open at its sender ({@code Router#keepGivenUp}) and a routing client that gets
 * such a 502 waits what it says ({@code ClientRouter}, {@link Router#givenUpForMs}). One router or
 * one client at a time, driven by hand on a virtual loop; the test answers every forward and send.
 * The three tests whose javadoc begins "Defect" found one here; each failed before its fix.
 */
class RouterGiveUpReviewTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private static final Set<String> MEMBERS = Set.of("a", "b");
  private final VirtualLoop loop = new VirtualLoop();
  private final List<List<Object>> calls = new ArrayList<>();
  private final List<Router.Forward> sent = new ArrayList<>();

  /** Router a in view [a, b]; the keys used here are b's, so a forwards them to b (recorded). */
  private Router entry() {
    Router a = new Router(loop, "a", RouterTesting.recordingFerry(loop, CALL_MS, calls), CALL_MS, MAX_HOLD_MS,
        RouterTesting.recording(sent));
    a.snapshot(MEMBERS, MEMBERS, Set.of());
    loop.runPending();
    return a;
  }

  private static String keyOfB() {
    return RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
  }

  /** The 502 of a forward given up by a leave, as our own nodes write it (and relay it unchanged). */
  private static ReplyException givenUp(long forMs) {
    return new ReplyException(ReplyFailure.RECIPIENT_FAILURE, FerryError.FAILED.code(),
        Router.GIVEN_UP + " (may still be applied for " + forMs + " ms): this node left the cluster before the key's"
            + " owner answered (it may have applied the input)");
  }

  /**
   * The 502 an owner's ferry replies when its downstream fails with {@code text}: Driver prefixes
   * "the batch call failed: ", FerryVerticle/ClusterNode reply the FerryException's code and text.
   */
  private static ReplyException downstreamFailed(String text) {
    return new ReplyException(ReplyFailure.RECIPIENT_FAILURE, FerryError.FAILED.code(), "the batch call failed: " + text);
  }

  private void answer(Router r, Router.Forward f, Throwable failure) {
    r.forwarded(f, Future.failedFuture(failure));
    loop.runPending();
  }

  private Future<Object> enter(Router r, String key, String body, String origin) throws Exception {
    Future<Object> answer = RouterTesting.submit(r, key, body, 0, origin);
    loop.runPending();
    return answer;
  }

  /**
   * x1 of client x enters a and its forward is answered with a leave's give-up naming the hold it
   * allowed; returns that forward.
   */
  private Router.Forward x1GivenUp(Router a, String key) throws Exception {
    enter(a, key, "x1", "x#1");
    Router.Forward f1 = sent.get(0);
    answer(a, f1, givenUp(f1.holdMs));
    return f1;
  }

  /** When the holds {@code f} allowed end (loop time): sent at + its hold. */
  private static long holdEnd(Router.Forward f) {
    return f.sentAt + f.holdMs * 1_000_000;
  }

  private static Object field(Object o, String name) throws ReflectiveOperationException {
    java.lang.reflect.Field f = o.getClass().getDeclaredField(name);
    f.setAccessible(true);
    return f.get(o);
  }

  private static void assertNothingKept(Router r) throws ReflectiveOperationException {
    RouterTesting.assertClean(r);
    assertEquals(Map.of(), field(r, "givenUpOpen"), "givenUpOpen left behind");
  }

  private static boolean failedWith(Future<Object> f, FerryError kind) {
    return f.failed() && f.cause() instanceof FerryException fe && fe.kind() == kind;
  }

  // ------------------------------------------------------------------------------- router: defects

  /**
   * Defect (fixed): the owner's downstream failed, and its text (any text a downstream or its error echoes,
   * a caller's body included) happens to contain the give-up's words. The owner's reply is
   * "the batch call failed: ..." and never a leave's give-up, yet {@code keepGivenUp} reads it as
   * one ({@link Router#givenUpForMs} looks for the words anywhere in the text): the entry node keeps
   * x1's forward open and holds the client's next input x2 for the hold x1's forward allowed (half
   * a hold bound here, about {@value #MAX_HOLD_MS} / 2 ms) instead of sending it on. Bounded, but
   * a downstream's own text decides how routing waits. Fix: recognise a give-up only when the text
   * <em>begins</em> with the give-up's words ({@code m.startsWith(GIVEN_UP_FOR)} in givenUpForMs:
   * our nodes write it first and relay it unchanged, while the ferry prefixes every downstream text);
   * a separate failure code or header would be cleaner still.
   */
  @Test
  void aDownstreamErrorTextIsNotAGiveUpAtTheEntryNode() throws Exception {
    Router a = entry();
    String key = keyOfB();
    Future<Object> x1 = enter(a, key, "x1", "x#1");
    assertEquals(1, sent.size());
    answer(a, sent.get(0), downstreamFailed("upstream said: given up by a leave (may still be applied for 5 ms): boom"));
    assertTrue(x1.failed(), "x1 answered the owner's 502");

    Future<Object> x2 = enter(a, key, "x2", "x#2");
    assertEquals(2, sent.size(), "x2 forwarded at once: x1 was answered by the owner itself, nothing of it is on its"
        + " way any more (x2 " + x2 + ", held " + a.heldCount() + ")");
  }

  // ------------------------------------------------------------------------------- router: what holds

  /**
   * A genuine give-up: the client's next input x2 waits at a until x1's forward's hold is over
   * (sent-at + ferry-hold-ms), not a moment longer, then goes to the owner. Another client's input
   * of the key is not held for x1 (y1 goes at once); one that arrives while x2 is held (y2) waits
   * behind x2 as behind any held input of the key (behindHeld: per-key order here), and goes right
   * after it. Nothing stays behind in any table or as a timer afterwards.
   */
  @Test
  void aGivenUpForwardHoldsOnlyItsClientsLaterInputsAndOnlyUntilItsHoldEnds() throws Exception {
    Router a = entry();
    String key = keyOfB();
    int timersBefore = loop.liveTimers();
    Future<Object> x1 = enter(a, key, "x1", "x#1");
    Router.Forward f1 = sent.get(0);
    long until = holdEnd(f1);
    loop.advanceMillis(10);
    answer(a, f1, givenUp(f1.holdMs - 10));
    assertTrue(x1.failed() && ((ReplyException) x1.cause()).getMessage().startsWith(Router.GIVEN_UP),
        "x1's 502 relayed unchanged: " + x1.cause());

    Future<Object> y1 = enter(a, key, "y1", "y#1");
    assertEquals(List.of("x1", "y1"), bodies(), "y1 (another client) forwarded at once");
    Future<Object> x2 = enter(a, key, "x2", "x#2");
    Future<Object> y2 = enter(a, key, "y2", "y#2");
    assertEquals(List.of("x1", "y1"), bodies(), "x2 held behind x1, y2 behind x2");
    assertEquals(2, a.heldCount());
    assertEquals(0, a.openForwards() - 1, "the kept forward is not counted open (y1 is)");
    assertEquals(1, a.givenUpKept(), "but counted as kept");
    assertTrue(a.describe().contains("held={" + key + "=2}"), a.describe());

    loop.advance(until - loop.nanoTime() - 1);
    assertEquals(2, sent.size(), "x2 still held 1 ns before x1's hold ends");
    loop.advance(1);
    loop.runPending();
    assertEquals(List.of("x1", "y1", "x2", "y2"), bodies(), "x2, then y2, forwarded once x1's hold is over");
    for (int i = 1; i < 4; i++) {
      a.forwarded(sent.get(i), Future.succeededFuture(sent.get(i).pending.input.body + " ok"));
    }
    loop.runPending();
    assertEquals("x2 ok", x2.result());
    assertEquals("y1 ok", y1.result());
    assertEquals("y2 ok", y2.result());
    assertNothingKept(a);
    assertEquals(0, a.givenUpKept());
    assertEquals(timersBefore, loop.liveTimers(), "no timer left behind");
  }

  private List<Object> bodies() {
    return sent.stream().map(f -> (Object) f.pending.input.body).toList();
  }

  /**
   * Two given-up forwards of the same client and key (x1, then x2 behind it on the same path,
   * allowing a hold that ends later): x3 waits for both, i.e. until the later one's hold is over,
   * not only the first; then the tables are empty.
   */
  @Test
  void twoGiveUpsOfOneClientAndKeyHoldItsNextInputUntilBothHoldsEnd() throws Exception {
    Router a = entry();
    String key = keyOfB();
    enter(a, key, "x1", "x#1");
    loop.advanceMillis(100);
    enter(a, key, "x2", "x#2");
    assertEquals(2, sent.size(), "x2 follows x1 to b");
    Router.Forward f1 = sent.get(0);
    Router.Forward f2 = sent.get(1);
    long until1 = holdEnd(f1);
    long until2 = f2.sentAt + f2.holdMs * 1_000_000;
    assertTrue(until2 > until1, "x2's hold ends later");
    answer(a, f1, givenUp(1));
    answer(a, f2, givenUp(1));
    Future<Object> x3 = enter(a, key, "x3", "x#3");
    assertEquals(2, sent.size(), "x3 held");
    loop.advance(until1 - loop.nanoTime());
    loop.runPending();
    assertEquals(2, sent.size(), "x3 still held: x2 may still be applied");
    loop.advance(until2 - loop.nanoTime());
    loop.runPending();
    assertEquals(3, sent.size(), "x3 forwarded once both holds are over");
    a.forwarded(sent.get(2), Future.succeededFuture("x3 ok"));
    loop.runPending();
    assertEquals("x3 ok", x3.result());
    assertNothingKept(a);
  }

  /**
   * A peer's crafted give-up with a huge number: the router does not take the number, only its own
   * forward's bound (sent-at + the hold it allowed), so its client's next input goes then.
   */
  @Test
  void aRouterKeepsAGivenUpForwardOnlyForItsOwnBoundWhateverTheNumberSays() throws Exception {
    Router a = entry();
    String key = keyOfB();
    enter(a, key, "x1", "x#1");
    Router.Forward f1 = sent.get(0);
    long until = holdEnd(f1);
    answer(a, f1, givenUp(999_999_999_999L));
    enter(a, key, "x2", "x#2");
    assertEquals(1, sent.size());
    loop.advance(until - loop.nanoTime());
    loop.runPending();
    assertEquals(2, sent.size(), "x2 forwarded at a's own bound");
    a.forwarded(sent.get(1), Future.succeededFuture("ok"));
    loop.runPending();
    assertNothingKept(a);
  }

  /** An input held behind a kept forward is answered at its own deadline (504, never sent), once. */
  @Test
  void anInputHeldBehindAKeptForwardIsAnsweredAtItsOwnDeadline() throws Exception {
    Router a = entry();
    String key = keyOfB();
    Router.Forward f1 = x1GivenUp(a, key);
    Future<Object> x2 = RouterTesting.submit(a, key, "x2", 50, "x#2");
    loop.runPending();
    loop.advanceMillis(49);
    assertFalse(x2.isComplete());
    loop.advanceMillis(1);
    assertTrue(failedWith(x2, FerryError.TIMEOUT), "x2 504 at its deadline: " + x2);
    loop.advanceMillis(f1.holdMs);
    assertEquals(1, sent.size(), "x2 never sent");
    assertNothingKept(a);
  }

  /**
   * close() while a kept forward's timer is pending: what it holds is answered CLOSED, once; the
   * timer then fires on a closed router without sending or answering anything, and leaves nothing.
   */
  @Test
  void closeWhileAKeptForwardIsPendingAnswersWhatItHoldsOnce() throws Exception {
    Router a = entry();
    String key = keyOfB();
    Router.Forward f1 = x1GivenUp(a, key);
    Future<Object> x2 = enter(a, key, "x2", "x#2");
    a.close();
    loop.runPending();
    assertTrue(failedWith(x2, FerryError.CLOSED), "x2 answered at close: " + x2);
    loop.advanceMillis(f1.holdMs + 1); // the kept forward's timer fires; a second answer would assert
    assertEquals(1, sent.size());
    assertNothingKept(a);
  }

  /**
   * The key moves to the entry node itself while x1's forward is kept: x2 is not applied by a's
   * ferry before x1's hold is over (x1 may still reach a from where it is held), only after.
   */
  @Test
  void aKeptForwardHoldsItsClientsNextInputEvenWhenTheKeyBecomesTheEntryNodes() throws Exception {
    Router a = entry();
    String key = keyOfB();
    Router.Forward f1 = x1GivenUp(a, key);
    long until = holdEnd(f1);
    a.snapshot(Set.of("a"), Set.of("a"), Set.of()); // b left: a owns every key
    loop.runPending();
    Future<Object> x2 = enter(a, key, "x2", "x#2");
    loop.advance(until - loop.nanoTime() - 1);
    assertEquals(List.of(), calls, "nothing applied at a while x1 may still come");
    loop.advance(1);
    loop.advanceMillis(Router.RETRY_MS + CALL_MS);
    assertEquals(List.of(List.of("x2")), calls, "x2 applied at a after x1's hold ended");
    assertEquals("x2", x2.result());
    assertNothingKept(a);
  }

  /**
   * The given-up input itself comes back to the entry node while its forward is kept there (the
   * key moved to a; c, where x1 was held, passes it on to a): x1 is not held behind x2, which waits
   * for x1's forward (no two inputs wait for each other), and is applied first; x2 after the hold.
   */
  @Test
  void theGivenUpInputItselfArrivingAtTheEntryNodeIsNotHeldBehindTheInputWaitingForIt() throws Exception {
    Router a = entry();
    String key = keyOfB();
    Future<Object> x1 = enter(a, key, "x1", "x#1");
    Router.Forward f1 = sent.get(0);
    long until = holdEnd(f1);
    answer(a, f1, givenUp(f1.holdMs));
    // b withdrew (still a member while it lingers: what went through it is not dropped); a owns the key
    a.snapshot(Set.of("a", "b", "c"), Set.of("a"), Set.of());
    loop.runPending();
    Future<Object> x2 = enter(a, key, "x2", "x#2");
    assertEquals(1, a.heldCount(), "x2 held behind x1's kept forward");

    Promise<Object> again = Promise.promise(); // x1, as c passes it on to a
    a.accept(RouterTesting.input(key, "x1"), 3, false, "a,b,c", "x#1", f1.holdMs / 4, again);
    loop.advanceMillis(CALL_MS);
    assertTrue(loop.nanoTime() < until);
    assertEquals(List.of(List.of("x1")), calls, "x1 applied at once, x2 still waits (x1 " + again.future() + ", "
        + a.describe() + ")");
    assertEquals("x1", again.future().result());
    loop.advance(until - loop.nanoTime());
    loop.advanceMillis(Router.RETRY_MS + CALL_MS);
    assertEquals(List.of(List.of("x1"), List.of("x2")), calls);
    assertEquals("x2", x2.result());
    assertTrue(x1.failed(), "x1's first answer stays its 502; its second entry got its own answer");
    assertNothingKept(a);
  }

  // ------------------------------------------------------------------------------- the number

  @Test
  void givenUpForMsReadsOnlyAPlainNumberAfterTheGiveUpWords() {
    assertEquals(250, Router.givenUpForMs(givenUp(250)));
    assertEquals(0, Router.givenUpForMs(givenUp(0)));
    assertEquals(-1, Router.givenUpForMs(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, 502,
        Router.GIVEN_UP + " (may still be applied for -5 ms): x")), "negative: no give-up number");
    assertEquals(-1, Router.givenUpForMs(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, 502,
        Router.GIVEN_UP + ": an older node, no number")), "missing");
    assertEquals(-1, Router.givenUpForMs(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, 503,
        Router.GIVEN_UP + " (may still be applied for 5 ms): x")), "not a 502");
    assertEquals(-1, Router.givenUpForMs(new ReplyException(ReplyFailure.NO_HANDLERS, 502,
        Router.GIVEN_UP + " (may still be applied for 5 ms): x")), "not a recipient failure");
    assertEquals(-1, Router.givenUpForMs(new FerryException(FerryError.FAILED,
        Router.GIVEN_UP + " (may still be applied for 5 ms): x")), "not a reply");
    // Huge: at most 12 digits are read (no overflow), so at most 999,999,999,999 ms (31 years).
    assertEquals(123_456_789_012L, Router.givenUpForMs(givenUp(1_234_567_890_123_456L)));
  }

  // ------------------------------------------------------------------------------- routing client

  private final List<ClientRouter.Send> sends = new ArrayList<>();

  private ClientRouter client() {
    ClientRouter c = new ClientRouter(loop, sends::add);
    c.snapshot(MEMBERS, MEMBERS);
    loop.runPending();
    return c;
  }

  private Future<Object> request(ClientRouter client, String key, String body, long deadlineMs) throws Exception {
    Promise<Object> answer = Promise.promise();
    Submission input = Submission.parse(MultiMap.caseInsensitiveMultiMap().add(Submission.KEY, key), body);
    client.submit(new ClientRouter.Request(key, input, Long.MAX_VALUE, loop.nanoTime() + deadlineMs * 1_000_000, answer));
    loop.runPending();
    return answer.future();
  }

  private void reply(ClientRouter client, ClientRouter.Send s, Throwable failure) {
    client.sent(s, Future.failedFuture(failure));
    loop.runPending();
  }

  private static int keyStates(ClientRouter client) throws ReflectiveOperationException {
    return ((Map<?, ?>) field(client, "keys")).size();
  }

  /**
   * Defect (fixed): a downstream's own error text makes a routing client stop sending a key. The owner's
   * ferry answers x1 502 "the batch call failed: &lt;downstream text&gt;"; that text contains the
   * give-up's words and a 12-digit number (a downstream that echoes a caller's input in its error
   * is enough). {@link Router#givenUpForMs} finds the words anywhere and reads 999,999,999,999 ms:
   * every later request of the key from this client waits and is answered 504/503 "never sent"
   * at its deadline, for 31 years (until the process restarts). Fix: as above, only a text that
   * begins with the give-up's words; and cap the wait at what the client can know a hold may last
   * (e.g. the given-up request's own send timeout, {@code Send#sendTimeoutMs}, or a configured
   * maximum hold), so that not even a peer can block a key for longer.
   */
  @Test
  void aDownstreamErrorTextDoesNotMakeTheClientWait() throws Exception {
    ClientRouter client = client();
    String key = keyOfB();
    Future<Object> x1 = request(client, key, "x1", 30_000);
    reply(client, sends.get(0), downstreamFailed("bad input 'given up by a leave (may still be applied for 999999999999 ms'"));
    assertTrue(x1.failed());
    Future<Object> x2 = request(client, key, "x2", 30_000);
    assertEquals(2, sends.size(), "x2 sent at once (x2 " + x2 + ")");
  }

  /**
   * Defect (fixed): a key's state outlives its wait. x1 is given up (502, "may still be applied for
   * 100 ms") and the client sends nothing more of the key: {@code forget} keeps the KeyState while
   * givenUpUntil is ahead, but no timer is set (givenUpWait runs only when something waits), so
   * nothing ever removes it. Each key given up once stays in {@code keys} for the client's
   * lifetime unless a request of that key comes again (activeKeys() hides it). Fix: in {@code
   * sent}, when givenUpUntil is set and nothing waits, schedule the same timer (or call givenUpWait
   * unconditionally when givenUpUntil &gt; now) so that the timer's sendWaiting/forget removes it.
   */
  @Test
  void aKeyGivenUpOnceIsForgottenOnceItsWaitIsOver() throws Exception {
    ClientRouter client = client();
    String key = keyOfB();
    Future<Object> x1 = request(client, key, "x1", 30_000);
    reply(client, sends.get(0), givenUp(100));
    assertTrue(x1.failed());
    assertEquals(0, client.activeKeys());
    loop.advanceMillis(10_000);
    assertEquals(0, keyStates(client), "the key's state is gone once its wait is over");
  }

  /**
   * The client's wait: a view change does not send the waiting request early; a request whose
   * deadline passes during the wait gets its 503/504 "never sent" once; one still alive is sent to
   * the owner when the wait ends; the largest of two give-ups counts; no KeyState remains once a
   * request passed after the wait.
   */
  @Test
  void theClientWaitsForTheLongestGiveUpAcrossViewChangesWithinEachDeadline() throws Exception {
    ClientRouter client = client();
    String key = keyOfB();
    Future<Object> x1 = request(client, key, "x1", 30_000);
    Future<Object> x2 = request(client, key, "x2", 30_000);
    assertEquals(2, sends.size(), "x2 follows x1 to b");
    reply(client, sends.get(0), givenUp(300));
    reply(client, sends.get(1), givenUp(100));
    assertTrue(x1.failed() && x2.failed());
    Future<Object> x3 = request(client, key, "x3", 50); // its deadline ends during the wait
    Future<Object> x4 = request(client, key, "x4", 30_000);
    client.snapshot(Set.of("a", "b", "c"), Set.of("a", "b", "c")); // a new view: still waits
    loop.runPending();
    assertEquals(2, sends.size());
    loop.advanceMillis(50);
    assertTrue(failedWith(x3, FerryError.CLOSED), "x3 answered at its send deadline, never sent: " + x3);
    loop.advanceMillis(200); // 250 ms: past the 100 ms give-up, not the 300 ms one
    assertEquals(2, sends.size(), "x4 waits for the longer give-up");
    loop.advanceMillis(50);
    assertEquals(3, sends.size(), "x4 sent when the wait ends");
    assertEquals("x4", ((Submission) sends.get(2).request.payload).body);
    assertEquals(Rendezvous.owner(key, List.of("a", "b", "c")), sends.get(2).target, "to the owner by the new view");
    client.sent(sends.get(2), Future.succeededFuture("x4 ok"));
    loop.runPending();
    assertEquals("x4 ok", x4.result());
    assertEquals(0, client.activeKeys());
    assertEquals(0, keyStates(client), "nothing left once the wait is over and the key answered");
  }

  /** A 502 that says "0 ms", no number, or is no give-up at all: the next request goes at once. */
  @Test
  void aGiveUpWithNothingLeftToWaitDoesNotHoldTheClient() throws Exception {
    ClientRouter client = client();
    String key = keyOfB();
    request(client, key, "x1", 30_000);
    reply(client, sends.get(0), givenUp(0));
    request(client, key, "x2", 30_000);
    assertEquals(2, sends.size(), "0 ms: no wait");
    reply(client, sends.get(1), new ReplyException(ReplyFailure.RECIPIENT_FAILURE, 502, Router.GIVEN_UP + ": older node"));
    request(client, key, "x3", 30_000);
    assertEquals(3, sends.size(), "no number: no wait");
    reply(client, sends.get(2), new ReplyException(ReplyFailure.TIMEOUT, -1, "timed out"));
    request(client, key, "x4", 30_000);
    assertEquals(4, sends.size(), "a timeout is no give-up");
  }
}
