package dev.ferry.cluster;

import dev.ferry.verticle.Submission;
import io.vertx.core.Promise;

/**
 * One input on its way through the cluster layer: accepted here (from a caller, a forward, or a
 * hand-off) and answered exactly once through {@link #answer}, whatever path it takes.
 */
final class Pending {
  public final Submission input;
  /** How many times it was forwarded before arriving here. */
  final int hop;
  /** Handed over by the key's previous owner: it goes before inputs held for the key. */
  final boolean handedOff;
  /** It passed this node before and came back: what the key's other inputs here may wait for, so it goes first. */
  boolean returned;
  /**
   * It passed a node that this node's earlier inputs of the key are unanswered at: it comes in that
   * node's order and need not wait for them; it ranks with the hand-offs.
   */
  boolean alongPath;
  /** Held because this node's earlier inputs of its key are on their way through another node. */
  boolean waitsForPath;

  /** Whether this input goes before {@code other} among a key's held inputs: hand-offs first, then arrival order. */
  boolean before(Pending other) {
    if (handedOff != other.handedOff) {
      return handedOff;
    }
    return seq < other.seq;
  }
  /** System.nanoTime() deadline, or Long.MAX_VALUE for none. */
  final long deadline;
  final Promise<Object> answer;
  /** The timer bounding its wait while held, or -1. */
  long holdTimer = -1;
  /** When {@link #holdTimer} fires (loop time). */
  long holdTimerAt;
  /** In one of the router's held queues now. */
  boolean held;
  /**
   * When its holds here must end (loop time), as the node that forwarded it here allows: that node
   * waits twice as long for its answer. It is then handed back, never applied ({@link
   * Router#RETURNED}, ADR 0109). Long.MAX_VALUE for a caller's input or a hand-off from this node's
   * ferry (bounded by the hold bound alone).
   */
  long giveUpAt = Long.MAX_VALUE;
  /**
   * When the node that forwarded it here stops waiting for it (loop time, twice its allowance from
   * its arrival; Long.MAX_VALUE with {@link #giveUpAt}): past it that node never sends it again
   * ({@code Router#handBackMarks}, ADR 0112).
   */
  long senderWaitsUntil = Long.MAX_VALUE;
  /**
   * When it arrived here (loop time; for a hand-off, when this node's ferry handed it off): its
   * holds here end within the hold bound from then ({@code Router#holdBound}, ADR 0112).
   */
  long arrivedAt;
  /** When it was first held here (loop time), for the text of its 503. */
  long heldSince;
  /** When its wait while held ends (System.nanoTime()), set at its first hold; 0 before. */
  long holdUntil;
  /**
   * Its last forward was handed back ({@link Router#RETURNED}): it goes again after a pause, but
   * the node that handed it back is not unreachable for that (ADR 0112).
   */
  boolean handedBack;
  /**
   * The number of its last forward from this node ({@code Router.Forward#no}), 0 if none: the same
   * client's inputs of the key forwarded from here after it have larger ones.
   */
  long forwardNo;
  /** The node its last forward from here went to, or null. */
  String forwardTarget;
  /**
   * It came back not delivered and is held here until sent again: a later input of its client and
   * key forwarded from here after it, once it may have been applied, means this one never is
   * ({@code Router#behindSent}, ADR 0115).
   */
  boolean behindSent;
  /** Held at the hop limit and let go: it may be passed on once more (still paced by the hold). */
  boolean retry;
  /** The node that forwarded it here, or null when a caller sent it. */
  String sender;
  /** The nodes that forwarded it before it arrived here, comma-separated in order, or "" for none. */
  String visited = "";
  /**
   * Its sender (a routing client, or the node it entered at) and, apart, its place in that sender's
   * order: inputs of one sender and key with a smaller place were sent earlier. Null when unknown.
   */
  String origin;
  long originSeq;

  /** Sets {@link #origin} from "sender#n"; a malformed one leaves it unknown. */
  void origin(String text) {
    int hash = text.lastIndexOf('#');
    try {
      originSeq = Long.parseLong(text.substring(hash + 1));
      origin = text.substring(0, hash + 1);
    } catch (NumberFormatException | IndexOutOfBoundsException e) {
      origin = null;
    }
  }

  /** {@link #origin} as carried on the wire ("sender#n"), or null. */
  String originText() {
    return origin == null ? null : origin + originSeq;
  }
  /** Its arrival number at this node (1, 2, ...; 0 before it is first routed): held inputs keep this order. */
  long seq;

  Pending(Submission input, int hop, boolean handedOff, long deadline, Promise<Object> answer) {
    this.input = input;
    this.hop = hop;
    this.handedOff = handedOff;
    this.deadline = deadline;
    this.answer = answer;
  }

  /** Whole ms left before the deadline (at least 1 while it has not passed), 0 for none, -1 if passed. */
  long remainingMs(long now) {
    if (deadline == Long.MAX_VALUE) {
      return 0;
    }
    long left = deadline - now;
    return left <= 0 ? -1 : Math.max(1, left / 1_000_000);
  }
}
