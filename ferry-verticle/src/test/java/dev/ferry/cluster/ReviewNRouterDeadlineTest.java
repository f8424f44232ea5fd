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
 * Review N: the {@code timeout-ms} header at its documented top, 9223372036854 ms (the largest that
 * fits in nanoseconds), on a clustered node, in virtual time. A standalone node reads it as a
 * deadline never reached; the router must too, also for an input it holds while a key's
 * ownership changes: held no longer than its bound, as one without a deadline.
 */
class ReviewNRouterDeadlineTest {
  static final long CALL_TIMEOUT_MS = 1_000;
  static final long DRAIN_TIMEOUT_MS = 5_000;
  /** The guide's largest {@code timeout-ms}: VerticleConfig.MAX_MS. */
  static final long LARGEST_TIMEOUT_MS = 9_223_372_036_854L;

  final VirtualLoop loop = new VirtualLoop();
  final List<List<Object>> calls = new ArrayList<>();
  final PerKeyFerry<String, Submission, List<Object>, Object> ferry = RouterTesting.recordingFerry(loop, CALL_TIMEOUT_MS, calls);
  final Router router = new Router(loop, "b", ferry, CALL_TIMEOUT_MS, ClusterNode.maxHoldMs(CALL_TIMEOUT_MS, DRAIN_TIMEOUT_MS),
      RouterTesting.noForward());

  @Test
  void aHeldInputWithTheLargestTimeoutMsIsHeldNoLongerThanTheBoundLikeOneWithout() throws Exception {
    // The router took its deadline as now + timeoutMs * 10^6, unbounded: at the top that wraps
    // past Long.MAX_VALUE (a loop time over 0.8 ms is enough) into a large negative time, which
    // then won the minimum that bounds a hold (ADR 0099, 0100): the input's hold had no bound. Held
    // while its key's previous owner releases it, an input without a deadline gets 503 at the
    // bound (drainTimeoutMs + 2 x callTimeoutMs); one with the largest timeout-ms stayed held, with
    // its place in maxQueueing, for as long as the release took, for ever if it never came. Any
    // value within the loop's time (in ms, over 10^6) of the top did the same.
    String key = RouterHoldTest.keyOfB();
    router.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of()); // b joins: a's release gates the key
    Future<Object> largest = RouterTesting.submit(router, key, "largest", LARGEST_TIMEOUT_MS);
    Future<Object> none = RouterTesting.submit(router, key, "none", 0);
    loop.advanceMillis(1);
    assertFalse(largest.isComplete(), () -> "answered while held: " + largest.cause());
    assertFalse(none.isComplete());

    loop.advanceMillis(DRAIN_TIMEOUT_MS + 2 * CALL_TIMEOUT_MS);
    assertTrue(none.failed(), "held past the bound");
    assertEquals(FerryError.CLOSED, ((FerryException) none.cause()).kind());
    assertTrue(largest.failed(), "held past the bound: a deadline far away took the bound off");
    assertEquals(FerryError.CLOSED, ((FerryException) largest.cause()).kind());
    assertEquals(0, router.heldCount());
    assertTrue(calls.isEmpty());
  }
}
