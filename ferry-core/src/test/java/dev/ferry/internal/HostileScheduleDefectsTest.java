package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.Dispatch;
import dev.ferry.FerryError;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyHarness.In;
import io.vertx.core.Future;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Defects found by {@link PerKeyHostileScheduleTest}, each minimized to a deterministic schedule. */
class HostileScheduleDefectsTest {

  /**
   * Guarantee 4 (adaptive, the guide; ADR 0011 P4/P5): a slot that goes to a key that had to wait
   * goes to the key whose next input was admitted earliest. A busy lane's tag is fixed when it
   * joins the line; when the input it names expires there, the lane keeps that old tag and goes
   * ahead of keys whose next input is older than what it really sends.
   */
  @Test
  void aBusyLaneWhoseOldestInputExpiredDoesNotKeepThatInputsPlaceInLine() {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.builder()
        .dispatch(Dispatch.ADAPTIVE).pinnedLimit(1).maxInFlightBatches(4).maxBatchSize(1)
        .directIdleKeys(false).build());
    h.submit("x", "x1");                                        // call 0, holds the one slot
    Future<String> a = h.submit(new In("k", "a", 1, 0), Duration.ofMillis(10)); // k waits, tag a
    h.submit("j", "b");                                         // j waits, tag b (after a)
    h.submit("k", "c");                                         // k: [a, c]
    h.loop.advanceMillis(10);                                   // a expires; k's next input is c
    assertEquals(FerryError.TIMEOUT, PerKeyHarness.failure(a).kind());
    h.succeed(0);
    // b was admitted before c: j goes first.
    assertEquals("j[b]", h.call(1));
  }

  /**
   * The same under a custom order: the lane's tag names its next input in that order when it
   * joins; when that input expires the lane's next input may be older (admitted before) what the
   * tag names, and the lane must not then wait behind keys whose next input is newer.
   */
  @Test
  void underACustomOrderABusyLaneWhoseTaggedInputExpiredIsRankedByItsNextInput() {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.builder()
        .dispatch(Dispatch.ADAPTIVE).pinnedLimit(1).maxInFlightBatches(4).maxBatchSize(1)
        .directIdleKeys(false).build(), java.util.Comparator.comparingLong(In::order), (in, r) -> in.label());
    h.submit(new In("k", "k0", 1, 0));                          // call 0, holds the one slot
    h.submit(new In("k", "a", 1, 5));                           // k: a (admitted first, order 5)
    h.submit(new In("j", "b", 1, 0));                           // j waits, tag b
    h.submit(new In("m", "e", 1, 0));                           // m waits, tag e
    Future<String> c = h.submit(new In("k", "c", 1, 1), Duration.ofMillis(10)); // k: c goes before a
    h.succeed(0);                                               // k re-queued, tag c; j granted (b is oldest)
    assertEquals("j[b]", h.call(1));
    h.loop.advanceMillis(10);                                   // c expires: k's next input is a
    assertEquals(FerryError.TIMEOUT, PerKeyHarness.failure(c).kind());
    h.succeed(1);
    // a was admitted before e: k goes first.
    assertEquals("k[a]", h.call(2));
  }
}
