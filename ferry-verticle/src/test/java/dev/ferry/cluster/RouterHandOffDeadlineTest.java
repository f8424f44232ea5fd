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
 * What a hand-off carries on and how it ends when nobody can take it: b's ferry calls x1 while x2
 * waits behind it; the key moves on, and x2 is handed off once x1's call ends.
 */
class RouterHandOffDeadlineTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  private final List<List<Object>> calls = new ArrayList<>();
  private final List<Promise<List<Object>>> open = new ArrayList<>();
  private final List<Router.Forward> out = new ArrayList<>();
  private final Router b = new Router(loop, "b", RouterTesting.ferryWithOpenCalls(loop, CALL_MS, calls, open), CALL_MS,
      MAX_HOLD_MS, RouterTesting.recording(out));
  private final String key = RouterTesting.keysOf("c", List.of("b", "c"), 1).get(0);

  /** x1 in b's call, x2 (with a deadline of {@code x2TimeoutMs}) waiting in b's ferry behind it. */
  private Future<Object> x2WaitingBehindACall(long x2TimeoutMs) throws Exception {
    b.snapshot(Set.of("b"), Set.of("b"), Set.of());
    loop.runPending();
    RouterTesting.submit(b, key, "x1", 0);
    loop.runPending();
    Future<Object> x2 = RouterTesting.submit(b, key, "x2", x2TimeoutMs);
    loop.runPending();
    assertEquals(List.of(List.of("x1")), calls, "x2 waits behind x1's call");
    return x2;
  }

  /** c joins and owns the key: x2 goes to c with what is left of its caller's deadline. */
  @Test
  void aHandOffCarriesWhatIsLeftOfItsDeadline() throws Exception {
    Future<Object> x2 = x2WaitingBehindACall(5_000);
    b.snapshot(Set.of("b", "c"), Set.of("b", "c"), Set.of());
    loop.advanceMillis(200);
    open.get(0).complete(List.of());
    loop.runPending();

    assertEquals(List.of("x2"), out.stream().map(f -> f.pending.input.body).toList(), "x2 handed off to c: " + x2);
    Router.Forward f = out.get(0);
    assertTrue(f.handOff && f.target.equals("c"), "a hand-off to c");
    assertTrue(f.remainingMs > 4_000 && f.remainingMs <= 4_800, "x2's deadline on its way: " + f.remainingMs);
    assertFalse(x2.isComplete());
  }

  /**
   * The view left b's key to c, then every ferry closed (no node serves) before the hand-off came:
   * x2 is answered 503 at once, never sent.
   */
  @Test
  void aHandOffNoNodeCanTakeIsAnsweredClosed() throws Exception {
    Future<Object> x2 = x2WaitingBehindACall(0);
    b.snapshot(Set.of("b", "c"), Set.of("b", "c"), Set.of());
    loop.runPending();
    b.snapshot(Set.of("b", "c"), Set.of(), Set.of());
    loop.runPending();
    open.get(0).complete(List.of());
    loop.runPending();

    assertTrue(x2.failed() && x2.cause() instanceof FerryException fe && fe.kind() == FerryError.CLOSED, "x2: " + x2);
    assertTrue(out.isEmpty(), "sent: " + out);
  }
}
