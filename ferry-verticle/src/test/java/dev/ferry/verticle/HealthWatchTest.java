package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The health rules on made-up instants (ADR 0172): each test plays the probe's events as the engine
 * tells them (a call past its timeout: failed, the snapshot's callsPastTimeout up by one; its end:
 * ended, the count down again; a call that fails at its end: ended, then failed), with T the call
 * timeout. The count is the engine's (ADR 0170): here the test's own, as health reads it.
 */
class HealthWatchTest {
  private static final long T = 30_000;
  private final HealthWatch w = new HealthWatch(T);
  private boolean waiting;
  /** The snapshot's callsPastTimeout. */
  private int pastTimeout;

  private boolean degraded(long now) {
    return w.degraded(now, () -> pastTimeout > 0 && waiting);
  }

  private void timesOut(long now) {
    pastTimeout++;
    w.failed(now);
  }

  private void overdueEnds(long now) {
    w.ended(now, false);
    pastTimeout--;
  }

  private void failsAtItsEnd(long now) {
    w.ended(now, false);
    w.failed(now);
  }

  /**
   * The limit at one call, a downstream whose own timeout is far longer (HTTP's timeoutMs): the
   * call fails its callers at T and holds the one slot; inputs wait behind it. Degraded a further
   * T later, while the rule in calls would wait for five such calls to end.
   */
  @Test
  void aHungCallHoldingTheOnlySlotWithInputsBehindItDegradesOneCallTimeoutAfterItsTimeout() {
    w.started(0, 0);
    timesOut(T);
    waiting = true;
    assertFalse(degraded(T), "one call past its timeout");
    assertFalse(degraded(2 * T - 1));
    assertTrue(degraded(2 * T));
    assertEquals(1, w.inARow());
    assertEquals(T, w.stalledNanos(2 * T));
  }

  /**
   * The limit at one call, a downstream whose calls end at T (the event bus's send timeout): each
   * call ends as it fails, and the next, whose inputs waited, starts at once. Degraded at the
   * second failure, T after the first.
   */
  @Test
  void callsThatEachEndAtTheirTimeoutDegradeAtTheSecondFailure() {
    w.started(0, 0);
    timesOut(T);
    overdueEnds(T);
    w.started(T, T / 2); // its input came at T / 2, while the first call was on the wire
    assertFalse(degraded(2 * T - 1));
    timesOut(2 * T);
    assertTrue(degraded(2 * T), "two failed calls, nothing served for T since the first");
  }

  /**
   * A call past its timeout that then answers (late: still a failed call), the next served: never
   * degraded, whatever waits.
   */
  @Test
  void aSlowCallThatAnswersLateAndAServedOneDoNotDegrade() {
    waiting = true;
    w.started(0, 0);
    timesOut(T);
    overdueEnds(T + T / 2);
    w.started(T + T / 2, T);
    assertFalse(degraded(2 * T), "the late call is over; the next one is on the wire, no second failure");
    w.ended(2 * T + T / 4, true);
    assertFalse(degraded(10 * T));
    assertEquals(0, w.inARow());
  }

  /** A busy node on a downstream that serves: a call hung on the wire is no stall once another is served. */
  @Test
  void aCallServedEndsTheStallEvenWithACallStillHungOnTheWire() {
    waiting = true;
    w.started(0, 0);
    w.started(1, 0);
    timesOut(T);
    w.ended(T + 1, true);
    assertFalse(degraded(100 * T), "a call past its timeout still on the wire, inputs waiting: one was served since");
  }

  /** A call hung on the wire with nothing behind it: nothing to serve, no stall; an input that waits makes one. */
  @Test
  void aHungCallWithNothingWaitingIsNoStallUntilAnInputWaits() {
    w.started(0, 0);
    timesOut(T);
    assertFalse(degraded(100 * T), "nothing waits");
    waiting = true;
    assertTrue(degraded(100 * T), "an input waits behind a call held past its timeout for 99 T");
  }

  /**
   * Failed calls far apart on a quiet node: the stall's time stops when the wire empties with
   * nothing waiting, and a call whose inputs came after starts it afresh.
   */
  @Test
  void failuresFarApartOnAQuietNodeAreNoStall() {
    w.started(0, 0);
    failsAtItsEnd(1);
    assertFalse(degraded(100 * T), "idle: the stall's time stopped at once");
    assertEquals(0, w.stalledNanos(100 * T));
    w.started(100 * T, 0); // a direct call: its input came after the wire emptied
    failsAtItsEnd(100 * T + 1);
    assertEquals(2, w.inARow(), "the rule in calls still counts them");
    assertFalse(degraded(200 * T));
    w.started(200 * T, 0);
    timesOut(201 * T);
    overdueEnds(201 * T);
    assertFalse(degraded(300 * T), "three failures, none T after another with work between");
  }

  /** Inputs waiting when the wire emptied keep the stall going across the gap. */
  @Test
  void inputsWaitingWhenTheWireEmptiedKeepTheStall() {
    w.started(0, 0);
    failsAtItsEnd(T / 2);
    w.started(T / 2, T / 4); // waited since T / 4, before the wire emptied
    failsAtItsEnd(T + T / 2);
    assertTrue(degraded(T + T / 2));
  }

  /** A stall that degraded the node is not ended by the wire emptying, nor by the next input: only by a call served. */
  @Test
  void aStallThatDegradedTheNodeOutlastsIdleAndTheNextInput() {
    w.started(0, 0);
    timesOut(T);
    overdueEnds(T);
    w.started(T, T / 2);
    timesOut(2 * T);
    overdueEnds(2 * T);
    assertTrue(degraded(2 * T));
    assertTrue(degraded(50 * T), "idle since: still no call served");
    w.started(50 * T, 0);
    assertTrue(degraded(50 * T), "a new input is no call served: no flap back to UP");
    w.ended(50 * T + 1, true);
    assertFalse(degraded(50 * T + 1));
  }

  /**
   * One call past its timeout, held to the downstream's own longer timeout (HTTP's timeoutMs at
   * three times callTimeoutMs) with nothing behind it: never degraded, and not a stall that lives
   * on (review AQ). Kept across the idle gap because it had lasted the window, it made the first
   * fast failure hours later read degraded at once, and until the next call served: two failures
   * hours apart on a quiet node.
   */
  @Test
  void aLoneFailureHeldPastTheWindowWithNothingWaitingDoesNotOutliveTheIdleGap() {
    w.started(0, 0);
    timesOut(T);
    overdueEnds(3 * T);
    assertFalse(degraded(3 * T));
    w.started(100 * T, 0); // a direct call: its input came long after the wire emptied
    failsAtItsEnd(100 * T + 1);
    assertFalse(degraded(100 * T + 1), "one failure now, one hours ago, nothing held up between");
    assertEquals(0, w.stalledNanos(100 * T + 1), "a stall begun afresh, its time stopped at the idle wire");
  }

  /**
   * A hung call degraded the node while an input waited behind it; that input's own deadline then
   * passed (the caller's {@code timeout-ms}), leaving nothing waiting (review AQ). Still no call
   * served: degraded stays. Read UP there, a hung downstream with sparse callers that set deadlines
   * flapped, degraded while each input waited and UP once it expired.
   */
  @Test
  void aStallThatDegradedOnAWaitingInputStaysDegradedWhenThatInputExpires() {
    w.started(0, 0);
    timesOut(T);
    waiting = true;
    assertTrue(degraded(2 * T));
    waiting = false; // the waiting input's deadline passed: TIMEOUT to its caller
    assertTrue(degraded(2 * T + 1), "no call served: no flap back to UP");
    assertTrue(degraded(10 * T));
    overdueEnds(20 * T); // the hung call ends at last, failed
    assertTrue(degraded(30 * T), "idle since: still no call served");
    w.started(40 * T, 0);
    assertTrue(degraded(40 * T), "a new input is no call served");
    w.ended(40 * T + 1, true);
    assertFalse(degraded(40 * T + 1));
  }

  /** Recovery: UP at the first call that ends well, from either rule. */
  @Test
  void theFirstCallServedEndsEitherRule() {
    waiting = true;
    w.started(0, 0);
    timesOut(T);
    assertTrue(degraded(3 * T));
    overdueEnds(3 * T);
    w.started(3 * T, 2 * T);
    w.ended(3 * T + 1, true);
    assertFalse(degraded(3 * T + 1));
    for (int i = 0; i < Operations.DEGRADED_AFTER; i++) {
      w.started(4 * T, 0);
      failsAtItsEnd(4 * T);
    }
    assertTrue(degraded(4 * T), "five failed calls in a row, at once");
    w.started(4 * T, 0);
    w.ended(4 * T, true);
    assertFalse(degraded(4 * T));
    assertEquals(0, w.inARow());
  }

  /**
   * Review AS (ADR 0171): a hung call held the wire past the window while an input waited, and
   * nobody asked; the input then left (its deadline). Told as the ferry's next transition began
   * ({@link HealthWatch#heldUp}), the stall latched then, as an answer in between would have: read
   * afterwards, it is degraded, not UP. Told before the window, it latches nothing.
   */
  @Test
  void aStallToldHeldUpPastTheWindowLatchesThoughNobodyAsked() {
    w.started(0, 0);
    timesOut(T);
    w.heldUp(2 * T - 1); // an input waited until just before the window: nothing yet
    waiting = false;
    assertFalse(degraded(2 * T - 1));
    w.heldUp(3 * T); // another waited until 3 T, past the window, and left: nobody asked meanwhile
    assertTrue(degraded(3 * T + 1), "read after the input left: the stall held, degraded");
    overdueEnds(4 * T);
    assertTrue(degraded(10 * T), "no call served since");
    w.started(10 * T, 0);
    w.ended(10 * T + 1, true);
    assertFalse(degraded(10 * T + 1), "UP at the first call served");
    w.heldUp(20 * T);
    assertFalse(degraded(20 * T), "no stall: nothing to latch");
  }
}
