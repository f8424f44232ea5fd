package dev.ferry.internal;

import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryMetrics;
import java.util.ArrayList;
import java.util.List;

/**
 * The stream batching engine behind {@code Ferry.make}: a state machine over one bounded FIFO
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
 * delay, closing when empty or at the timeout (nothing leaves after it, even before its timer
 * runs); {@link #close} fails what waits with CLOSED and
 * signals {@link Effects#closed} once the last call is over.
 *
 * @param <I> the input type (entries carry no key: {@code Entry<Void, I>} with a null key)
 */
public final class StreamEngine<I> extends EngineCore<Void, I> {

  /** Expired inputs the queue still holds: they take room until they are gone (see {@link Lane}). */
  private final Lane.Held held = new Lane.Held();

  /** The one queue. A keyless {@link Lane} gives FIFO order and cheap skipping of expired entries. */
  private final Lane<Void, I> queue = new Lane<>(null, null, held);

  private int batchesInFlight;
  private long delayTimer = -1;
  /** When {@link #delayTimer} fires, while it is set: it is re-armed only when the oldest input changes. */
  private long delayTimerAt = -1;

  public StreamEngine(FerryConfig config, Loop loop, Effects<Void, I> out) {
    super(Limits.Access.of(config), Limits.Access.names(config), loop, out);
  }

  /** Creates the entry for one valid input; {@code deadline}: absolute loop nanos, {@link Long#MAX_VALUE} for none. */
  public Entry<Void, I> entry(I input, long weight, Object caller, long deadline) {
    assert loop.inLoop();
    return newEntry(null, input, weight, caller, deadline);
  }

  // ---------------------------------------------------------------- transitions

  /** An input arrives: refuse it, or queue it and let a free slot take it if the queue is due. */
  public void admit(Entry<Void, I> e) {
    assert loop.inLoop();
    if (!accepting(e) || refusedForRoom(e, queue.count + held.expired, queue.weight + held.expiredWeight)) {
      return;
    }
    queue.add(e);
    armDeadline(e);
    pump();
  }

  /** A call is over (its Future completed, and the driver is back on the loop): free its slot. */
  @Override
  public void completed(Batch<Void, I> batch) {
    assert loop.inLoop();
    if (!callEnded(batch)) {
      return;
    }
    batchesInFlight--;
    pump();
    maybeFinish();
  }

  /**
   * A waiting input's deadline passed (or, for {@code keyed}, no caller wants it any more): drop
   * it, never send it. Does nothing to an input already sent or settled.
   */
  @Override
  void expire(Entry<Void, I> e) {
    assert loop.inLoop();
    e.deadlineTimer = -1;
    if (!e.waiting()) {
      return;
    }
    dropWaiting(queue, e);
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
  @Override
  public void drain(long timeoutNanos) {
    assert loop.inLoop();
    if (!beginDrain(timeoutNanos)) {
      return;
    }
    pump();
    maybeFinish();
  }

  /** Stops admitting, fails every waiting input with CLOSED, and lets calls in flight finish. */
  @Override
  public void close() {
    assert loop.inLoop();
    if (!beginClose()) {
      return;
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
    if (drainRanOut()) {
      close(); // what waits is CLOSED, never sent: the drain's end is not stretched by a late timer
      return;
    }
    while (batchesInFlight < limits.maxInFlightBatches() && queue.count > 0 && dueIn() <= 0) {
      List<Entry<Void, I>> entries = new ArrayList<>(Math.min(queue.count, limits.maxBatchSize()));
      long weight = takeBatch(queue, entries);
      if (!entries.isEmpty()) {
        start(entries, weight);
      }
    }
    armDelayTimer();
  }

  private void start(List<Entry<Void, I>> entries, long weight) {
    batchesInFlight++;
    batches++;
    launch(queue, entries, false, weight);
  }

  /** Nanos until the queue may leave: 0 with no delay, when draining, when full, or when the oldest waited enough. */
  private long dueIn() {
    if (delayNanos == 0 || phase != Phase.OPEN) {
      return 0;
    }
    if (queue.count >= limits.maxBatchSize() || queue.weight >= limits.maxBatchWeight()) {
      return 0;
    }
    return Deadlines.after(queue.oldestArrival(), delayNanos) - loop.nanoTime();
  }

  /** Keeps one timer, set for the oldest input's due time, while a free slot is waiting for it. */
  private void armDelayTimer() {
    boolean slotWaits = delayNanos > 0 && phase == Phase.OPEN && queue.count > 0
        && batchesInFlight < limits.maxInFlightBatches();
    if (!slotWaits) {
      cancelDelayTimer();
      return;
    }
    // Whether a timer is set is told by its id, never by its time: the loop's clock has an
    // arbitrary origin, and a due time may be negative (or -1).
    long at = Deadlines.after(queue.oldestArrival(), delayNanos);
    if (delayTimer >= 0 && at == delayTimerAt) {
      return;
    }
    cancelDelayTimer();
    delayTimerAt = at;
    delayTimer = loop.schedule(at - loop.nanoTime(), this::delayOver);
  }

  private void cancelDelayTimer() {
    if (delayTimer >= 0) {
      loop.cancel(delayTimer);
    }
    delayTimer = -1;
    delayTimerAt = -1;
  }

  // ---------------------------------------------------------------- bookkeeping

  @Override
  void dropWaiting(Lane<Void, I> lane, Entry<Void, I> e) {
    // Settled first: the queue lets go of an expired head at once only if it reads as settled.
    answerTimedOut(e);
    lane.forget(e);
  }

  @Override
  int queuedInputs() {
    return queue.count;
  }

  @Override
  Lane.Held held() {
    return held;
  }

  @Override
  void forgetCallsInFlight() {
    batchesInFlight = 0;
  }

  @Override
  int inFlight() {
    return batchesInFlight;
  }

  // ---------------------------------------------------------------- reads

  /** A snapshot, on the loop (the driver publishes it for other threads). One queue: no lanes, no direct calls. */
  @Override
  public FerryMetrics metrics() {
    return new FerryMetrics(batchesInFlight, queue.count, queue.weight, 0, submitted, rejected,
        batches, 0, failedBatches, timedOut, limits.maxInFlightBatches(), heldBack() ? 1 : 0, 0, 0, 0,
        callsPastTimeout());
  }

  /**
   * Whether a batch is ready to leave (the queue is due) and only the busy slots hold it back. One
   * queue: the next batch is the only one known to be ready without walking it (O(1), as every
   * snapshot is taken after every transition).
   */
  private boolean heldBack() {
    return queue.count > 0 && batchesInFlight >= limits.maxInFlightBatches() && dueIn() <= 0;
  }
}
