package dev.ferry.internal;

/**
 * What an engine reports as it works, for metrics: called synchronously inside transitions, on the
 * owning loop, so an implementation must be cheap and must not call back into the ferry. What it
 * throws is reported and goes no further (see {@link #all}).
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

  /**
   * A call is over; {@code failed} when it failed or timed out. A probe added while calls are on
   * the wire hears this for each of them without having heard its {@link #batchStarted}: the start
   * is not replayed (what it carries, the inputs' waits, happened before the probe came), so a
   * probe that counts calls on the wire from the two must not let its count fall below zero. A
   * call given up at the owner's close is never told over: {@link #closed} is told instead (review
   * AR, ADR 0173).
   */
  default void batchFinished(long latencyNanos, boolean failed) {}

  /**
   * A call failed, or its call timeout passed ({@code cause} a {@link java.util.concurrent.TimeoutException}):
   * once per call, when its callers are failed, for an operator's log. {@code inputs} are the
   * call's, in sending order. A call that fails after its timeout was reported is not reported again.
   * A call given up at the owner's close is not told here: it is counted in {@code failedBatches},
   * and the ferry logs the calls it gave up in one line (ADR 0171).
   */
  default void batchFailed(Object key, java.util.List<?> inputs, Throwable cause) {}

  /**
   * A transition of the ferry begins while a call past its timeout is on the wire and inputs
   * wait (ADR 0171): told before any other event of that transition, so the state it describes
   * held until now, however the transition changes it. Health latches its stall on it, whether or
   * not anyone asked for health while that state held. Told inside the transition (ADR 0178): a
   * probe that submits to the ferry or closes it from here waits for the transition to end.
   */
  default void heldUp() {}

  /**
   * A call's timeout passed while it was still on the wire: reported just before its {@link
   * #batchFailed} (a {@link java.util.concurrent.TimeoutException}). The call keeps its key or
   * slot until {@link #overdueCallEnded}; meanwhile it is a call past its timeout on the wire.
   * How many there are is the snapshot's {@link dev.ferry.FerryMetrics#callsPastTimeout()}, kept by
   * the engine (ADR 0170): count from these two events only what happened while listening. A probe
   * added while such calls are on the wire is not told of them, and hears {@link
   * #overdueCallEnded} for each of them without this, as it hears {@link #batchFinished} without
   * {@link #batchStarted} (ADR 0173).
   */
  default void callOverdue() {}

  /** A call past its timeout is over (just after its {@link #batchFinished}). */
  default void overdueCallEnded() {}

  /** An input was refused: {@code "queueing"} (count) or {@code "weight"}. */
  default void rejected(String reason) {}

  /** A waiting input's deadline passed. */
  default void timedOut() {}

  /**
   * The ferry is closed: nothing more will be reported. On the loop; or, once its loop is gone
   * (its Vert.x closed), on the thread that found it gone: the one closing the ferry, or the one
   * adding this probe. A probe may let go of what it holds for the ferry.
   */
  default void closed() {}

  /** A ferry whose engine can report to probes. */
  interface Observable {
    /**
     * Adds {@code probe}: it hears of the ferry's work from now on, alongside any other. The
     * returned action removes it again. Both take effect on the ferry's context.
     */
    Runnable observe(Probe probe);
  }

  /**
   * Reports to every probe of a list, in order; the list may change between calls. A probe that
   * throws (a meter registry that fails, say) is shielded: its throw goes to {@code report} and
   * the other probes still hear of the event. Probes are called inside the engine's transitions,
   * where a throw let out would end a transition halfway: a call never started, its callers never
   * answered. Each event spells out its own loop rather than passing a lambda to a shared one:
   * these run per batch on the event loop, and a capturing lambda is an allocation per event.
   */
  static Probe all(java.util.List<Probe> probes, java.util.function.Consumer<Throwable> report) {
    return new Probe() {
      @Override
      public boolean active() {
        return !probes.isEmpty();
      }

      @Override
      public void batchStarted(boolean direct, int size, long weight, long[] waitsNanos) {
        for (Probe p : probes) {
          try {
            p.batchStarted(direct, size, weight, waitsNanos);
          } catch (Throwable t) {
            report.accept(t);
          }
        }
      }

      @Override
      public void batchFinished(long latencyNanos, boolean failed) {
        for (Probe p : probes) {
          try {
            p.batchFinished(latencyNanos, failed);
          } catch (Throwable t) {
            report.accept(t);
          }
        }
      }

      @Override
      public void batchFailed(Object key, java.util.List<?> inputs, Throwable cause) {
        for (Probe p : probes) {
          try {
            p.batchFailed(key, inputs, cause);
          } catch (Throwable t) {
            report.accept(t);
          }
        }
      }

      @Override
      public void callOverdue() {
        for (Probe p : probes) {
          try {
            p.callOverdue();
          } catch (Throwable t) {
            report.accept(t);
          }
        }
      }

      @Override
      public void overdueCallEnded() {
        for (Probe p : probes) {
          try {
            p.overdueCallEnded();
          } catch (Throwable t) {
            report.accept(t);
          }
        }
      }

      @Override
      public void heldUp() {
        for (Probe p : probes) {
          try {
            p.heldUp();
          } catch (Throwable t) {
            report.accept(t);
          }
        }
      }

      @Override
      public void rejected(String reason) {
        for (Probe p : probes) {
          try {
            p.rejected(reason);
          } catch (Throwable t) {
            report.accept(t);
          }
        }
      }

      @Override
      public void timedOut() {
        for (Probe p : probes) {
          try {
            p.timedOut();
          } catch (Throwable t) {
            report.accept(t);
          }
        }
      }

      @Override
      public void closed() {
        // A copy: a probe told of the close may stop observing, which changes the list.
        for (Probe p : java.util.List.copyOf(probes)) {
          try {
            p.closed();
          } catch (Throwable t) {
            report.accept(t);
          }
        }
      }
    };
  }
}
