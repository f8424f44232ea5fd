package dev.ferry.internal;

import dev.ferry.FerryError;

/**
 * The side effects an engine transition asks for. The driver queues them and runs them only after
 * the transition has returned, so a call that completes inline, or a caller that submits again from
 * its callback, always finds the engine in a consistent state.
 */
public interface Effects<K, I> {
  /** Start the downstream call for {@code batch}. */
  void call(Batch<K, I> batch);

  /** Hand each caller of {@code batch} its outcome, from {@code batch.result} or {@code batch.failure}. */
  void deliver(Batch<K, I> batch);

  /** Fail one caller. */
  void fail(Entry<K, I> entry, FerryError kind, String message, Throwable cause);

  /** The ferry is closed and its last call is over. */
  void closed();
}
