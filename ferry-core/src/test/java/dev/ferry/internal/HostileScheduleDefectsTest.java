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

  /**
   * Guarantee 4, "none starves" (ADR 0011 P5: "under a custom order ... P5 still holds, each
   * overtaking grant sends an input admitted before the tag"): a busy lane keeps the tag of its
   * next input in the comparator's order when it joined, but sends whatever is first in that order
   * when it is granted. A key whose old input sorts last, fed one input that sorts first while it
   * waits, is granted on its old tag each time and sends the new input, while idle keys take the
   * turns in between: a busy key whose next input is older than those new inputs is never called.
   */
  @Test
  void underACustomOrderABusyKeyIsNotStarvedByAKeyWhoseOldInputSortsLast() {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.builder()
        .dispatch(Dispatch.ADAPTIVE).pinnedLimit(1).maxInFlightBatches(4).maxBatchSize(1).build(),
        java.util.Comparator.comparingLong(In::order), (in, r) -> in.label());
    h.submit(new In("p", "p0", 1, 0));                          // call 0: direct, holds the one slot
    h.submit(new In("q", "q0", 1, 0));                          // q: idle line
    h.submit(new In("p", "old", 1, 9));                         // p: old sorts last
    h.submit(new In("q", "w", 1, 0));                           // q: [q0, w]
    h.succeed(0);                                               // p re-queued, tag old; idle q granted
    assertEquals("q[q0]", h.call(1));
    int call = 1;
    for (int i = 0; i < 5; i++) {
      h.submit(new In("p", "n" + i, 1, 0));                     // sorts before old, admitted after w
      h.succeed(call);                                          // a busy grant: the oldest tag
      call++;
      if (h.call(call).equals("q[w]")) {
        return;
      }
      h.submit(new In("i" + i, "i" + i, 1, 0));                 // a quiet key takes the turn after it
      h.succeed(call);
      call++;
    }
    throw new AssertionError("q's input w, waiting since before every n_i, never left: " + h.calls());
  }
}
