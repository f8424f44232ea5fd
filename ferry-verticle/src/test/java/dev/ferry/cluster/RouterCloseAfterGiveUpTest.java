package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * A node whose leave gave up closes with forwards still open (ADR 0115, last section): after
 * {@link Router#abandonForwards} the leave no longer waits for them, and FerryVerticle's stop goes
 * on to drain and close (ClusterNode.close, then the process may close Vert.x, and with it every
 * reply address). A key handed off after the give-up (its call in flight ended later) is such a
 * forward. Found by {@code RouterSimulationTest#leavesThatGiveUp}, seed 124 in strict mode: the
 * routing client that sent it waited out its send timeout.
 */
class RouterCloseAfterGiveUpTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  private final List<List<Object>> calls = new ArrayList<>();
  private final List<Promise<List<Object>>> openCalls = new ArrayList<>();
  private final List<Router.Forward> sent = new ArrayList<>();

  /**
   * Defect (fixed): x2 waits in a's ferry behind x1's call when a starts leaving; the leave gives
   * up (nothing is forwarded yet), then x1's call ends and x2 is handed off to b. The leave ends
   * without waiting for that forward (it gave up), and a closes: x2 was never answered, and with
   * the node gone its answer from b has nowhere to go. Now close() answers it 502 as a given-up
   * forward (b may apply it): every accepted input gets its reply before the node closes.
   */
  @Test
  void aForwardMadeAfterTheGiveUpIsAnsweredWhenTheNodeCloses() throws Exception {
    Router a = new Router(loop, "a", RouterTesting.ferryWithOpenCalls(loop, CALL_MS, calls, openCalls), CALL_MS,
        MAX_HOLD_MS, RouterTesting.recording(sent));
    a.snapshot(Set.of("a"), Set.of("a"), Set.of()); // a alone owns every key
    loop.runPending();
    String key = "k";
    Future<Object> x1 = RouterTesting.submit(a, key, "x1", 0, "x#1");
    loop.runPending();
    Future<Object> x2 = RouterTesting.submit(a, key, "x2", 0, "x#2");
    loop.runPending();
    assertEquals(List.of(List.of("x1")), calls, "x1 called, x2 waits in the ferry");

    Future<Void> left = a.leaving(false);
    a.snapshot(Set.of("a", "b"), Set.of("b"), Set.of("a")); // b joined, a leaves: b owns the key
    loop.runPending();
    a.abandonForwards("this node left the cluster before the key's owner answered");
    loop.runPending();
    assertTrue(left.succeeded(), "the leave ends once it gave up");
    assertEquals(0, sent.size(), "nothing was open when it gave up");

    openCalls.get(0).complete(List.of());
    loop.runPending();
    assertTrue(x1.succeeded(), "x1 answered by its call");
    assertEquals(1, sent.size(), "x2 handed off to b after the give-up");
    assertEquals("b", sent.get(0).target);
    Future<Void> idle = a.leaving(true);
    loop.runPending();
    assertTrue(idle.succeeded(), "a given-up leave does not wait for it");

    a.close();
    loop.runPending();
    assertTrue(x2.isComplete(), "x2 answered when a closed, not left to its caller's send timeout");
    assertTrue(x2.failed() && x2.cause() instanceof FerryException fe && fe.kind() == FerryError.FAILED
        && fe.getMessage().startsWith(Router.GIVEN_UP), "502 given up by a leave (b may apply it): " + x2.cause());
    assertEquals(0, a.openForwards(), "nothing open once closed");
  }

  /**
   * Defect (fixed): a key's hand-off that completes after the router closed (its call in flight
   * ended during the drain) was still forwarded, and nobody would take its answer. Now it is
   * answered 503 (never sent, never applied) and not sent.
   */
  @Test
  void aHandOffAfterTheCloseIsNotSent() throws Exception {
    Router a = new Router(loop, "a", RouterTesting.ferryWithOpenCalls(loop, CALL_MS, calls, openCalls), CALL_MS,
        MAX_HOLD_MS, RouterTesting.recording(sent));
    a.snapshot(Set.of("a"), Set.of("a"), Set.of());
    loop.runPending();
    Future<Object> x1 = RouterTesting.submit(a, "k", "x1", 0, "x#1");
    loop.runPending();
    Future<Object> x2 = RouterTesting.submit(a, "k", "x2", 0, "x#2");
    loop.runPending();
    a.leaving(false);
    a.snapshot(Set.of("a", "b"), Set.of("b"), Set.of("a")); // b owns the key; a hands it off after x1's call
    loop.runPending();
    a.abandonForwards("this node left the cluster before the key's owner answered");
    a.close();
    loop.runPending();

    openCalls.get(0).complete(List.of());
    loop.runPending();
    assertTrue(x1.succeeded(), "x1 answered by its call");
    assertEquals(0, sent.size(), "x2 not sent after the close");
    assertTrue(RouterTesting.closed(x2), "x2 answered 503, never applied: " + x2);
  }
}
