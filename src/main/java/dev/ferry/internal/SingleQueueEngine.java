package dev.ferry.internal;

import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The single-queue batching engine behind {@code Ferry.make}: a state machine over one bounded FIFO
 * queue and a count of busy slots.
 *
 * <h2>Design</h2>
 *
 * Inputs wait in one queue, in arrival order, with no keys. Up to {@code maxInFlightBatches} calls
 * may be on the wire at once; each busy call holds a <em>slot</em>. A batch is assembled in exactly
 * one place, {@link #pump()}, and only when a slot is free: it takes the slot, moves the waiting
 * inputs (up to the batch bounds) off the queue and starts the call, all in one transition on the
 * owning loop. Because nothing else runs on the loop meanwhile, at most one batch is ever forming:
 * two free slots cannot each grab part of what should have left as one batch, and no semaphore or
 * lock is needed to make that so. The slot count alone is the schedule.
 *
 * <p>With no batch delay, a free slot takes everything waiting at once (group commit: whatever
 * arrived while every slot was busy leaves together in the next call). With a delay, the queue is
 * <em>due</em> when it holds a full batch (by count or weight) or when its oldest input has waited
 * the delay. The delay is counted from that input's arrival, not from when a slot freed, so an
 * input that waited while every slot was busy leaves as soon as one frees. A single timer, for the
 * oldest input, wakes the engine; it is armed only while a slot is free, since otherwise the next
 * completion re-examines the queue anyway.
 *
 * <h2>Invariants</h2>
 *
 * <ul>
 *   <li>{@code batchesInFlight <= maxInFlightBatches}; a slot is held from the start of a call until
 *       {@link #completed}, even when the call timeout has already failed its callers.
 *   <li>After every transition: if a slot is free, the queue is not due (it is empty, or with a
 *       delay, neither full nor old enough). Every transition that could change this ends in
 *       {@link #pump()}.
 *   <li>The queue's live count and weight never exceed {@code maxQueueing}/{@code maxQueuedWeight}.
 *   <li>No batch exceeds {@code maxBatchSize}, nor {@code maxBatchWeight} unless it is a single
 *       input heavier alone.
 *   <li>Every entry is settled exactly once (delivered, or failed once); entry state only moves
 *       forward. An entry whose deadline has passed is never sent: it is checked when taken, not
 *       only when its timer fires.
 * </ul>
 *
 * <h2>Threads, effects, lifecycle</h2>
 *
 * As in {@link PerKeyEngine}: the engine runs only on its loop (asserted on every entry point),
 * transitions only record effects, which the driver performs afterwards, and time comes from
 * {@link Loop}. OPEN admits; {@link #drain} stops admitting and sends what waits, ignoring the
 * delay, closing when empty or at the timeout; {@link #close} fails what waits with CLOSED and
 * signals {@link Effects#closed} once the last call is over.
 *
 * @param <I> the input type (entries carry no key: {@code Entry<Void, I>} with a null key)
 */
public final class SingleQueueEngine<I> {
  private enum Phase { OPEN, DRAINING, CLOSED }

  private final Limits limits;
  private final long delayNanos;
  private final long callTimeoutNanos;
  private final CallTimeouts<Void, I> callTimeouts;
  private final Loop loop;
  private final Effects<Void, I> out;

  /** The one queue. A keyless {@link Lane} gives FIFO order and cheap skipping of expired entries. */
  private final Lane<Void, I> queue = new Lane<>(null, null);

  private int batchesInFlight;
  private long delayTimer = -1;
  /** When {@link #delayTimer} fires, so that it is re-armed only when the oldest input changes. */
  private long delayTimerAt = -1;
  private long drainTimer = -1;

  private long submitted;
  private long rejected;
  private long batches;
  private long failedBatches;
  private long timedOut;

  private long nextSeq;
  private long nextBatchId;
  private Phase phase = Phase.OPEN;
  private boolean closedSignalled;
  private Probe probe = Probe.NONE;

  public SingleQueueEngine(FerryConfig config, Loop loop, Effects<Void, I> out) {
    this.limits = config.limits();
    this.delayNanos = limits.maxBatchDelay().toNanos();
    this.callTimeoutNanos = limits.callTimeout().toNanos();
    this.callTimeouts = new CallTimeouts<>(loop, callTimeoutNanos, this::callOverdue);
    this.loop = loop;
    this.out = out;
  }

  /** Creates the entry for one valid input; {@code timeoutNanos <= 0} means no deadline. */
  public Entry<Void, I> entry(I input, long weight, Object caller, long timeoutNanos) {
    assert loop.inLoop();
    long now = loop.nanoTime();
    long deadline = timeoutNanos > 0 ? saturatedAdd(now, timeoutNanos) : Long.MAX_VALUE;
    return new Entry<>(null, input, weight, caller, nextSeq++, now, deadline);
  }

  /** Reports to {@code probe} from now on (metrics). */
  public void observe(Probe probe) {
    this.probe = probe == null ? Probe.NONE : probe;
  }

  // ---------------------------------------------------------------- transitions

  /** An input arrives: refuse it, or queue it and let a free slot take it if the queue is due. */
  public void admit(Entry<Void, I> e) {
    assert loop.inLoop();
    submitted++;
    if (phase != Phase.OPEN) {
      settle(e, FerryError.CLOSED, "the ferry is closed");
      return;
    }
    if (queue.count >= limits.maxQueueing()) {
      rejected++;
      probe.rejected("queueing");
      settle(e, FerryError.REJECTED, "maxQueueing (" + limits.maxQueueing() + ") inputs are waiting");
      return;
    }
    if (e.weight > limits.maxQueuedWeight() - queue.weight) {
      rejected++;
      probe.rejected("weight");
      settle(e, FerryError.REJECTED, "maxQueuedWeight (" + limits.maxQueuedWeight()
          + ") would be exceeded: " + queue.weight + " waiting, this input weighs " + e.weight);
      return;
    }
    queue.add(e);
    if (e.deadline != Long.MAX_VALUE) {
      e.deadlineTimer = loop.schedule(e.deadline - loop.nanoTime(), () -> expire(e));
    }
    pump();
  }

  /** A call is over (its Future completed, and the driver is back on the loop): free its slot. */
  public void completed(Batch<Void, I> batch) {
    assert loop.inLoop();
    if (batch.over) {
      return;
    }
    batch.over = true;
    callTimeouts.over(batch);
    batchesInFlight--;
    probe.batchFinished(loop.nanoTime() - batch.startedAt, batch.overdue || batch.failure != null);
    if (!batch.overdue) {
      if (batch.failure != null) {
        failedBatches++;
      }
      for (Entry<Void, I> e : batch.entries) {
        e.state = Entry.State.SETTLED;
      }
      out.deliver(batch);
    }
    pump();
    maybeFinish();
  }

  /**
   * The call timeout passed: its callers fail now, but the slot stays held until the call is really
   * over, so that no more than {@code maxInFlightBatches} calls are ever on the wire.
   */
  void callOverdue(Batch<Void, I> batch) {
    assert loop.inLoop();
    failedBatches++;
    String message = "the batch call did not complete within "
        + TimeUnit.NANOSECONDS.toMillis(callTimeoutNanos) + " ms";
    for (Entry<Void, I> e : batch.entries) {
      settle(e, FerryError.FAILED, message);
    }
  }

  /**
   * A waiting input's deadline passed (or, for {@code keyed}, no caller wants it any more): drop
   * it, never send it. Does nothing to an input already sent or settled.
   */
  void expire(Entry<Void, I> e) {
    assert loop.inLoop();
    e.deadlineTimer = -1;
    if (!e.waiting()) {
      return;
    }
    dropWaiting(e);
    pump(); // the oldest input may have changed, and with it the delay timer
    maybeFinish();
  }

  /** The batch delay of the oldest waiting input ran out. */
  private void delayOver() {
    assert loop.inLoop();
    delayTimer = -1;
    delayTimerAt = -1;
    pump();
  }

  /** Stops admitting and sends what waits without delay; closes when empty or at the timeout. */
  public void drain(long timeoutNanos) {
    assert loop.inLoop();
    if (phase != Phase.OPEN) {
      return;
    }
    phase = Phase.DRAINING;
    drainTimer = loop.schedule(Math.max(0, timeoutNanos), () -> {
      drainTimer = -1;
      close();
    });
    pump();
    maybeFinish();
  }

  /** Stops admitting, fails every waiting input with CLOSED, and lets calls in flight finish. */
  public void close() {
    assert loop.inLoop();
    if (phase == Phase.CLOSED) {
      return;
    }
    phase = Phase.CLOSED;
    if (drainTimer >= 0) {
      loop.cancel(drainTimer);
      drainTimer = -1;
    }
    cancelDelayTimer();
    for (Entry<Void, I> e : queue.takeAll()) {
      settle(e, FerryError.CLOSED, "the ferry closed before this input was sent");
    }
    maybeFinish();
  }

  // ---------------------------------------------------------------- assembling batches

  /**
   * The only place a batch forms: while a slot is free and the queue is due, take one batch and
   * start it. Ends by arming the delay timer for the oldest input, if a free slot waits on it.
   */
  private void pump() {
    while (batchesInFlight < limits.maxInFlightBatches() && queue.count > 0 && dueIn() <= 0) {
      List<Entry<Void, I>> entries = new ArrayList<>(Math.min(queue.count, limits.maxBatchSize()));
      long weight = take(entries);
      if (!entries.isEmpty()) {
        start(entries, weight);
      }
    }
    armDelayTimer();
  }

  /** Moves the next batch off the queue into {@code entries}; returns its weight. */
  private long take(List<Entry<Void, I>> entries) {
    long now = loop.nanoTime();
    long weight = 0;
    while (entries.size() < limits.maxBatchSize()) {
      Entry<Void, I> e = queue.peek();
      if (e == null) {
        break;
      }
      if (e.deadline <= now) {
        // Its timer has not run yet, but its deadline has passed: it must not leave.
        dropWaiting(e);
        continue;
      }
      if (!entries.isEmpty() && e.weight > limits.maxBatchWeight() - weight) {
        break; // the first input always goes, so a single heavier input travels alone
      }
      queue.poll();
      entries.add(e);
      weight += e.weight;
    }
    return weight;
  }

  private void start(List<Entry<Void, I>> entries, long weight) {
    batchesInFlight++;
    batches++;
    for (Entry<Void, I> e : entries) {
      e.state = Entry.State.SENT;
      if (e.deadlineTimer >= 0) {
        loop.cancel(e.deadlineTimer);
        e.deadlineTimer = -1;
      }
    }
    long now = loop.nanoTime();
    if (probe.active()) {
      probe.batchStarted(false, entries.size(), weight, Entry.waits(entries, now));
    }
    Batch<Void, I> batch = new Batch<>(nextBatchId++, null, entries, false, weight, now);
    callTimeouts.started(batch);
    out.call(batch);
  }

  /** Nanos until the queue may leave: 0 with no delay, when draining, when full, or when the oldest waited enough. */
  private long dueIn() {
    if (delayNanos == 0 || phase != Phase.OPEN) {
      return 0;
    }
    if (queue.count >= limits.maxBatchSize() || queue.weight >= limits.maxBatchWeight()) {
      return 0;
    }
    return queue.oldestArrival() + delayNanos - loop.nanoTime();
  }

  /** Keeps one timer, set for the oldest input's due time, while a free slot is waiting for it. */
  private void armDelayTimer() {
    boolean slotWaits = delayNanos > 0 && phase == Phase.OPEN && queue.count > 0
        && batchesInFlight < limits.maxInFlightBatches();
    long at = slotWaits ? queue.oldestArrival() + delayNanos : -1;
    if (at == delayTimerAt) {
      return;
    }
    cancelDelayTimer();
    if (at >= 0) {
      delayTimerAt = at;
      delayTimer = loop.schedule(at - loop.nanoTime(), this::delayOver);
    }
  }

  private void cancelDelayTimer() {
    if (delayTimer >= 0) {
      loop.cancel(delayTimer);
    }
    delayTimer = -1;
    delayTimerAt = -1;
  }

  // ---------------------------------------------------------------- bookkeeping

  /** Settles a waiting entry with TIMEOUT and takes it out of the counts. */
  private void dropWaiting(Entry<Void, I> e) {
    queue.forget(e);
    timedOut++;
    probe.timedOut();
    settle(e, FerryError.TIMEOUT, "the caller's deadline passed before the input was sent");
  }

  private void settle(Entry<Void, I> e, FerryError kind, String message) {
    if (e.state == Entry.State.SETTLED) {
      return;
    }
    e.state = Entry.State.SETTLED;
    if (e.deadlineTimer >= 0) {
      loop.cancel(e.deadlineTimer);
      e.deadlineTimer = -1;
    }
    out.fail(e, kind, message, null);
  }

  private void maybeFinish() {
    if (phase == Phase.DRAINING && queue.count == 0 && batchesInFlight == 0) {
      close();
      return;
    }
    if (phase == Phase.CLOSED && !closedSignalled && batchesInFlight == 0) {
      closedSignalled = true;
      out.closed();
    }
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE - 1 : sum;
  }

  // ---------------------------------------------------------------- reads

  public boolean isOpen() {
    return phase == Phase.OPEN;
  }

  /** A snapshot; exact on the loop, a best-effort read elsewhere. One queue: no lanes, no direct calls. */
  public FerryMetrics metrics() {
    return new FerryMetrics(batchesInFlight, queue.count, queue.weight, 0, submitted, rejected,
        batches, 0, failedBatches, timedOut);
  }
}
