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

  /**
   * A key was handed off: it has no call in flight here any more, and {@code entries} are its
   * waiting inputs in sending order, now the new owner's to serve (their callers still wait).
   * {@code handOffs} are the tokens given to {@link PerKeyEngine#handOff} for this key.
   */
  void handedOff(K key, java.util.List<Entry<K, I>> entries, java.util.List<Object> handOffs);

  /** The ferry is closed and its last call is over. */
  void closed();

  /**
   * The owner's close gave up calls still on the wire (ADR 0171): {@code calls} calls whose callers
   * were answered FAILED now ({@code keys} of them had a key: one per key), {@code inputs} inputs
   * in all, and {@code pastTimeout} calls already past their timeout, answered then. Once per close,
   * when there were any: for one log line.
   */
  void gaveUp(int calls, int keys, int inputs, int pastTimeout);
}
