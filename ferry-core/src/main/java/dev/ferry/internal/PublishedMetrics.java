package dev.ferry.internal;

import dev.ferry.FerryMetrics;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Supplier;

/**
 * A ferry's metrics, readable from any thread without touching the engine off its loop.
 *
 * <p>On the loop a read is exact. Every transition ends by publishing a fresh snapshot (one small
 * immutable object, stored with release semantics), before its effects answer anyone, so a read
 * from any other thread, such as a Prometheus scrape on another event loop, sees the state as of
 * the last transition that completed (a caller who got its answer sees its own submission): never the zeros of a copy that was not made yet (issue 13, item 12), and never a mix
 * of two moments, since the fields of one snapshot always agree with each other. A ferry with
 * nothing happening publishes nothing and keeps no timer.
 */
final class PublishedMetrics {
  private static final VarHandle LAST;

  static {
    try {
      LAST = MethodHandles.lookup().findVarHandle(PublishedMetrics.class, "last", FerryMetrics.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Loop loop;
  private final Supplier<FerryMetrics> read;
  /** Written only on the loop (release), read anywhere (acquire). */
  @SuppressWarnings("unused")
  private FerryMetrics last = FerryMetrics.EMPTY;

  PublishedMetrics(Loop loop, Supplier<FerryMetrics> read) {
    this.loop = loop;
    this.read = read;
  }

  FerryMetrics get() {
    if (loop.inLoop()) {
      return read.get();
    }
    return (FerryMetrics) LAST.getAcquire(this);
  }

  /** Publishes the state as it is now; on the loop, at the end of a transition. */
  void publish() {
    LAST.setRelease(this, read.get());
  }
}
