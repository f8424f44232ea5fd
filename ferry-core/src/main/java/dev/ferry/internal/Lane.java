package dev.ferry.internal;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.Queue;

/**
 * One key's waiting inputs, and whether the key has a call in flight. Runs only on the owning loop.
 *
 * <p>An entry that is settled while it waits (its deadline passed) is forgotten at once in the
 * counts but left in the queue, and skipped when it reaches the head: removing it from the middle
 * would cost a scan per timeout. The queue is compacted when such dead entries outnumber the live.
 */
final class Lane<K, I> {
  final K key;
  private final Queue<Entry<K, I>> waiting;
  private final boolean submissionOrder;
  /** Live waiting entries and their total weight. */
  int count;
  long weight;
  /** A call for this key is on the wire (direct or batch): the key is reserved until it is over. */
  boolean inFlight;
  /** The lane is in a ready line, waiting for a slot (or retired there, waiting to be skipped). */
  boolean inLine;
  /** Adaptive dispatch: the key was idle when this lane was made, and it has not been granted yet. */
  boolean idle;
  /** Adaptive dispatch: the admission number of the lane's next input when it joined the busy line. */
  long tag;
  /** The lane was removed from the engine's map; a stale reference in the line is skipped. */
  boolean retired;
  long delayTimer = -1;
  /**
   * Non-null while the key is being handed to another owner: the lane is no longer dispatched,
   * and once its call in flight is over its waiting entries go to these waiters' hand-off.
   */
  java.util.List<Object> handOffs;

  Lane(K key, Comparator<Entry<K, I>> order) {
    this.key = key;
    this.submissionOrder = order == null;
    this.waiting = order == null ? new ArrayDeque<>() : new PriorityQueue<>(order);
  }

  void add(Entry<K, I> entry) {
    waiting.add(entry);
    count++;
    weight += entry.weight;
  }

  /** The next live entry in sending order, or null. */
  Entry<K, I> peek() {
    Entry<K, I> head = waiting.peek();
    while (head != null && !head.waiting()) {
      waiting.poll();
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

  /** Accounts for an entry settled while it waited; it stays queued until it reaches the head. */
  void forget(Entry<K, I> entry) {
    count--;
    weight -= entry.weight;
    if (waiting.size() > 2 * count + 32) {
      waiting.removeIf(e -> !e.waiting());
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

  /** Removes and returns every live entry (for close). */
  java.util.List<Entry<K, I>> takeAll() {
    java.util.List<Entry<K, I>> all = new java.util.ArrayList<>(count);
    for (Entry<K, I> e = poll(); e != null; e = poll()) {
      all.add(e);
    }
    waiting.clear();
    return all;
  }
}
