package dev.ferry.internal;

import dev.ferry.FerryMetrics;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A ferry's metrics, readable from any thread without touching the engine off its loop.
 *
 * <p>On the loop a read is exact (and refreshes the published copy). Elsewhere, such as a
 * Prometheus scrape on another event loop, it returns the copy last published on the loop; the
 * first such read starts a refresh every second, on the loop, until {@link #stop()}. The copy is
 * one immutable snapshot, so the fields of one read always agree with each other.
 */
final class PublishedMetrics {
  private static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final Loop loop;
  private final Supplier<FerryMetrics> read;
  private volatile FerryMetrics last;
  private volatile boolean refreshing;
  /** Touched only on the loop. */
  private long timer = -1;
  private boolean stopped;

  PublishedMetrics(Loop loop, Supplier<FerryMetrics> read) {
    this.loop = loop;
    this.read = read;
  }

  FerryMetrics get() {
    if (loop.inLoop()) {
      FerryMetrics now = read.get();
      last = now;
      return now;
    }
    if (!refreshing) {
      refreshing = true;
      loop.execute(this::refresh);
    }
    FerryMetrics copy = last;
    return copy != null ? copy : FerryMetrics.EMPTY;
  }

  /** Stops refreshing; on the loop. */
  void stop() {
    stopped = true;
    if (timer >= 0) {
      loop.cancel(timer);
      timer = -1;
    }
    last = read.get();
  }

  private void refresh() {
    timer = -1;
    if (stopped) {
      return;
    }
    last = read.get();
    timer = loop.schedule(REFRESH_NANOS, this::refresh);
  }
}
