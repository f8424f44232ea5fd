package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Which keys wait for other nodes' releases after a view change (ADR 0051), and whose release
 * counts (ADR 0142): only a key another node may still have a call for waits, and only a release
 * from the ferry the membership announces at that node lets it go.
 */
class RouterReleaseGateTest {
  private static final long CALL_MS = 1_000;
  private static final long MAX_HOLD_MS = ClusterNode.maxHoldMs(CALL_MS, 1_000);
  private final VirtualLoop loop = new VirtualLoop();
  private final List<List<Object>> calls = new ArrayList<>();

  private Router router(String self) {
    return new Router(loop, self, RouterTesting.recordingFerry(loop, CALL_MS, calls), CALL_MS, MAX_HOLD_MS,
        RouterTesting.noForward());
  }

  /**
   * c joins; b owned the key before and owns it now, so no other node can have a call for it: its
   * input is applied at once, not held until c's release arrives.
   */
  @Test
  void aKeyOwnedBeforeAndAfterAChangeDoesNotWaitForReleases() throws Exception {
    Router b = router("b");
    String key = RouterTesting.keysOf("b", List.of("b", "c"), 1).get(0);
    b.snapshot(Set.of("b"), Set.of("b"), Set.of());
    loop.runPending();
    b.snapshot(Set.of("b", "c"), Set.of("b", "c"), Set.of());
    loop.runPending();
    assertEquals(Set.of("c"), b.awaiting(), "c's release not here yet");

    Future<Object> x = RouterTesting.submit(b, key, "x", 0);
    loop.runPending();

    assertTrue(x.succeeded(), "applied without waiting for c: " + x);
  }

  /**
   * b's first view: the key was a's. A release from a's previous ferry (life L1) says nothing of
   * the calls of the ferry the membership announces there now (L2): the key waits until L2's
   * release arrives (ADR 0142).
   */
  @Test
  void onlyTheReleaseOfTheAnnouncedFerryLetsAGainedKeyGo() throws Exception {
    Router b = router("b");
    String key = RouterTesting.keysOf("b", List.of("a", "b"), 1).get(0);
    b.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of(), Map.of("a", "L2"));
    loop.runPending();
    Future<Object> x = RouterTesting.submit(b, key, "x", 0);
    loop.runPending();

    b.released("a", "L1", "a,b");
    loop.advanceMillis(Router.RETRY_MS);
    assertTrue(calls.isEmpty(), "applied on the release of a ferry that is not a's now: " + x);

    b.released("a", "L2", "a,b");
    loop.advanceMillis(Router.RETRY_MS);
    assertTrue(x.succeeded(), "applied once a's announced ferry released: " + x);
  }
}
