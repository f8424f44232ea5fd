package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.internal.Loop;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * What a node holds for other nodes under a stream of inputs (ADR 0100), in virtual time: a key
 * whose previous owner has not released it yet, while callers keep sending to it with deadlines
 * shorter than the hold. The hold of each ends at its deadline; that must not re-route (and re-arm
 * the timer of) everything held behind it, which made the work of one hold's end grow with the
 * queue (quadratic in the stream: an event loop busy for seconds), and the number held is bounded
 * by the ferry's maxQueueing, as the ferry's own queue is.
 */
class RouterHeldBoundTest {
  static final long CALL_TIMEOUT_MS = 1_000;

  final VirtualLoop virtual = new VirtualLoop();
  int timersSet;
  /** The virtual loop, counting the timers set on it. */
  final Loop loop = new Loop() {
    @Override
    public boolean inLoop() {
      return virtual.inLoop();
    }

    @Override
    public void execute(Runnable task) {
      virtual.execute(task);
    }

    @Override
    public long nanoTime() {
      return virtual.nanoTime();
    }

    @Override
    public long schedule(long delayNanos, Runnable task) {
      timersSet++;
      return virtual.schedule(delayNanos, task);
    }

    @Override
    public void cancel(long timerId) {
      virtual.cancel(timerId);
    }
  };
  final List<List<Object>> calls = new ArrayList<>();
  final PerKeyFerry<String, Submission, List<Object>, Object> ferry = RouterTesting.recordingFerry(loop, CALL_TIMEOUT_MS, calls);

  Router router(int maxHeld) {
    return new Router(loop, "b", ferry, CALL_TIMEOUT_MS, ClusterNode.maxHoldMs(CALL_TIMEOUT_MS, 10_000), maxHeld,
        RouterTesting.noForward());
  }

  final Map<String, Integer> outcomes = new TreeMap<>();

  Future<Object> submit(Router router, String key, String body, long timeoutMs) throws Submission.BadInput {
    Future<Object> answer = RouterTesting.submit(router, key, body, timeoutMs);
    answer.onComplete(ar -> outcomes.merge(ar.succeeded() ? "ok"
        : String.valueOf(((FerryException) ar.cause()).kind()), 1, Integer::sum));
    return answer;
  }

  @Test
  void holdsEndingUnderAStreamCostOneRouteAndOneTimerPerInput() throws Exception {
    Router router = router(Integer.MAX_VALUE);
    String key = RouterHoldTest.keyOfB();
    router.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of()); // b joins: a's release gates the key
    int n = 3_000;
    long routesBefore = router.routes;
    int timersBefore = timersSet;
    for (int i = 0; i < n; i++) {
      submit(router, key, "x" + i, 500); // one a ms, each held until its deadline (the release never comes)
      virtual.advanceMillis(1);
    }
    virtual.advanceMillis(1_000);
    assertEquals(Map.of("TIMEOUT", n), outcomes);
    assertEquals(0, router.heldCount());
    // About 500 are held at any time: re-routing (and re-arming) them all at each deadline made
    // it n x 500 routes and timers.
    long routes = router.routes - routesBefore;
    int timers = timersSet - timersBefore;
    assertTrue(routes <= 3L * n, "routes: " + routes + " for " + n + " inputs");
    assertTrue(timers <= 2 * n, "timers set: " + timers + " for " + n + " inputs");
  }

  @Test
  void aNodeHoldsAtMostMaxQueueingInputsAndRefusesNewOnesAtOnce() throws Exception {
    Router router = router(100);
    String key = RouterHoldTest.keyOfB();
    router.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    List<Future<Object>> answers = new ArrayList<>();
    for (int i = 0; i < 150; i++) {
      answers.add(submit(router, key, "x" + i, 0));
    }
    virtual.runPending();
    assertEquals(100, router.heldCount());
    assertEquals(Map.of("REJECTED", 50), outcomes, "the inputs beyond the bound are refused at once");
    for (int i = 100; i < 150; i++) {
      assertEquals(FerryError.REJECTED, ((FerryException) answers.get(i).cause()).kind());
    }

    // The held ones are served in order once the previous owner releases the key.
    router.released("a", router.viewId());
    virtual.advanceMillis(10);
    assertEquals(0, router.heldCount());
    List<Object> applied = calls.stream().flatMap(List::stream).toList();
    assertEquals(100, applied.size());
    for (int i = 0; i < 100; i++) {
      assertEquals("x" + i, applied.get(i));
    }
    assertEquals(100, outcomes.get("ok"));
  }
}
