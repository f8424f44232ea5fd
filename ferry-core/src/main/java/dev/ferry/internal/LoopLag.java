package dev.ferry.internal;

/**
 * How late the owning loop runs what is queued on it: the lag a call's completion waits before
 * the engine sees it, which the learned limit must not read as downstream latency (ADR 0015).
 *
 * <h2>Design</h2>
 *
 * A probe is a task posted with {@link Loop#execute} that notes how long it waited to run: a loop
 * whose thread is starved of a core (other processes hold it) or busy with other work runs every
 * callback that much later, the probe's included. At most one probe is pending; the engine posts
 * one with each call's completion, so there are none while no call ends, and no timer is ever set
 * (nothing outlives the engine, nothing to cancel). The readings are smoothed, each halving the
 * weight of those before it: one reading is noise, a starved machine shows in a few.
 *
 * <p>Touched only on the owning loop (asserted); plain state, time from the injected {@link Loop}.
 */
final class LoopLag {
  private final Loop loop;
  private boolean pending;
  private long postedAt;
  private long lagNanos;
  private boolean read;

  LoopLag(Loop loop) {
    this.loop = loop;
  }

  /** The smoothed lag of the loop's last probes, in nanos (0 before the first). */
  long nanos() {
    return lagNanos;
  }

  /**
   * What to tell the learned limit: {@link #nanos}, or {@link CallLimit#LAG_UNKNOWN} before any
   * probe has run (the first completions: 0 would say they were on time, ADR 0114).
   */
  long told() {
    return read ? lagNanos : CallLimit.LAG_UNKNOWN;
  }

  /** Posts a probe, unless one is pending. */
  void probe() {
    assert loop.inLoop();
    if (pending) {
      return;
    }
    pending = true;
    postedAt = loop.nanoTime();
    loop.execute(this::ran);
  }

  private void ran() {
    assert loop.inLoop();
    pending = false;
    read = true;
    long waited = Math.max(0, loop.nanoTime() - postedAt);
    lagNanos = (lagNanos + waited) / 2;
  }
}
