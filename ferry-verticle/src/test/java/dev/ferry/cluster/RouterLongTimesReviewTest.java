package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.Limits;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review: the longest callTimeoutMs the config accepts (Limits.MAX_MS, about 292 years), in the
 * cluster's Router, in virtual time. Standalone, such a time means "no bound" (Deadlines.after
 * saturates); the Router turns drainTimeoutMs + 2 x callTimeoutMs into nanoseconds unchecked, and
 * past about 146 years the product wraps: the hold bound became about 10 s.
 */
class RouterLongTimesReviewTest {
  final VirtualLoop loop = new VirtualLoop();
  final List<List<Object>> calls = new ArrayList<>();

  @Test
  void aJoinerWithTheLongestCallTimeoutTheConfigAcceptsHoldsItsNewKeyUntilTheRelease() throws Exception {
    long callTimeoutMs = Limits.MAX_MS; // accepted by the config: ">= 1 and <= MAX_MS"
    PerKeyFerry<String, Submission, List<Object>, Object> ferry = RouterTesting.recordingFerry(loop, callTimeoutMs, calls);
    Router router = new Router(loop, "b", ferry, callTimeoutMs, ClusterNode.maxHoldMs(callTimeoutMs, 10_000),
        RouterTesting.noForward());
    String key = RouterHoldTest.keyOfB();
    router.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of()); // b joins: a's release gates the key
    Future<Object> held = RouterTesting.submit(router, key, "x", 0);
    // The previous owner may take drainTimeoutMs + 2 x callTimeoutMs to release: centuries here.
    loop.advanceMillis(60_000);
    assertFalse(held.isComplete(), () -> "the hold ended after a minute: " + held.cause());
    router.released("a", router.viewId());
    loop.runPending();
    assertTrue(held.succeeded(), () -> "not served: " + held.cause());
  }
}
