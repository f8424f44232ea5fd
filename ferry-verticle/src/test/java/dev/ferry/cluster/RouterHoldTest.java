package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * How long a node holds an input for another node (ADR 0099), in virtual time: a node that joins
 * holds its new keys until the previous owner releases them, and the previous owner may take its
 * whole leave to do so (drainTimeoutMs + 2 x callTimeoutMs), not only two call timeouts.
 */
class RouterHoldTest {
  static final long CALL_TIMEOUT_MS = 1_000;
  static final long DRAIN_TIMEOUT_MS = 5_000;

  final VirtualLoop loop = new VirtualLoop();
  final List<List<Object>> calls = new ArrayList<>();
  final PerKeyFerry<String, Submission, List<Object>, Object> ferry = RouterTesting.recordingFerry(loop, CALL_TIMEOUT_MS, calls);
  final Router router = new Router(loop, "b", ferry, CALL_TIMEOUT_MS, ClusterNode.maxHoldMs(CALL_TIMEOUT_MS, DRAIN_TIMEOUT_MS),
      RouterTesting.noForward());

  /** A key that b owns once it joined a (who owned everything before). */
  static String keyOfB() {
    for (int i = 0; ; i++) {
      if ("b".equals(Rendezvous.owner("k" + i, List.of("a", "b")))) {
        return "k" + i;
      }
    }
  }

  Future<Object> submit(String key, String body, long timeoutMs) throws Submission.BadInput {
    return RouterTesting.submit(router, key, body, timeoutMs);
  }

  @Test
  void aJoinerHoldsItsNewKeyForAsLongAsThePreviousOwnerMayTakeToReleaseIt() throws Exception {
    String key = keyOfB();
    router.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of()); // b joins: a's release gates the key
    Future<Object> held = submit(key, "x", 0);
    // Longer than two call timeouts (the bound before ADR 0099), well within a's leave.
    loop.advanceMillis(2 * CALL_TIMEOUT_MS + 500);
    assertFalse(held.isComplete(), "answered while the previous owner may still release: " + held.cause());
    assertTrue(calls.isEmpty(), "called before the release");

    router.released("a", router.viewId());
    loop.runPending();
    assertEquals(List.of(List.of("x")), calls);
    assertTrue(held.succeeded(), () -> "not served: " + held.cause());
  }

  @Test
  void aHoldEndsAtTheCallersDeadlineOrAtTheBound() throws Exception {
    String key = keyOfB();
    router.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    Future<Object> withDeadline = submit(key, "d", 800);
    Future<Object> without = submit(key, "n", 0);

    loop.advanceMillis(800);
    assertTrue(withDeadline.failed(), "held past its caller's deadline");
    assertEquals(FerryError.TIMEOUT, ((FerryException) withDeadline.cause()).kind());
    assertFalse(without.isComplete());

    loop.advanceMillis(DRAIN_TIMEOUT_MS + 2 * CALL_TIMEOUT_MS - 800);
    assertTrue(without.failed(), "held past the bound");
    assertEquals(FerryError.CLOSED, ((FerryException) without.cause()).kind());
    assertTrue(calls.isEmpty());
  }

  /**
   * x1, forwarded to a by b, waits at a for a pause (b owns the key by a's view: views disagree); y
   * enters a and waits behind x1 only. x1's deadline ends its hold first (504): y goes on at once,
   * since nothing else would route it again before its own bound (a 503 for nothing).
   */
  @Test
  void whatWaitsBehindAnInputWhoseHoldEndsGoesOnAtOnce() throws Exception {
    List<Router.Forward> out = new ArrayList<>();
    Router a = new Router(loop, "a", RouterTesting.recordingFerry(loop, CALL_TIMEOUT_MS, calls), CALL_TIMEOUT_MS,
        ClusterNode.maxHoldMs(CALL_TIMEOUT_MS, DRAIN_TIMEOUT_MS), RouterTesting.recording(out));
    String key = keyOfB();
    a.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    io.vertx.core.Promise<Object> x1 = io.vertx.core.Promise.promise();
    a.accept(Submission.parse(io.vertx.core.MultiMap.caseInsensitiveMultiMap().add(Submission.KEY, key)
        .add(Submission.TIMEOUT_MS, "50"), "x1"), 1, false, "b", "c#1", 1_000, x1);
    Future<Object> y = RouterTesting.submit(a, key, "y", 0, "d#1");
    loop.runPending();
    assertEquals(2, a.heldCount(), "x1 paused, y behind it");

    loop.advanceMillis(60);

    assertEquals(FerryError.TIMEOUT, ((FerryException) x1.future().cause()).kind());
    assertEquals(List.of("y"), out.stream().map(f -> f.pending.input.body).toList(), "y sent on when x1's hold ended");
    assertFalse(y.isComplete());
  }
}
