package dev.ferry.internal;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The per-key engine's ready line: lanes waiting for a slot, first come first served. Runs only on
 * the owning loop.
 *
 * <p>An intrusive doubly linked list (the links live on {@link Lane}), so that a lane can leave
 * from the middle in O(1). That is what keeps the line within the waiting room's bounds: a lane
 * whose inputs all expired while every slot was busy is taken out at once, instead of staying in
 * line, with its expired inputs, until a slot frees (issue 13, item 2). {@link Lane#inLine} is
 * maintained here and only here.
 */
final class ReadyLine<K, I> implements Iterable<Lane<K, I>> {
  private Lane<K, I> head;
  private Lane<K, I> tail;
  private int size;

  /** Puts {@code lane} at the back; it must not be in line already. */
  void add(Lane<K, I> lane) {
    assert !lane.inLine : "lane " + lane.key + " is already in line";
    lane.inLine = true;
    lane.prev = tail;
    lane.next = null;
    if (tail == null) {
      head = lane;
    } else {
      tail.next = lane;
    }
    tail = lane;
    size++;
  }

  /** Takes the lane at the front, or null. */
  Lane<K, I> poll() {
    Lane<K, I> first = head;
    if (first != null) {
      remove(first);
    }
    return first;
  }

  /** Takes {@code lane} out of the line wherever it stands; does nothing if it is not in line. */
  void remove(Lane<K, I> lane) {
    if (!lane.inLine) {
      return;
    }
    if (lane.prev == null) {
      head = lane.next;
    } else {
      lane.prev.next = lane.next;
    }
    if (lane.next == null) {
      tail = lane.prev;
    } else {
      lane.next.prev = lane.prev;
    }
    lane.prev = null;
    lane.next = null;
    lane.inLine = false;
    size--;
  }

  boolean isEmpty() {
    return head == null;
  }

  int size() {
    return size;
  }

  void clear() {
    while (head != null) {
      remove(head);
    }
  }

  @Override
  public Iterator<Lane<K, I>> iterator() {
    return new Iterator<>() {
      private Lane<K, I> at = head;

      @Override
      public boolean hasNext() {
        return at != null;
      }

      @Override
      public Lane<K, I> next() {
        if (at == null) {
          throw new NoSuchElementException();
        }
        Lane<K, I> lane = at;
        at = at.next;
        return lane;
      }
    };
  }
}
