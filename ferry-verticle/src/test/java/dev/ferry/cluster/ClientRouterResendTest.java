package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;

import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A routing client's requests answered NO_HANDLERS (never delivered): each is sent again, in the
 * order its key's requests were submitted, once nothing of the key is in flight and either a new
 * view came or the pause ({@link Router#RETRY_MS}) passed; a 410 (the node is leaving) passes the
 * node over at once, until the view drops it or {@link ClientRouter#LEAVING_FORGOTTEN_MS} passed.
 * Driven by hand on a virtual loop; the test answers every send.
 */
class ClientRouterResendTest {
  private static final List<String> AB = List.of("a", "b");
  private static final ReplyException NOT_DELIVERED = new ReplyException(ReplyFailure.NO_HANDLERS, -1, "no handler");
  private static final ReplyException LEAVING = new ReplyException(ReplyFailure.NO_HANDLERS, ClientRouter.GONE, "leaving");

  private final VirtualLoop loop = new VirtualLoop();
  private final List<ClientRouter.Send> sends = new ArrayList<>();
  private final ClientRouter client = new ClientRouter(loop, sends::add);

  /** The first key k0, k1, ... that {@code node} owns in each of {@code views}, skipping {@code not}. */
  @SafeVarargs
  static String keyOwnedBy(String node, String not, List<String>... views) {
    for (int i = 0; ; i++) {
      String key = "k" + i;
      boolean all = !key.equals(not);
      for (List<String> view : views) {
        all &= node.equals(Rendezvous.owner(key, view));
      }
      if (all) {
        return key;
      }
    }
  }

  private Future<Object> request(String key, String body) {
    Promise<Object> answer = Promise.promise();
    client.submit(new ClientRouter.Request(key, body, Long.MAX_VALUE, loop.nanoTime() + 10_000_000_000L, answer));
    loop.runPending();
    return answer.future();
  }

  private void view(List<String> nodes) {
    client.snapshot(Set.copyOf(nodes), Set.copyOf(nodes));
    loop.runPending();
  }

  private void answer(int send, Throwable failure) {
    client.sent(sends.get(send), Future.failedFuture(failure));
    loop.runPending();
  }

  private void answer(int send, Object result) {
    client.sent(sends.get(send), Future.succeededFuture(result));
    loop.runPending();
  }

  private List<String> sent(int from) {
    return sends.subList(from, sends.size()).stream().map(s -> s.target + ":" + s.request.payload).toList();
  }


  /** With no new view, the node that refused is tried again after the pause: the request is not lost. */
  @Test
  void aRequestNotDeliveredIsSentAgainToItsOwnerAfterThePause() throws Exception {
    view(AB);
    String k = keyOwnedBy("a", null, AB);
    Future<Object> x = request(k, "x");
    answer(0, NOT_DELIVERED);
    assertEquals(1, client.activeKeys(), "x waits to be sent again");
    loop.advanceMillis(Router.RETRY_MS - 1);
    assertEquals(List.of(), sent(1), "not at once to the node that just refused it");
    loop.advanceMillis(1);
    assertEquals(List.of("a:x"), sent(1));
    answer(1, "ok");
    assertEquals("ok", x.result());
    assertEquals(0, client.activeKeys());
    assertEquals(0, client.keysKept());
  }

  /** Refusals that come back out of order do not reorder the key's requests. */
  @Test
  void requestsNotDeliveredAreSentAgainInTheOrderTheyWereSubmitted() {
    view(AB);
    String k = keyOwnedBy("a", null, AB);
    request(k, "x1");
    request(k, "x2");
    request(k, "x3");
    answer(2, NOT_DELIVERED);
    answer(0, NOT_DELIVERED);
    answer(1, NOT_DELIVERED);
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("a:x1", "a:x2", "a:x3"), sent(3));
  }

  /**
   * Another key whose owner refused a moment ago waits the pause too, then goes: it is not left
   * waiting until its deadline for a view that may not change.
   */
  @Test
  void aKeyWhoseOwnerJustRefusedIsSentThereAfterThePause() {
    view(AB);
    String k1 = keyOwnedBy("a", null, AB);
    String k2 = keyOwnedBy("a", k1, AB);
    request(k1, "x");
    answer(0, NOT_DELIVERED);
    Future<Object> y = request(k2, "y");
    assertEquals(List.of(), sent(1), "a refused a moment ago");
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("a:x", "a:y"), sent(1).stream().sorted().toList());
    assertFalse(y.isComplete());
  }

  /**
   * x2 is refused while x1 is still on the wire, and x1 is answered after the pause: x2 still goes
   * again, after another pause, rather than waiting for a view change or its deadline.
   */
  @Test
  void aRequestRefusedBehindOneAnsweredAfterThePauseIsStillSentAgain() {
    view(AB);
    String k = keyOwnedBy("a", null, AB);
    request(k, "x1");
    request(k, "x2");
    answer(1, NOT_DELIVERED);
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of(), sent(2), "x2 waits for x1, still in flight");
    answer(0, "ok");
    assertEquals(List.of(), sent(2), "a refused x2: a pause first");
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("a:x2"), sent(2));
  }

  /**
   * A new view may mean the refusing node now has its handlers: the request goes again at once,
   * even to the same owner; and once answered, its key leaves no timer behind.
   */
  @Test
  void aNewViewSendsARefusedRequestAgainAtOnceEvenToTheSameOwner() throws Exception {
    view(AB);
    List<String> abc = List.of("a", "b", "c");
    String k = keyOwnedBy("a", null, AB, abc);
    request(k, "x");
    answer(0, NOT_DELIVERED);
    view(abc);
    assertEquals(List.of("a:x"), sent(1));
    answer(1, "ok");
    assertEquals(0, client.keysKept());
    assertEquals(0, loop.liveTimers(), "the forgotten key's pause is cancelled");
  }

  /** The same view read again (every second) is no news: the refusing node still gets its pause. */
  @Test
  void theSameViewReadAgainDoesNotCutThePauseShort() {
    view(AB);
    String k = keyOwnedBy("a", null, AB);
    request(k, "x");
    answer(0, NOT_DELIVERED);
    view(AB);
    assertEquals(List.of(), sent(1));
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("a:x"), sent(1));
  }

  /**
   * A 410 says the node is leaving: the request goes at once to the key's owner without it, and
   * so do the key's later ones while the view still names it; LEAVING_FORGOTTEN_MS after its 410
   * (a ferry deployed again under its id, ADR 0133) the same view routes to it again.
   */
  @Test
  void aLeavingNodeIsPassedOverAtOnceUntilItIsForgotten() {
    view(AB);
    String k = keyOwnedBy("a", null, AB);
    request(k, "x1");
    answer(0, LEAVING);
    assertEquals(List.of("b:x1"), sent(1), "no pause: b takes a's keys");
    answer(1, "ok");
    loop.advanceMillis(ClientRouter.LEAVING_FORGOTTEN_MS - 1);
    view(AB);
    request(k, "x2");
    assertEquals(List.of("b:x2"), sent(2), "a still counted as leaving");
    answer(2, "ok");
    loop.advanceMillis(1);
    view(AB);
    request(k, "x3");
    loop.advanceMillis(Router.RETRY_MS); // a refused last time: the pause first
    assertEquals(List.of("a:x3"), sent(3), "forgotten: a is the owner again");
  }

  /**
   * A node that refused once (its ferry not yet deployed again, say) and then took a request is
   * a node that takes requests: its keys' later requests go at once. Before the fix it stayed
   * "refused" until the view changed, which a redeploy between two membership reads never does, so
   * every later request of its keys waited a pause first.
   */
  @Test
  void aNodeThatTookARequestAfterRefusingOneIsNoLongerPaused() {
    view(AB);
    String k1 = keyOwnedBy("a", null, AB);
    String k2 = keyOwnedBy("a", k1, AB);
    request(k1, "x");
    answer(0, NOT_DELIVERED);
    loop.advanceMillis(Router.RETRY_MS);
    answer(1, "ok");
    request(k2, "y");
    assertEquals(List.of("a:x", "a:y"), sent(1), "y at once: a took x");
  }

  /** A request of a key with requests waiting to be sent again waits behind them: never ahead. */
  @Test
  void aLaterRequestWaitsBehindItsKeysRequestsWaitingToBeSentAgain() {
    view(AB);
    String k = keyOwnedBy("a", null, AB);
    request(k, "x1");
    answer(0, NOT_DELIVERED);
    Future<Object> x2 = request(k, "x2");
    assertEquals(List.of(), sent(1));
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("a:x1", "a:x2"), sent(1));
    answer(1, "ok");
    answer(2, "ok");
    assertEquals("ok", x2.result());
  }

  /**
   * A failure its handler sent back (a ferry's 503, say) shows the node takes requests again, as a
   * success does; a send that got no reply (the event bus's TIMEOUT) shows nothing: the pause stays.
   */
  @Test
  void aFailureFromTheNodesHandlerEndsItsPauseButNoReplyDoesNot() {
    view(AB);
    String k1 = keyOwnedBy("a", null, AB);
    String k2 = keyOwnedBy("a", k1, AB);
    String k3 = keyOwnedBy("a", k2, AB);
    request(k1, "x");
    answer(0, NOT_DELIVERED);
    loop.advanceMillis(Router.RETRY_MS);
    answer(1, new ReplyException(ReplyFailure.TIMEOUT, -1, "no reply"));
    request(k2, "y");
    assertEquals(List.of("a:x"), sent(1), "y waits the pause: a timeout says nothing of a's handler");
    loop.advanceMillis(Router.RETRY_MS);
    answer(2, new ReplyException(ReplyFailure.RECIPIENT_FAILURE, 503, "the ferry is full"));
    request(k3, "z");
    assertEquals(List.of("a:x", "a:y", "a:z"), sent(1), "z at once: a's handler answered y");
  }

  /**
   * x1 and x2 go to a, x2 behind x1; a's consumer is registered again between them (a ferry
   * deployed again under a's id, or a joining node whose registration reached this client's event
   * bus just after its announcement): x1 is not delivered, x2 is applied. Sent again, x1 would be
   * applied after x2 (nothing at a fences a request sent straight to it). It is answered CLOSED,
   * never applied, as a node answers an input that came back after its client's later one (ADR
   * 0144), and x3, which waited behind it, goes on.
   */
  @Test
  void aRequestNotDeliveredIsNeverSentAgainOnceALaterOneOfItsKeyMayHaveBeenApplied() {
    view(AB);
    String k = keyOwnedBy("a", null, AB);
    Future<Object> x1 = request(k, "x1");
    request(k, "x2");
    answer(0, NOT_DELIVERED);
    Future<Object> x3 = request(k, "x3");
    answer(1, "ok");
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("a:x3"), sent(2), "x1 never again: x2 may have been applied");
    assertTrue(x1.failed());
    assertEquals(FerryError.CLOSED, ((FerryException) x1.cause()).kind(), x1.cause().getMessage());
    assertTrue(x1.cause().getMessage().startsWith(Router.OVERTAKEN), x1.cause().getMessage());
    answer(2, "ok");
    assertEquals("ok", x3.result());
    assertEquals(0, client.keysKept());
    assertEquals(0, loop.liveTimers());
  }

  /** The same when x1's refusal is slower than x2's reply, or x2's answer says only that it may have been applied. */
  @Test
  void aRefusalThatComesBackAfterALaterRequestMayHaveBeenAppliedIsNeverSentAgain() {
    view(AB);
    String k = keyOwnedBy("a", null, AB);
    Future<Object> x1 = request(k, "x1");
    request(k, "x2");
    answer(1, new ReplyException(ReplyFailure.TIMEOUT, -1, "no reply"));
    answer(0, NOT_DELIVERED);
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of(), sent(2));
    assertTrue(x1.failed());
    assertEquals(FerryError.CLOSED, ((FerryException) x1.cause()).kind(), x1.cause().getMessage());
    assertEquals(0, client.keysKept());
  }

  /** A later request the ferry refused (429: never sent to the downstream) does not stop x1 going again. */
  @Test
  void aLaterRequestThatWasNeverAppliedLeavesTheRefusedOneToBeSentAgain() {
    view(AB);
    String k = keyOwnedBy("a", null, AB);
    request(k, "x1");
    request(k, "x2");
    answer(0, NOT_DELIVERED);
    answer(1, new ReplyException(ReplyFailure.RECIPIENT_FAILURE, FerryError.REJECTED.code(), "full"));
    loop.advanceMillis(Router.RETRY_MS);
    assertEquals(List.of("a:x1"), sent(2));
  }
}
