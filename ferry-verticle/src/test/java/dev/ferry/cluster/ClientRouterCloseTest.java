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
 * A routing client's decisions once it is closed (ADR 0136), driven by hand on a virtual loop; the
 * test answers every send. Before the fix the client had no closed state: it went on routing by
 * the last view it had read, sent waiting requests again, and took views read while it closed.
 * Also: a caller's callback that throws, at close or not, is reported and costs no one else their
 * answer or send (ADR 0122, which the client did not follow).
 */
class ClientRouterCloseTest {
  private static final Set<String> NODES = Set.of("a", "b");
  private final VirtualLoop loop = new VirtualLoop();
  private final List<ClientRouter.Send> sends = new ArrayList<>();
  private final ClientRouter client = new ClientRouter(loop, sends::add);

  private Future<Object> request(String key, String body, long sendTimeoutMs) {
    Promise<Object> answer = Promise.promise();
    client.submit(new ClientRouter.Request(key, body, Long.MAX_VALUE, loop.nanoTime() + sendTimeoutMs * 1_000_000, answer));
    loop.runPending();
    return answer.future();
  }

  private void view(Set<String> nodes) {
    client.snapshot(nodes, nodes);
    loop.runPending();
  }

  private void close() {
    client.close();
    loop.runPending();
  }

  private static boolean closed(Future<Object> answer) {
    return answer.failed() && answer.cause() instanceof FerryException fe && fe.kind() == FerryError.CLOSED;
  }

  private static final ReplyException NOT_DELIVERED = new ReplyException(ReplyFailure.NO_HANDLERS, -1, "no handler");


  /** Before: sent to the owner by the last view, as if the client were open. */
  @Test
  void aRequestAfterCloseIsClosedAndNothingIsSent() throws Exception {
    view(NODES);
    close();
    Future<Object> late = request("k", "late", 10_000);
    assertTrue(closed(late), "answered CLOSED at once: " + late);
    assertEquals(ClientRouter.CLOSED_TEXT, late.cause().getMessage());
    assertEquals(List.of(), sends);
    assertEquals(0, client.keysKept());
  }

  /**
   * A request waiting for a view (none yet) is answered CLOSED at close, never sent, and a view that
   * arrives while the membership is closing routes nothing. Before: it waited, then went to the
   * node of that late view.
   */
  @Test
  void aWaitingRequestIsClosedAtCloseAndALateViewSendsNothing() throws Exception {
    Future<Object> waiting = request("k", "w", 10_000);
    assertFalse(waiting.isComplete());
    close();
    assertTrue(closed(waiting), "answered at close, not at its send timeout: " + waiting);
    view(NODES);
    assertEquals(List.of(), sends);
    assertEquals(0, loop.liveTimers(), "no deadline timer left behind");
    assertEquals(0, client.keysKept());
  }

  /**
   * Requests on the wire at close get their own answer: they may have been applied, and CLOSED
   * says "never applied". One that comes back NO_HANDLERS (never delivered) is not sent again:
   * CLOSED. The key's request that waited behind it is CLOSED at close. Before: the NO_HANDLERS
   * one and the waiting one were sent again after close, by the old view.
   */
  @Test
  void requestsOnTheWireGetTheirOwnAnswerOrClosedIfNeverDelivered() throws Exception {
    view(NODES);
    String k1 = "k1";
    String k2 = "k2";
    Future<Object> x1 = request(k1, "x1", 10_000);
    Future<Object> y1 = request(k2, "y1", 10_000);
    Future<Object> y2 = request(k2, "y2", 10_000);
    assertEquals(3, sends.size(), "all three on the wire");
    // y1 comes back not delivered before the close: y1 and y2 wait to be sent again.
    client.sent(sends.get(1), Future.failedFuture(NOT_DELIVERED));
    loop.runPending();
    close();
    client.sent(sends.get(0), Future.succeededFuture("x1 ok"));
    client.sent(sends.get(2), Future.failedFuture(NOT_DELIVERED));
    loop.runPending();
    assertEquals("x1 ok", x1.result(), "its real answer");
    assertTrue(closed(y1), "y1 waited to be sent again: CLOSED at close, " + y1);
    assertTrue(closed(y2), "y2 never delivered, not sent again after close: " + y2);
    loop.advanceMillis(20_000);
    assertEquals(3, sends.size(), "nothing sent after close");
    assertEquals(0, client.activeKeys());
    assertEquals(0, client.keysKept());
    assertEquals(0, loop.liveTimers());
  }

  /** A second close changes nothing; a request answered after it still gets its own answer once. */
  @Test
  void closingTwiceIsOneClose() throws Exception {
    view(NODES);
    Future<Object> x1 = request("k", "x1", 10_000);
    assertFalse(client.closed());
    close();
    close();
    // The routing client keeps its Vert.x close hook while anything is on the wire, to answer it.
    assertTrue(client.closed());
    assertEquals(1, client.onTheWire());
    client.sent(sends.get(0), Future.succeededFuture("ok"));
    loop.runPending();
    assertEquals("ok", x1.result());
    assertEquals(0, client.onTheWire());
    assertEquals(0, client.keysKept());
  }

  /** A request answered 502 "given up" after close: its answer, and no wait kept for the key. */
  @Test
  void aGiveUpAnsweredAfterCloseKeepsNothing() throws Exception {
    view(NODES);
    Future<Object> x1 = request("k", "x1", 10_000);
    close();
    client.sent(sends.get(0), Future.failedFuture(new ReplyException(ReplyFailure.RECIPIENT_FAILURE,
        FerryError.FAILED.code(), Router.GIVEN_UP + " (may still be applied for 5000 ms): left")));
    loop.runPending();
    assertTrue(x1.failed());
    assertEquals(0, client.keysKept());
    assertEquals(0, loop.liveTimers());
  }

  /**
   * Abandoned (its Vert.x closing): a request on the wire is answered FAILED now, its reply would
   * never come; a reply that comes anyway changes nothing. A request waiting is CLOSED.
   */
  @Test
  void abandonedRequestsOnTheWireAreFailedOnce() throws Exception {
    view(NODES);
    Future<Object> x1 = request("k", "x1", 10_000);
    Future<Object> y1 = request("k2", "y1", 10_000);
    client.sent(sends.get(1), Future.failedFuture(NOT_DELIVERED));
    loop.runPending();
    client.abandon();
    loop.runPending();
    assertTrue(x1.failed() && ((FerryException) x1.cause()).kind() == FerryError.FAILED, "x1: " + x1);
    assertTrue(closed(y1), "y1 waited: never sent, " + y1);
    client.sent(sends.get(0), Future.succeededFuture("late"));
    loop.runPending();
    assertEquals(FerryError.FAILED, ((FerryException) x1.cause()).kind(), "the first answer stands");
    assertEquals(2, sends.size());
    assertEquals(0, client.keysKept());
  }

  /**
   * A caller whose handler throws as it is answered CLOSED at close: the other callers answered in
   * the same close are answered too.
   */
  @Test
  void aHandlerThatThrowsAtCloseDoesNotStrandTheOthers() throws Exception {
    Future<Object> first = request("k1", "a", 10_000);
    Future<Object> second = request("k2", "b", 10_000);
    first.onComplete(ar -> {
      throw new IllegalStateException("the caller's handler throws");
    });
    close();
    assertTrue(closed(first), "first: " + first);
    assertTrue(closed(second), "second: " + second);
    assertEquals(1, loop.reported.size(), "the throw is reported: " + loop.reported);
  }

  /**
   * The same while open: x1 and x2 of a key are on the wire; x2 comes back not delivered and waits
   * for x1; x1's answer, whose handler throws, is the step that sends x2 again. Before the fix
   * the throw ended that step's effects: x2 was not sent (until some later step ran them) and the
   * throw surfaced in the event bus's reply handler.
   */
  @Test
  void aHandlerThatThrowsDoesNotHoldBackTheSendsOfItsStep() throws Exception {
    view(NODES);
    Future<Object> x1 = request("k", "x1", 10_000);
    request("k", "x2", 10_000);
    x1.onComplete(ar -> {
      throw new IllegalStateException("the caller's handler throws");
    });
    client.sent(sends.get(1), Future.failedFuture(NOT_DELIVERED));
    loop.runPending();
    view(Set.of("a", "b", "c")); // a new view: the node that refused may be tried again
    assertEquals(2, sends.size(), "x2 waits for x1");
    client.sent(sends.get(0), Future.succeededFuture("x1 ok"));
    assertEquals(3, sends.size(), "x2 sent again in the step that answered x1");
    assertEquals("x2", sends.get(2).request.payload);
    assertEquals(1, loop.reported.size(), "the throw is reported: " + loop.reported);
  }
}
