package dev.ferry.internal;

/**
 * What an engine reports as it works, for metrics: called synchronously inside transitions, on the
 * owning loop, so an implementation must be cheap and must not call back into the ferry.
 */
public interface Probe {
  Probe NONE = new Probe() {
    @Override
    public boolean active() {
      return false;
    }
  };

  /** Whether anyone listens: lets an engine skip work done only for the probe. */
  default boolean active() {
    return true;
  }

  /** A call started: {@code waitsNanos} is how long each of its inputs waited, in sending order. */
  default void batchStarted(boolean direct, int size, long weight, long[] waitsNanos) {}

  /** A call is over; {@code failed} when it failed or timed out. */
  default void batchFinished(long latencyNanos, boolean failed) {}

  /** An input was refused: {@code "queueing"} (count) or {@code "weight"}. */
  default void rejected(String reason) {}

  /** A waiting input's deadline passed. */
  default void timedOut() {}

  /** A ferry whose engine can report to probes. */
  interface Observable {
    /**
     * Adds {@code probe}: it hears of the ferry's work from now on, alongside any other. The
     * returned action removes it again. Both take effect on the ferry's context.
     */
    Runnable observe(Probe probe);
  }

  /** Reports to every probe of a list, in order; the list may change between calls. */
  static Probe all(java.util.List<Probe> probes) {
    return new Probe() {
      @Override
      public boolean active() {
        return !probes.isEmpty();
      }

      @Override
      public void batchStarted(boolean direct, int size, long weight, long[] waitsNanos) {
        for (Probe p : probes) {
          p.batchStarted(direct, size, weight, waitsNanos);
        }
      }

      @Override
      public void batchFinished(long latencyNanos, boolean failed) {
        for (Probe p : probes) {
          p.batchFinished(latencyNanos, failed);
        }
      }

      @Override
      public void rejected(String reason) {
        for (Probe p : probes) {
          p.rejected(reason);
        }
      }

      @Override
      public void timedOut() {
        for (Probe p : probes) {
          p.timedOut();
        }
      }
    };
  }
}
