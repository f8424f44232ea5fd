package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A routing client's deadlines: a request is never sent once its caller's deadline (TIMEOUT) or
 * send timeout (CLOSED) has come, one waiting for a view is answered when either comes, and a send
 * carries what is left of both, so the node and the event bus answer the caller in time. A key
 * answered so is forgotten.
 */
class ClientRouterDeadlineTest {
  private static final Set<String> NODES = Set.of("a", "b");
  private final VirtualLoop loop = new VirtualLoop();
  private final List<ClientRouter.Send> sends = new ArrayList<>();
  private final ClientRouter client = new ClientRouter(loop, sends::add);

  private Future<Object> request(long inputTimeoutMs, long sendTimeoutMs) {
    Promise<Object> answer = Promise.promise();
    long now = loop.nanoTime();
    client.submit(new ClientRouter.Request("k", "x", now + inputTimeoutMs * 1_000_000, now + sendTimeoutMs * 1_000_000,
        answer));
    loop.runPending();
    return answer.future();
  }

  private Future<Object> requestWithoutInputDeadline(long sendTimeoutMs) {
    Promise<Object> answer = Promise.promise();
    client.submit(new ClientRouter.Request("k", "x", Long.MAX_VALUE, loop.nanoTime() + sendTimeoutMs * 1_000_000, answer));
    loop.runPending();
    return answer.future();
  }


  private static boolean failedWith(Future<Object> answer, FerryError kind) {
    return answer.failed() && answer.cause() instanceof FerryException fe && fe.kind() == kind;
  }

  /** The loop busy when the deadline passed, the timer not run yet: answered when the view comes. */
  @Test
  void aRequestWhoseDeadlinePassedBeforeTheViewIsAnsweredTimeout() throws Exception {
    Future<Object> x = request(100, 10_000);
    assertFalse(x.isComplete(), "waits for a view");
    loop.stallMillis(150);
    client.snapshot(NODES, NODES);
    loop.runPending();

    assertTrue(failedWith(x, FerryError.TIMEOUT), "x: " + x);
    assertEquals(List.of(), sends);
    assertEquals(0, loop.liveTimers());
    assertEquals(0, client.keysKept(), "the key is forgotten");
  }

  @Test
  void aRequestWhoseSendTimeoutPassedBeforeTheViewIsAnsweredClosed() throws Exception {
    Future<Object> x = request(10_000, 100);
    loop.stallMillis(150);
    client.snapshot(NODES, NODES);
    loop.runPending();

    assertTrue(failedWith(x, FerryError.CLOSED), "x: " + x);
    assertEquals(List.of(), sends);
    assertEquals(0, loop.liveTimers());
    assertEquals(0, client.keysKept());
  }

  /** With no view ever, the caller is answered at its deadline, not left waiting. */
  @Test
  void aRequestWaitingForAViewIsAnsweredTimeoutAtItsDeadline() throws Exception {
    Future<Object> x = request(100, 10_000);
    assertEquals(1, client.activeKeys());
    loop.advanceMillis(99);
    assertFalse(x.isComplete());
    loop.advanceMillis(1);
    assertTrue(failedWith(x, FerryError.TIMEOUT), "x: " + x);
    assertEquals(0, client.activeKeys());
    assertEquals(0, client.keysKept());
  }

  @Test
  void aRequestWaitingForAViewIsAnsweredClosedAtItsSendTimeout() throws Exception {
    Future<Object> x = request(10_000, 100);
    loop.advanceMillis(99);
    assertFalse(x.isComplete());
    loop.advanceMillis(1);
    assertTrue(failedWith(x, FerryError.CLOSED), "x: " + x);
    assertEquals(List.of(), sends);
    assertEquals(0, client.keysKept());
  }

  /** A deadline that has come leaves no time to send in: answered, never sent with a made-up 1 ms. */
  @Test
  void aRequestSubmittedAtItsDeadlineIsAnsweredNotSent() throws Exception {
    client.snapshot(NODES, NODES);
    Future<Object> x = request(0, 10_000);
    Future<Object> y = request(10_000, 0);
    assertTrue(failedWith(x, FerryError.TIMEOUT), "x: " + x);
    assertTrue(failedWith(y, FerryError.CLOSED), "y: " + y);
    assertEquals(List.of(), sends);
    assertEquals(0, client.keysKept(), "the key is forgotten");
  }

  /**
   * A request that waited 200 ms carries what is left: the node applies the caller's timeout-ms,
   * and the event bus gives up when the caller does. No timeout-ms, none passed on (0).
   */
  @Test
  void aSendCarriesWhatIsLeftOfTheCallersTimeouts() {
    request(500, 2_000);
    loop.advanceMillis(200);
    client.snapshot(NODES, NODES);
    assertEquals(1, sends.size());
    assertEquals(300, sends.get(0).timeoutMs);
    assertEquals(1_800, sends.get(0).sendTimeoutMs);

    requestWithoutInputDeadline(2_000);
    assertEquals(2, sends.size());
    assertEquals(0, sends.get(1).timeoutMs);
    assertEquals(2_000, sends.get(1).sendTimeoutMs);
  }
}
