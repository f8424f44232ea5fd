package dev.ferry.internal;

/**
 * Where a ferry's state lives and how time reaches it: the owning event loop, a clock and timers.
 *
 * <p>The Vert.x implementation ({@link VertxLoop}) runs on one context; tests back it with virtual
 * time so that the engine under test is the real one, driven deterministically. Scheduling never
 * runs the task inline, which is why an engine may set timers in the middle of a transition.
 */
public interface Loop {
  /** Whether the caller is running on this loop (and may touch its state). */
  boolean inLoop();

  /** Runs {@code task} on this loop later, in submission order with other tasks. */
  void execute(Runnable task);

  /** The current time in nanoseconds, for deadlines and ages; only differences are meaningful. */
  long nanoTime();

  /** Runs {@code task} on this loop after at least {@code delayNanos}; returns an id for {@link #cancel}. */
  long schedule(long delayNanos, Runnable task);

  /** Cancels a timer that has not fired yet; cancelling a fired or unknown id does nothing. */
  void cancel(long timerId);

  /**
   * Calls {@code hook} once when the loop's owner closes: the verticle whose context this is
   * undeploys, or the Vert.x instance closes; at once, inside this call, when the owner has closed
   * already. The hook may run on any thread; it calls the Runnable it is given once it is done, and
   * the owner's close waits for that. Returns what unregisters the hook. By default the owner never
   * closes.
   */
  default Runnable onOwnerClose(java.util.function.Consumer<Runnable> hook) {
    return () -> {};
  }

  /**
   * Reports a bug in user code that the ferry goes past: what a caller's answer handle or callback
   * threw, a downstream Future whose {@code onComplete} threw (ADR 0129), a key whose {@code
   * equals}/{@code hashCode} threw while its lane was removed. Vert.x reports to the context's
   * exception handler, as it does for a Future's callback; by default it is logged. Never throws:
   * it is called where a throw would end a transition or an effect halfway (what the Vert.x loop's
   * handler throws is logged).
   */
  default void report(Throwable failure) {
    System.getLogger(Loop.class.getName()).log(System.Logger.Level.ERROR, "user code threw; the ferry went on", failure);
  }
}
