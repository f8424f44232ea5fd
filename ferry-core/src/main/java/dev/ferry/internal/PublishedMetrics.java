package dev.ferry.internal;

import dev.ferry.FerryMetrics;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Supplier;

/**
 * A ferry's metrics, readable from any thread without touching the engine off its loop.
 *
 * <p>On the loop a read is exact. Every transition ends by publishing the state (before its
 * effects answer anyone), so a read from any other thread, such as a Prometheus scrape on another
 * event loop, sees the state as of the last transition that completed (a caller who got its answer
 * sees its own submission): never the zeros of a copy that was not made yet (issue 13, item 12),
 * and never a mix of two moments, since the fields of one read always agree with each other. A
 * ferry with nothing happening publishes nothing and keeps no timer.
 *
 * <p>How, without an object per transition (one per input on a hot key, ADR 0074): the loop writes
 * the figures into one array, between two writes of a version that is odd while it writes; a
 * reader off the loop copies the array and keeps the copy only if the version was even and the
 * same before and after (a sequence lock: the loop never waits, a reader that met a write reads
 * again, which takes nanoseconds since one write is a handful of stores). No lock is held, and
 * only the loop writes.
 */
final class PublishedMetrics {
  private static final VarHandle VERSION;

  static {
    try {
      VERSION = MethodHandles.lookup().findVarHandle(PublishedMetrics.class, "version", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The order of {@link FerryMetrics}' components. */
  private static final int FIELDS = 16;

  private final Loop loop;
  private final Supplier<FerryMetrics> read;
  /** Even while {@link #figures} are stable, odd while the loop writes them. Written only on the loop. */
  @SuppressWarnings("unused")
  private int version;
  /** The last published state, component by component; written only on the loop, between versions. */
  private final long[] figures = new long[FIELDS];

  PublishedMetrics(Loop loop, Supplier<FerryMetrics> read) {
    this.loop = loop;
    this.read = read;
  }

  FerryMetrics get() {
    if (loop.inLoop()) {
      return read.get();
    }
    long[] copy = new long[FIELDS];
    while (true) {
      int before = (int) VERSION.getAcquire(this);
      if ((before & 1) == 0) {
        System.arraycopy(figures, 0, copy, 0, FIELDS);
        // The copy's loads complete before the version is read again.
        VarHandle.acquireFence();
        if ((int) VERSION.getOpaque(this) == before) {
          return of(copy);
        }
      }
      Thread.onSpinWait();
    }
  }

  /** Publishes the state as it is now; on the loop, at the end of a transition. */
  void publish() {
    // The snapshot does not escape: the JIT can keep its fields in registers (no allocation).
    FerryMetrics m = read.get();
    int v = version;
    VERSION.setOpaque(this, v + 1);
    // The odd version is visible before any figure changes.
    VarHandle.storeStoreFence();
    long[] f = figures;
    f[0] = m.inFlightBatches();
    f[1] = m.queuedInputs();
    f[2] = m.queuedWeight();
    f[3] = m.activeLanes();
    f[4] = m.submitted();
    f[5] = m.rejected();
    f[6] = m.batches();
    f[7] = m.directCalls();
    f[8] = m.failedBatches();
    f[9] = m.timedOut();
    f[10] = m.callLimit();
    f[11] = m.callsWaiting();
    f[12] = m.seenLatencyMicros();
    f[13] = m.seenFloorMicros();
    f[14] = m.seenLoopLagMicros();
    f[15] = m.callsPastTimeout();
    VERSION.setRelease(this, v + 2);
  }

  private static FerryMetrics of(long[] f) {
    return new FerryMetrics((int) f[0], (int) f[1], f[2], (int) f[3], f[4], f[5], f[6], f[7], f[8], f[9],
        (int) f[10], (int) f[11], f[12], f[13], f[14], (int) f[15]);
  }
}
