package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.PerKeyConfig;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

/** Review AL: today's changes to the library API, attacked again. */
class ReviewAlTest {

  /**
   * Review AJ let a caller give up on its close by completing the Future close() returned (its
   * own promise now, not the ferry's). The ferry's close then finds that promise complete, and
   * hands it over with a completion that throws on a complete promise. Attacked: does the throw
   * reach the loop's report (Vert.x's "Unhandled exception") for a caller that did nothing wrong?
   * It held: the ferry's closed promise always has its probes' listener beside the caller's, and
   * Vert.x's list of listeners goes past a listener's throw; a submit's answer is dropped as
   * quietly. Pinned, so that a change to either is seen.
   */
  @Test
  @SuppressWarnings("unchecked")
  void aCallerThatGivesUpOnItsCloseIsNotReportedAsAnError() {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
    Future<String> inFlight = h.submit("k", "k1");
    Future<Void> mine = h.ferry.close();
    h.loop.runPending();
    assertTrue(((Promise<Void>) mine).tryFail("given up by its caller"), "the caller stops waiting for its close");

    h.succeed(0);
    assertEquals("k1", inFlight.result());
    assertEquals("given up by its caller", mine.cause().getMessage(), "the caller's own answer stands");
    assertEquals(java.util.List.of(), h.loop.reported, "nothing went wrong: nothing is reported");
  }

  /** The same for a drain, and beside a closer that still waits (which is answered). */
  @Test
  @SuppressWarnings("unchecked")
  void aCallerThatGivesUpOnItsDrainIsNotReportedAndTheOthersAreAnswered() {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
    h.submit("k", "k1");
    Future<Void> mine = h.ferry.drain(java.time.Duration.ofSeconds(1));
    h.loop.runPending();
    assertTrue(((Promise<Void>) mine).tryComplete(), "the caller stops waiting for its drain");

    h.succeed(0);
    assertTrue(h.ferry.close().succeeded(), "a later closer is answered at once");
    assertEquals(java.util.List.of(), h.loop.reported, "nothing went wrong: nothing is reported");
  }
}
