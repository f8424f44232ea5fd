package dev.ferry.internal;

import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * The call timeouts of one engine, kept with a single timer. Runs only on the owning loop.
 *
 * <p>Every call of an engine has the same timeout, so their deadlines fall in the order the calls
 * started: the open calls form a FIFO whose head is always the next to time out. One timer, armed
 * for the head, replaces a timer per call (set and cancelled for every batch, direct calls
 * included). A call that completes is only marked; it leaves the FIFO when it reaches the head,
 * and the FIFO is compacted when finished calls outnumber open ones (a hung call at the head
 * would otherwise hold every later one).
 */
final class CallTimeouts<K, I> {
  private final Loop loop;
  private final long timeoutNanos;
  private final Consumer<Batch<K, I>> overdue;
  private final ArrayDeque<Batch<K, I>> open = new ArrayDeque<>();
  private int live;
  private long timer = -1;
  private long timerAt;

  CallTimeouts(Loop loop, long timeoutNanos, Consumer<Batch<K, I>> overdue) {
    this.loop = loop;
    this.timeoutNanos = timeoutNanos;
    this.overdue = overdue;
  }

  /** A call started (its {@code startedAt} is now, so it is the latest deadline). */
  void started(Batch<K, I> batch) {
    open.add(batch);
    live++;
    if (timer < 0) {
      arm();
    }
  }

  /** A call is over (it may already have been reported overdue). */
  void over(Batch<K, I> batch) {
    if (!batch.overdue) {
      live--;
    }
    dropFinishedHead();
    if (open.isEmpty()) {
      cancel();
    } else if (open.size() > 2 * live + 32) {
      open.removeIf(b -> b.over || b.overdue);
    }
  }

  private void fire() {
    timer = -1;
    long now = loop.nanoTime();
    dropFinishedHead();
    while (!open.isEmpty() && Deadlines.after(open.peek().startedAt, timeoutNanos) <= now) {
      Batch<K, I> late = open.poll();
      live--;
      late.overdue = true;
      overdue.accept(late);
      dropFinishedHead();
    }
    if (!open.isEmpty()) {
      arm();
    }
  }

  /**
   * Gives up on every open call (its owner is closing): each is marked overdue and over, and
   * handed to {@code abandoned}; the timer stops. A completion that arrives later finds its call
   * over and is ignored. A call already past its timeout left the FIFO when it timed out (see
   * {@link #fire}): it is not handed over again, its callers having been answered then (review AR).
   */
  void abandonAll(Consumer<Batch<K, I>> abandoned) {
    for (Batch<K, I> b : open) {
      if (!b.over) {
        b.overdue = true;
        b.over = true;
        abandoned.accept(b);
      }
    }
    live = 0;
    open.clear();
    cancel();
  }

  private void dropFinishedHead() {
    while (!open.isEmpty() && (open.peek().over || open.peek().overdue)) {
      open.poll();
    }
  }

  private void arm() {
    long at = Deadlines.after(open.peek().startedAt, timeoutNanos);
    if (timer >= 0 && timerAt <= at) {
      return; // fires early enough; it re-arms for the then head
    }
    cancel();
    timerAt = at;
    timer = loop.schedule(at - loop.nanoTime(), this::fire);
  }

  private void cancel() {
    if (timer >= 0) {
      loop.cancel(timer);
      timer = -1;
    }
  }
}
