package dev.ferry.testing;

import dev.ferry.internal.Loop;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Loop} in virtual time for deterministic tests: the thread that created it is the loop,
 * tasks run when the test lets them ({@link #runPending()}, {@link #advance}), and time moves only
 * when the test says so. Timers due at the same instant run in the order they were set.
 */
public final class VirtualLoop implements Loop {
  private record Timer(long at, long id, Runnable task) {}

  private final Thread owner = Thread.currentThread();
  private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
  private final PriorityQueue<Timer> timers =
      new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.id, b.id));
  private final Set<Long> cancelled = new HashSet<>();
  private long now = 1_000_000_000L;
  private long nextId;

  @Override
  public boolean inLoop() {
    return Thread.currentThread() == owner;
  }

  @Override
  public void execute(Runnable task) {
    tasks.add(task);
  }

  @Override
  public long nanoTime() {
    return now;
  }

  @Override
  public long schedule(long delayNanos, Runnable task) {
    long id = nextId++;
    timers.add(new Timer(now + Math.max(0, delayNanos), id, task));
    return id;
  }

  @Override
  public void cancel(long timerId) {
    cancelled.add(timerId);
  }

  /** Runs queued tasks (not timers) until none is left. */
  public void runPending() {
    for (Runnable t = tasks.poll(); t != null; t = tasks.poll()) {
      t.run();
    }
  }

  /** Moves time forward by {@code ms} milliseconds, running every timer that falls due, in order. */
  public void advanceMillis(long ms) {
    advance(TimeUnit.MILLISECONDS.toNanos(ms));
  }

  public void advance(long nanos) {
    long until = now + nanos;
    runPending();
    while (!timers.isEmpty() && timers.peek().at <= until) {
      Timer t = timers.poll();
      if (cancelled.remove(t.id)) {
        continue;
      }
      now = Math.max(now, t.at);
      t.task.run();
      runPending();
    }
    now = until;
  }

  /** The time of the next live timer, or -1 when none is set. */
  public long nextTimerAt() {
    while (!timers.isEmpty() && cancelled.contains(timers.peek().id)) {
      cancelled.remove(timers.poll().id);
    }
    return timers.isEmpty() ? -1 : timers.peek().at;
  }

  /** Live timers (for leak checks). */
  public int liveTimers() {
    int live = 0;
    for (Timer t : timers) {
      if (!cancelled.contains(t.id)) {
        live++;
      }
    }
    return live;
  }

  public long nowMillis() {
    return TimeUnit.NANOSECONDS.toMillis(now);
  }
}
