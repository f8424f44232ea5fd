package dev.ferry.verticle;

import java.util.function.BooleanSupplier;

/**
 * What the node's health knows of its downstream calls, and the two rules that turn it {@code
 * degraded}. Plain state with no clock of its own: the caller passes the time ({@link
 * System#nanoTime()} on the verticle's context), so tests drive it with made-up instants.
 *
 * <h2>Design</h2>
 *
 * <b>In calls</b> (ADRs 0060, 0164): the last {@link Operations#DEGRADED_AFTER} calls all failed,
 * each counted when its callers were failed (at its end, or at {@code callTimeoutMs} for a call
 * still on the wire then). A call that ends well ends the streak.
 *
 * <p><b>In time</b> (ADR 0172): a <em>stall</em> begins at a failed call (callers failed) and lasts
 * while no call ends well and the node has work: a call on the wire, or inputs already waiting when
 * the wire emptied. The node is degraded once a stall has lasted {@code callTimeoutMs} and either
 * holds two failed calls, or a call past its timeout is still on the wire (its key or slot held)
 * while inputs wait. With the call limit at one call in front of a downstream that hangs, the
 * rule in calls waits for five call lifetimes (150 s with the defaults); this one trips at about
 * twice {@code callTimeoutMs}: the hung call fails its callers at one, and a second one later
 * nothing was served. What it does not trip on:
 * <ul>
 *   <li>one slow or failed call: a stall needs a second failure, or a call held past its timeout
 *   for a whole {@code callTimeoutMs} more with inputs behind it;
 *   <li>a busy downstream that serves: any call that ends well ends the stall;
 *   <li>a quiet node: the stall's time stops when the wire empties with nothing waiting, and a
 *   call whose inputs all came later starts afresh, its failures counted from none (failures
 *   hours apart on a node that sent nothing between are no stall); a call hung on the wire with
 *   nothing behind it is no stall either, until an input waits.
 * </ul>
 * Back to UP at the first call that ends well, as in calls, and only then: a stall that read
 * degraded stays so when the inputs that waited behind a hung call reach their own deadlines, or
 * the hung call ends failed and the wire empties (review AQ). "Read degraded" does not wait for
 * someone to ask: the ferry tells, as each transition begins, that a call past its timeout held
 * the wire while inputs waited until then ({@link #heldUp}), and the stall is judged at that
 * instant too (review AS, ADR 0171). How many calls are past their timeout is the ferry's own
 * count, in its snapshot (ADR 0170), not kept here.
 *
 * <h2>Invariants</h2>
 * Between the engine's transitions: {@code since == NONE}
 * iff {@code failures == 0}; {@code idleSince != NONE} only while {@code inFlight == 0}; {@code
 * tripped} only while {@code since != NONE}; {@code tripped} is set once the rule in time held at
 * an instant health was asked, or at one the ferry told ({@link #heldUp}), whichever came first. A stall that has read degraded, or that holds two
 * failures over the window, is ended only by a call that ends well; one that merely lasted the
 * window with a single failure ends at an idle gap like any other.
 */
final class HealthWatch {
  /** No instant: no stall, or not idle. */
  static final long NONE = Long.MIN_VALUE;

  private final long windowNanos;
  /** Failed calls in a row (the rule in calls); stops at the int's top (see {@link Operations#streak}). */
  private int inARow;
  /** Calls on the wire. */
  private int inFlight;
  /** When the current stall began (its first failed call), or NONE. */
  private long since = NONE;
  /** Failed calls in the current stall; stops at the int's top, as {@link #inARow} does. */
  private int failures;
  /** When the wire last emptied, or NONE while a call is on it. */
  private long idleSince = NONE;
  /**
   * The current stall has read degraded by the rule in time (review AQ): it stays so until a call
   * is served, whatever waits, so inputs that wait and expire behind a hung call do not make
   * health flap.
   */
  private boolean tripped;

  /** {@code windowNanos}: how long a stall lasts before it degrades the node ({@code callTimeoutMs}). */
  HealthWatch(long windowNanos) {
    this.windowNanos = windowNanos;
  }

  /**
   * A call started at {@code now}; {@code longestWait} is how long its longest-waiting input
   * waited (0 for a direct call). If the wire had emptied and that input came only after, nothing
   * was waiting meanwhile: the node was idle, and a stall begun before is over, unless it had
   * already lasted long enough to degrade the node.
   */
  void started(long now, long longestWait) {
    // A stall that already degraded the node stays until a call is served (the recovery rule):
    // ended by the next input, a node in front of a hung downstream with sparse inputs would
    // flap, down while idle and up with each input.
    if (needsWaits() && now - longestWait > idleSince && !degradedWhileIdle()) {
      since = NONE;
      failures = 0;
      tripped = false;
    }
    idleSince = NONE;
    inFlight++;
  }

  /** Calls the longest wait of a start for {@link #started} only when it matters (rarely). */
  boolean needsWaits() {
    return inFlight == 0 && idleSince != NONE && since != NONE;
  }

  /** A call's callers were failed at {@code now}: at its end, or at its timeout. */
  void failed(long now) {
    inARow = Operations.streak(inARow, true);
    if (since == NONE) {
      since = now;
    }
    failures = Operations.streak(failures, true);
  }

  /** A call is over at {@code now}; {@code ok} when it ended well and not past its timeout. */
  void ended(long now, boolean ok) {
    inFlight = Math.max(0, inFlight - 1);
    if (ok) {
      inARow = 0;
      since = NONE;
      failures = 0;
      tripped = false;
    }
    if (inFlight == 0) {
      idleSince = now;
    }
  }

  /**
   * A call past its timeout held the wire while inputs waited, until {@code now} (told as the
   * ferry's next transition began, ADR 0171): the rule in time is judged at that instant, as it
   * would have been had health been asked then. Without it the latch was set only by an answer:
   * a stall that qualified between two asks (its waiting input expired before the next) read UP
   * afterwards, and which answer a load balancer got hung on whether someone else had asked.
   */
  void heldUp(long now) {
    if (!tripped && since != NONE && stalledNanos(now) >= windowNanos) {
      tripped = true;
    }
  }

  /** Failed calls in a row. */
  int inARow() {
    return inARow;
  }

  /** How long the current stall has lasted at {@code now}, in nanoseconds: its time stops while idle. */
  long stalledNanos(long now) {
    if (since == NONE) {
      return 0;
    }
    long end = inFlight == 0 && idleSince != NONE ? idleSince : now;
    return Math.max(0, end - since);
  }

  /**
   * Whether the node is degraded at {@code now}: in calls, or in time. {@code heldUp}, asked only
   * when the answer hangs on it, says whether a call past its timeout is on the wire (holding its
   * key or slot) while inputs wait: the ferry's snapshot, {@code callsPastTimeout} and {@code
   * queuedInputs}.
   */
  boolean degraded(long now, BooleanSupplier heldUp) {
    if (inARow >= Operations.DEGRADED_AFTER) {
      return true;
    }
    if (tripped) {
      return true;
    }
    if (stalledNanos(now) < windowNanos) {
      return false;
    }
    // Read degraded once, the stall stays so until a call is served (the recovery rule): an input
    // waiting behind the hung call may expire, and the call may end, failed, leaving the wire idle.
    // The same latch is set between answers by heldUp(now), so it does not hang on being asked.
    tripped = failures >= 2 || heldUp.getAsBoolean();
    return tripped;
  }

  /**
   * Whether the stall, idle now, degrades the node: it read so already, or it would now (on an idle
   * wire no call is past its timeout, so only the second failure counts). A stall with one failure
   * that merely lasted the window, its call held past its timeout with nothing behind it, does not
   * (review AQ): kept across the gap, it made a lone failure hours later read degraded at once.
   */
  private boolean degradedWhileIdle() {
    return tripped || (failures >= 2 && idleSince - since >= windowNanos);
  }
}
