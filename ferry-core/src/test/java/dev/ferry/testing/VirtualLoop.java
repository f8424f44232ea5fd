package dev.ferry.testing;

import dev.ferry.internal.Loop;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
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
  private final TreeSet<Timer> timers =
      new TreeSet<>(Comparator.comparingLong(Timer::at).thenComparingLong(Timer::id));
  private final Map<Long, Timer> live = new HashMap<>();
  private long now = 1_000_000_000L;
  private long nextId;
  private long postedTaskDelay;
  private final java.util.List<java.util.function.Consumer<Runnable>> ownerCloseHooks = new java.util.ArrayList<>();

  @Override
  public boolean inLoop() {
    return Thread.currentThread() == owner;
  }

  @Override
  public void execute(Runnable task) {
    if (postedTaskDelay > 0) {
      schedule(postedTaskDelay, task);
    } else {
      tasks.add(task);
    }
  }

  /**
   * From now on, a task posted with {@link #execute} runs {@code nanos} after it was posted (as a
   * timer) instead of at the next {@link #runPending}: a loop that runs what is queued on it late,
   * as one whose thread waits for a core does. 0 (the default) turns it off.
   */
  public void delayPostedTasks(long nanos) {
    postedTaskDelay = nanos;
  }

  @Override
  public Runnable onOwnerClose(java.util.function.Consumer<Runnable> hook) {
    ownerCloseHooks.add(hook);
    return () -> ownerCloseHooks.remove(hook);
  }

  /**
   * The owner goes away (its verticle undeploys, its Vert.x closes): every ferry hooked to this
   * loop starts its owner's close, as {@code Context.addCloseHook} would run it. Returns a counter
   * (one cell) of the hooks that have said they are done; it grows as they finish.
   */
  public int[] closeOwner() {
    int[] done = new int[1];
    for (java.util.function.Consumer<Runnable> hook : java.util.List.copyOf(ownerCloseHooks)) {
      hook.accept(() -> done[0]++);
    }
    return done;
  }

  @Override
  public long nanoTime() {
    return now;
  }

  @Override
  public long schedule(long delayNanos, Runnable task) {
    long id = nextId++;
    Timer t = new Timer(dev.ferry.internal.Deadlines.after(now, Math.max(0, delayNanos)), id, task);
    timers.add(t);
    live.put(id, t);
    return id;
  }

  /** What callers' answer handles threw, in order ({@link Loop#report}). */
  public final java.util.List<Throwable> reported = new java.util.ArrayList<>();

  @Override
  public void report(Throwable failure) {
    reported.add(failure);
  }

  @Override
  public void cancel(long timerId) {
    Timer t = live.remove(timerId);
    if (t != null) {
      timers.remove(t);
    }
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
    while (!timers.isEmpty() && timers.first().at <= until) {
      Timer t = timers.pollFirst();
      live.remove(t.id);
      now = Math.max(now, t.at);
      t.task.run();
      runPending();
    }
    now = until;
  }

  /**
   * Moves time forward by {@code ms} without running any task or timer: the loop was busy with
   * something else meanwhile. What was due runs at the next {@link #runPending()} or advance.
   */
  public void stallMillis(long ms) {
    now += TimeUnit.MILLISECONDS.toNanos(ms);
  }

  /** The time of the next timer, or -1 when none is set. */
  public long nextTimerAt() {
    return timers.isEmpty() ? -1 : timers.first().at;
  }

  /** Timers set and neither fired nor cancelled (for leak checks). */
  public int liveTimers() {
    return timers.size();
  }

  public long nowMillis() {
    return TimeUnit.NANOSECONDS.toMillis(now);
  }
}
