package dev.ferry.internal;

/**
 * What an engine reports as it works, for metrics: called synchronously inside transitions, on the
 * owning loop, so an implementation must be cheap and must not call back into the ferry.
 */
public interface Probe {
  Probe NONE = new Probe() {};

  /** A call started: {@code waitsNanos} is how long each of its inputs waited, in sending order. */
  default void batchStarted(boolean direct, int size, long weight, long[] waitsNanos) {}

  /** A call is over; {@code failed} when it failed or timed out. */
  default void batchFinished(long latencyNanos, boolean failed) {}

  /** An input was refused: {@code "queueing"} (count) or {@code "weight"}. */
  default void rejected(String reason) {}

  /** A waiting input's deadline passed. */
  default void timedOut() {}
}
