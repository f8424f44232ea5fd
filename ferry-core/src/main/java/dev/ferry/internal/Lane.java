package dev.ferry.internal;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.Queue;

/**
 * One key's waiting inputs, and whether the key has a call in flight. Runs only on the owning loop.
 *
 * <p>An entry that is settled while it waits (its deadline passed) is forgotten at once in the live
 * counts but left in the queue, and skipped when it reaches the head: removing it from the middle
 * would cost a scan per timeout. Until it is really gone it still takes room: it is counted in the
 * engine's {@link Held} totals, which admission checks against the waiting room's bounds, so
 * nothing a caller can make the node hold escapes {@code maxQueueing}/{@code maxQueuedWeight}
 * (issue 13, item 2). An expired head goes at once; the queue is compacted once expired entries are
 * as many as the live ones, and emptied when none is live, so at most as many expired entries as
 * live ones are held and the cost stays O(1) amortized per expiry.
 */
final class Lane<K, I> {
  /**
   * Expired entries still held in some lane's queue, over every lane of one engine: they count
   * toward the waiting room until they are gone.
   */
  static final class Held {
    int expired;
    long expiredWeight;
  }

  final K key;
  private final Queue<Entry<K, I>> waiting;
  private final boolean submissionOrder;
  private final Held held;
  /** Live waiting entries and their total weight. */
  int count;
  long weight;
  /** Expired entries still in {@link #waiting}, and their weight. */
  private int expired;
  private long expiredWeight;
  /** A call for this key is on the wire (direct or batch): the key is reserved until it is over. */
  boolean inFlight;
  /** The lane is in a ready line, waiting for a slot (or retired there, waiting to be skipped). */
  boolean inLine;
  /** Adaptive dispatch: the key was idle when this lane was made, and it has not been granted yet. */
  boolean idle;
  /**
   * Adaptive dispatch: the admission number of the lane's next input when it joined the busy line,
   * or when it was last re-tagged there.
   */
  long tag;
  /**
   * Adaptive dispatch: the input {@link #tag} names; once it is no longer the lane's next input
   * (it expired, or under a custom order an input sorting before it came), the tag is stale.
   */
  Entry<K, I> tagged;
  /**
   * Adaptive dispatch: the inputs admitted to the engine when this lane's last call was granted
   * from the idle line ahead of waiting busy lanes (ADR 0183); -1 when its last call was not such a grant.
   */
  long grantedAt;
  /**
   * The lane was removed from the engine's map; a stale reference in a line is skipped. A retired
   * lane holds no entry ({@link #release}), so a stale reference costs only the lane itself.
   */
  boolean retired;
  long delayTimer = -1;
  /**
   * Non-null while the key is being handed to another owner: the lane is no longer dispatched,
   * and once its call in flight is over its waiting entries go to these waiters' hand-off.
   */
  java.util.List<Object> handOffs;

  Lane(K key, Comparator<Entry<K, I>> order, Held held) {
    this.key = key;
    this.held = held;
    this.submissionOrder = order == null;
    this.waiting = order == null ? new ArrayDeque<>() : new PriorityQueue<>(order);
  }

  void add(Entry<K, I> entry) {
    entry.lane = this;
    waiting.add(entry);
    count++;
    weight += entry.weight;
  }

  /** The next live entry in sending order, or null. */
  Entry<K, I> peek() {
    Entry<K, I> head = waiting.peek();
    while (head != null && !head.waiting()) {
      waiting.poll();
      dropped(head);
      head = waiting.peek();
    }
    return head;
  }

  /** Removes the live head returned by {@link #peek()}. */
  Entry<K, I> poll() {
    Entry<K, I> head = peek();
    if (head != null) {
      waiting.poll();
      count--;
      weight -= head.weight;
    }
    return head;
  }

  /**
   * Accounts for an entry settled while it waited; it stays queued (and held) until it is compacted
   * away, unless it is the head, which goes at once. Settle it before: a head still reading as
   * waiting would stay held, taking room in the waiting room until the lane next moved.
   */
  void forget(Entry<K, I> entry) {
    assert !entry.waiting() : "forgot an entry that is still waiting";
    count--;
    weight -= entry.weight;
    expired++;
    expiredWeight += entry.weight;
    held.expired++;
    held.expiredWeight += entry.weight;
    if (count == 0) {
      release();
      return;
    }
    peek(); // an expired head goes at once, in O(1)
    if (expired >= count) {
      waiting.removeIf(e -> {
        if (e.waiting()) {
          return false;
        }
        dropped(e);
        return true;
      });
    }
  }

  /** Arrival time of the oldest live entry (which, under a custom order, need not be the head). */
  long oldestArrival() {
    if (submissionOrder) {
      Entry<K, I> head = peek();
      return head == null ? Long.MAX_VALUE : head.arrivedAt;
    }
    long oldest = Long.MAX_VALUE;
    for (Entry<K, I> e : waiting) {
      if (e.waiting() && e.arrivedAt < oldest) {
        oldest = e.arrivedAt;
      }
    }
    return oldest;
  }

  /** Removes and returns every live entry (for close and hand-off), and lets go of the expired ones. */
  java.util.List<Entry<K, I>> takeAll() {
    java.util.List<Entry<K, I>> all = new java.util.ArrayList<>(count);
    for (Entry<K, I> e = poll(); e != null; e = poll()) {
      all.add(e);
    }
    release();
    return all;
  }

  /** Lets go of every expired entry still queued; only expired ones may be left (retiring, or nothing live). */
  void release() {
    assert count == 0 : "released a lane with live entries";
    waiting.clear();
    held.expired -= expired;
    held.expiredWeight -= expiredWeight;
    expired = 0;
    expiredWeight = 0;
  }

  /** Expired entries this lane still holds (for invariant checks). */
  int expiredHeld() {
    return expired;
  }

  private void dropped(Entry<K, I> gone) {
    expired--;
    expiredWeight -= gone.weight;
    held.expired--;
    held.expiredWeight -= gone.weight;
  }
}
