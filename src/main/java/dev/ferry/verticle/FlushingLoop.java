package dev.ferry.verticle;

import dev.ferry.internal.Loop;

/**
 * WORKAROUND for an engine/driver gap (reported on issue 4; remove once the driver is fixed).
 *
 * <p>{@code PerKeyEngine} sets its timers (a caller's deadline, the call timeout, the batch delay,
 * the drain timeout) straight on the {@link Loop}, and their tasks run outside {@code
 * Driver.onLoop}. The effects such a task queues (fail a caller with 504 or 502, start a batch
 * that became due, fail waiting inputs with 503) then sit in the driver's queue until some other
 * transition flushes it: a 504 arrives only when the lane next moves, contrary to the contract.
 *
 * <p>This loop runs each timer task and then {@code flush}, a no-op transition through the
 * driver's public entry point that runs the queued effects at once. The proper fix is in {@code
 * PerKeyFerry}/{@code Driver}: hand the engine a loop whose {@code schedule} runs tasks through
 * {@code onLoop}.
 */
final class FlushingLoop implements Loop {
  private final Loop inner;
  private Runnable flush = () -> {};

  FlushingLoop(Loop inner) {
    this.inner = inner;
  }

  /** Set once the ferry exists (it needs this loop to be built). */
  void flushWith(Runnable flush) {
    this.flush = flush;
  }

  @Override
  public boolean inLoop() {
    return inner.inLoop();
  }

  @Override
  public void execute(Runnable task) {
    inner.execute(task);
  }

  @Override
  public long nanoTime() {
    return inner.nanoTime();
  }

  @Override
  public long schedule(long delayNanos, Runnable task) {
    return inner.schedule(delayNanos, () -> {
      task.run();
      flush.run();
    });
  }

  @Override
  public void cancel(long timerId) {
    inner.cancel(timerId);
  }
}
