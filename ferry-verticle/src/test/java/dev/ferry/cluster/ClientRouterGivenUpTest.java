package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
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
 * A routing client's request answered 502 "given up by a leave" may still be applied for as long
 * as its 502 says (ADR 0115): the key's later requests wait that long, never longer than the
 * given-up request's own send could have lasted, and the key is forgotten once the wait is over.
 */
class ClientRouterGivenUpTest {
  private static final Set<String> NODES = Set.of("a", "b");
  private final VirtualLoop loop = new VirtualLoop();
  private final List<ClientRouter.Send> sends = new ArrayList<>();
  private final ClientRouter client = new ClientRouter(loop, sends::add);

  private static ReplyException givenUpFor(long ms) {
    return new ReplyException(ReplyFailure.RECIPIENT_FAILURE, FerryError.FAILED.code(),
        Router.GIVEN_UP + " (may still be applied for " + ms + " ms): the node left");
  }

  private Future<Object> request(String body, long sendTimeoutMs) {
    Promise<Object> answer = Promise.promise();
    client.submit(new ClientRouter.Request("k", body, Long.MAX_VALUE, loop.nanoTime() + sendTimeoutMs * 1_000_000, answer));
    loop.runPending();
    return answer.future();
  }

  private void answer(int send, Throwable failure) {
    client.sent(sends.get(send), Future.failedFuture(failure));
    loop.runPending();
  }


  /** The later request would otherwise reach the owner before the given-up one may. */
  @Test
  void aKeysLaterRequestWaitsWhatTheGiveUpSaysThenGoes() {
    client.snapshot(NODES, NODES);
    Future<Object> x1 = request("x1", 10_000);
    answer(0, givenUpFor(1_000));
    assertTrue(x1.failed(), "x1 gets its own answer at once");
    Future<Object> x2 = request("x2", 10_000);
    loop.advanceMillis(999);
    assertEquals(1, sends.size(), "x2 waits behind x1");
    loop.advanceMillis(1);
    assertEquals(2, sends.size(), "the wait is over");
    assertEquals("x2", sends.get(1).request.payload);
    client.sent(sends.get(1), Future.succeededFuture("ok"));
    loop.runPending();
    assertEquals("ok", x2.result());
  }

  /** Every hold on the way ends before its sender gives up (ADR 0109), whatever a peer wrote. */
  @Test
  void theWaitIsNeverLongerThanTheGivenUpSendCouldHaveLasted() {
    client.snapshot(NODES, NODES);
    request("x1", 2_000);
    answer(0, givenUpFor(60_000));
    request("x2", 10_000);
    loop.advanceMillis(1_999);
    assertEquals(1, sends.size());
    loop.advanceMillis(1);
    assertEquals(2, sends.size(), "x2 goes when x1's send timeout would have");
  }

  /**
   * A key kept only for its wait (nothing of it in flight or waiting) is not an active key, and is
   * forgotten when the wait ends: memory does not grow with keys once given up.
   */
  @Test
  void aKeyKeptOnlyForItsGiveUpWaitIsForgottenWhenTheWaitEnds() throws Exception {
    client.snapshot(NODES, NODES);
    request("x1", 10_000);
    answer(0, givenUpFor(1_000));
    assertEquals(0, client.activeKeys());
    assertEquals(1, client.keysKept(), "kept for the wait");
    loop.advanceMillis(1_000);
    assertEquals(0, client.keysKept());
    assertEquals(0, loop.liveTimers());
  }

  /** Closed, nothing of the key will be sent again: no wait, and no timer, is kept for it. */
  @Test
  void closingEndsAGiveUpWaitWhileTheKeyIsStillOnTheWire() throws Exception {
    client.snapshot(NODES, NODES);
    request("x1", 10_000);
    Future<Object> x2 = request("x2", 10_000);
    answer(0, givenUpFor(5_000));
    client.close();
    loop.runPending();
    assertEquals(0, loop.liveTimers(), "x2 on the wire needs no timer");
    client.sent(sends.get(1), Future.succeededFuture("ok"));
    loop.runPending();
    assertEquals("ok", x2.result());
    assertEquals(0, client.keysKept());
  }
}
