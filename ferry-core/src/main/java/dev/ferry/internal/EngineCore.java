package dev.ferry.internal;

import dev.ferry.FerryError;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What the per-key and the stream engines share: the lifecycle (open, draining, closed),
 * the counters, admission bounds, taking a batch off a lane within the batch bounds, the start and
 * end of a call, and settling an entry exactly once.
 * Runs only on the owning loop; subclasses own their waiting structures and their dispatch rule.
 *
 * <p>Every method here is part of a transition of the subclass: it updates state and hands effects
 * to {@link Effects}, never running user code inline.
 */
abstract class EngineCore<K, I> {
  enum Phase { OPEN, DRAINING, CLOSED }

  final Limits limits;
  final long delayNanos;
  final Loop loop;
  final Effects<K, I> out;
  private final long callTimeoutNanos;
  /** The names its user wrote the settings under, for the messages that name one (ADR 0185). */
  private final SettingNames names;
  private final CallTimeouts<K, I> callTimeouts;

  long submitted;
  long rejected;
  long batches;
  long failedBatches;
  long timedOut;

  Phase phase = Phase.OPEN;
  Probe probe = Probe.NONE;
  private boolean closedSignalled;
  /** The owner (verticle or Vert.x) is closing: once closed, calls in flight are not waited for. */
  private boolean ownerClosing;
  /** The calls in flight were abandoned and forgotten when the owner closed; late completions are ignored. */
  private boolean callsForgotten;
  /**
   * Calls on the wire whose timeout passed (told {@link Probe#callOverdue}), whether or not a probe
   * listened then: published as {@link dev.ferry.FerryMetrics#callsPastTimeout()}, the one count
   * the gauge, {@code ferry.metrics} and health read (ADR 0170).
   */
  private int callsPastTimeout;
  private long drainTimer = -1;
  /** When the drain timer fires, in loop nanos. */
  private long drainEndsAt;
  private long nextSeq;

  EngineCore(Limits limits, SettingNames names, Loop loop, Effects<K, I> out) {
    this.limits = limits;
    this.names = names;
    this.delayNanos = limits.maxBatchDelay().toNanos();
    this.callTimeoutNanos = limits.callTimeout().toNanos();
    this.loop = loop;
    this.out = out;
    this.callTimeouts = new CallTimeouts<>(loop, callTimeoutNanos, this::callOverdue);
  }

  /** Calls on the wire past their timeout (the snapshot's {@code callsPastTimeout}). */
  final int callsPastTimeout() {
    return callsPastTimeout;
  }

  /** Inputs waiting (not in flight). */
  abstract int queuedInputs();

  /** Calls on the wire, direct calls included. */
  abstract int inFlight();

  /**
   * The owner closed and the calls in flight were abandoned (their callers answered): forget them,
   * and the lanes they held, so that a closed ferry holds nothing, even when a call never completes.
   */
  abstract void forgetCallsInFlight();

  /**
   * Expired inputs still held in memory, and their weight: no longer waiting, but taking room in
   * the waiting room until they are gone (see {@link Lane}).
   */
  abstract Lane.Held held();

  /** A waiting entry's deadline passed. */
  abstract void expire(Entry<K, I> e);

  /** Stops admitting, fails every waiting input with CLOSED, lets calls in flight finish. */
  public abstract void close();

  /** Stops admitting, sends what waits, closes when empty or after {@code timeoutNanos}. */
  public abstract void drain(long timeoutNanos);

  /** A call is over: its Future completed and the driver is back on the loop. */
  public abstract void completed(Batch<K, I> batch);

  /** A snapshot of state and counters, on the loop. */
  public abstract dev.ferry.FerryMetrics metrics();

  /** Reports to {@code probe} from now on (metrics). */
  public final void observe(Probe probe) {
    this.probe = probe == null ? Probe.NONE : probe;
  }

  public final boolean isOpen() {
    return phase == Phase.OPEN;
  }

  /** Inputs admitted so far: the admission number the next input will take. */
  final long admitted() {
    return nextSeq;
  }

  /**
   * Creates the entry for one valid input; {@code deadline} is absolute in loop nanos, fixed when
   * the caller submitted ({@link Long#MAX_VALUE}: none).
   */
  final Entry<K, I> newEntry(K key, I input, long weight, Object caller, long deadline) {
    assert loop.inLoop();
    return new Entry<>(key, input, weight, caller, nextSeq++, loop.nanoTime(), deadline);
  }

  /**
   * Counts a submission; answers CLOSED unless the engine is open, and TIMEOUT when the caller's
   * deadline passed before the loop got to it (it was set at submit). Returns whether to go on.
   */
  final boolean accepting(Entry<K, I> e) {
    submitted++;
    if (phase != Phase.OPEN) {
      settle(e, FerryError.CLOSED, "the ferry is closed");
      return false;
    }
    // Its arrival is now (the entry was made in this transition): no second clock read per input.
    if (e.deadline <= e.arrivedAt) {
      answerTimedOut(e);
      return false;
    }
    return true;
  }

  /** Answers REJECTED and returns true when {@code e} would overflow the waiting room. */
  final boolean refusedForRoom(Entry<K, I> e, int waiting, long waitingWeight) {
    if (waiting >= limits.maxQueueing()) {
      rejected++;
      probe.rejected("queueing");
      settle(e, FerryError.REJECTED, "maxQueueing (" + limits.maxQueueing() + ") inputs are waiting");
      return true;
    }
    if (e.weight > limits.maxQueuedWeight() - waitingWeight) {
      rejected++;
      probe.rejected("weight");
      // Still REJECTED (the contract's 429), but a retry cannot help an input heavier than the
      // whole room: said so, rather than left to read as a full room (review AJ).
      settle(e, FerryError.REJECTED, e.weight > limits.maxQueuedWeight()
          ? "this input weighs " + e.weight + ", more than maxQueuedWeight (" + limits.maxQueuedWeight()
              + ") on its own: it can never wait"
          : "maxQueuedWeight (" + limits.maxQueuedWeight() + ") would be exceeded: " + waitingWeight
              + " waiting, this input weighs " + e.weight);
      return true;
    }
    return false;
  }

  /** Sets the timer of a waiting entry's deadline, if it has one. */
  final void armDeadline(Entry<K, I> e) {
    if (e.deadline != Long.MAX_VALUE) {
      e.deadlineTimer = loop.schedule(e.deadline - loop.nanoTime(), () -> expire(e));
    }
  }

  /** Starts a call: its entries are sent (their deadlines no longer apply) and its timeout runs. */
  final void launch(Lane<K, I> lane, List<Entry<K, I>> entries, boolean direct, long weight) {
    for (Entry<K, I> e : entries) {
      e.state = Entry.State.SENT;
      cancelDeadline(e);
    }
    long now = loop.nanoTime();
    if (probe.active()) {
      probe.batchStarted(direct, entries.size(), weight, Entry.waits(entries, now));
    }
    Batch<K, I> batch = new Batch<>(lane.key, lane, entries, direct, weight, now, inFlight());
    callTimeouts.started(batch);
    out.call(batch);
  }

  /**
   * The common part of a call completing: returns false if it was already reported. Its callers
   * get the outcome unless the call timeout already failed them; the subclass then frees the key
   * or slot and dispatches.
   */
  final boolean callEnded(Batch<K, I> batch) {
    if (batch.over || callsForgotten) {
      // Reported already, or abandoned when the owner closed (a call that had timed out included).
      batch.over = true;
      return false;
    }
    batch.over = true;
    callTimeouts.over(batch);
    probe.batchFinished(loop.nanoTime() - batch.startedAt, batch.overdue || batch.failure != null);
    if (batch.overdue) {
      callsPastTimeout--;
      probe.overdueCallEnded();
    } else {
      if (batch.failure != null) {
        failedBatches++;
        if (probe.active()) {
          probe.batchFailed(batch.key, inputs(batch), batch.failure);
        }
      }
      for (Entry<K, I> e : batch.entries) {
        e.state = Entry.State.SETTLED;
      }
      out.deliver(batch);
    }
    return true;
  }

  /**
   * The call timeout passed: the callers fail now, but the key or slot stays reserved until the
   * call is really over, so a late call never overlaps the next one (ADR 0005).
   */
  final void callOverdue(Batch<K, I> batch) {
    assert loop.inLoop();
    failedBatches++;
    // Names the setting, so that a caller holding a 502 knows which bound to look at (an HTTP
    // downstream's own timeoutMs says its own name), as its user wrote it: callTimeout in a
    // builder, callTimeoutMs in a JSON config (ADR 0185).
    String message = "the batch call did not complete within "
        + TimeUnit.NANOSECONDS.toMillis(callTimeoutNanos) + " ms (" + names.callTimeout() + ")";
    // FAILED carries its cause (the contract): a timeout, which says the outcome is unknown, so a
    // caller can tell it from a call that failed. One per batch: its callers share the one call.
    TimeoutException cause = new TimeoutException(message + "; it may still be applied");
    callsPastTimeout++;
    if (probe.active()) {
      // Still on the wire, its key or slot held (a health check tells this from a call that ended).
      probe.callOverdue();
      probe.batchFailed(batch.key, inputs(batch), cause);
    }
    for (Entry<K, I> e : batch.entries) {
      settle(e, FerryError.FAILED, message, cause);
    }
  }

  /** The batch's inputs in sending order, for a probe (a failed call's only: a copy is cheap there). */
  private static <K, I> List<I> inputs(Batch<K, I> batch) {
    List<I> inputs = new ArrayList<>(batch.entries.size());
    for (Entry<K, I> e : batch.entries) {
      inputs.add(e.input);
    }
    return inputs;
  }

  /**
   * Moves {@code lane}'s next batch into {@code entries} and returns its weight: inputs in the
   * lane's sending order up to {@code maxBatchSize} and {@code maxBatchWeight}, the first one
   * always, so that a single input heavier than the bound travels alone. An input whose deadline
   * has passed before its timer ran is dropped through {@link #dropWaiting}, never sent (and,
   * being dropped, does not end the batch). The caller takes the batch out of its own counts.
   */
  final long takeBatch(Lane<K, I> lane, List<Entry<K, I>> entries) {
    long now = loop.nanoTime();
    long weight = 0;
    while (entries.size() < limits.maxBatchSize()) {
      Entry<K, I> e = lane.peek();
      if (e == null) {
        break;
      }
      if (e.deadline <= now) {
        // Its timer has not run yet, but its deadline has passed: it must not leave.
        dropWaiting(lane, e);
        continue;
      }
      if (!entries.isEmpty() && e.weight > limits.maxBatchWeight() - weight) {
        break;
      }
      lane.poll();
      e.takenAt = now;
      entries.add(e);
      weight += e.weight;
    }
    return weight;
  }

  /** Settles a waiting entry of {@code lane} with TIMEOUT and takes it out of the counts. */
  abstract void dropWaiting(Lane<K, I> lane, Entry<K, I> e);

  /**
   * An input already handed to the downstream was given up at its caller's deadline before the
   * downstream wrote it (an HTTP batch waiting for its connection, ADR 0062): counted with the
   * inputs dropped at theirs in the lanes, as its caller got the same TIMEOUT.
   */
  final void timedOutAfterLeaving() {
    timedOut++;
    probe.timedOut();
  }

  /** Answers a waiting entry whose deadline passed; the caller has taken it out of its counts. */
  final void answerTimedOut(Entry<K, I> e) {
    timedOut++;
    probe.timedOut();
    settle(e, FerryError.TIMEOUT, "the caller's deadline passed before the input was sent");
  }

  /** Fails one entry, once: a settled entry stays settled. */
  final void settle(Entry<K, I> e, FerryError kind, String message) {
    settle(e, kind, message, null);
  }

  /** As {@link #settle(Entry, FerryError, String)}, with the failure's cause (FAILED's). */
  final void settle(Entry<K, I> e, FerryError kind, String message, Throwable cause) {
    if (e.state == Entry.State.SETTLED) {
      return;
    }
    e.state = Entry.State.SETTLED;
    cancelDeadline(e);
    out.fail(e, kind, message, cause);
  }

  private void cancelDeadline(Entry<K, I> e) {
    if (e.deadlineTimer >= 0) {
      loop.cancel(e.deadlineTimer);
      e.deadlineTimer = -1;
    }
  }

  /** Moves to DRAINING and sets the drain timeout; false unless the engine was open. */
  final boolean beginDrain(long timeoutNanos) {
    if (phase != Phase.OPEN) {
      return false;
    }
    phase = Phase.DRAINING;
    armDrainTimer(Math.max(0, timeoutNanos));
    return true;
  }

  private void armDrainTimer(long timeoutNanos) {
    drainEndsAt = Deadlines.after(loop.nanoTime(), timeoutNanos);
    drainTimer = loop.schedule(timeoutNanos, () -> {
      drainTimer = -1;
      close();
    });
  }

  /**
   * The owner (the verticle whose context this is, or Vert.x) is closing: drain for at most {@code
   * timeoutNanos} (the config's {@code drainTimeout}; a drain already running is cut short to it),
   * then close, and answer the callers of calls still in flight FAILED (their inputs were sent and
   * may have been applied, as at a call timeout) rather than wait for calls that may never complete. The engine then says it is closed ({@link Effects#closed}) at once.
   */
  public final void ownerClosing(long timeoutNanos) {
    assert loop.inLoop();
    ownerClosing = true;
    if (phase == Phase.OPEN) {
      drain(timeoutNanos);
    } else if (phase == Phase.DRAINING && Deadlines.after(loop.nanoTime(), timeoutNanos) < drainEndsAt) {
      loop.cancel(drainTimer);
      armDrainTimer(timeoutNanos);
    } else {
      maybeFinish();
    }
  }

  /**
   * A drain whose timeout has passed while its timer has not run yet (the loop was held up, and a
   * completion reached it first): nothing may leave any more, the engine must close instead. At
   * the very instant the timeout falls, what a free slot takes still leaves, as it always did.
   */
  final boolean drainRanOut() {
    return phase == Phase.DRAINING && loop.nanoTime() > drainEndsAt;
  }

  /** Moves to CLOSED; false if it already was. */
  final boolean beginClose() {
    if (phase == Phase.CLOSED) {
      return false;
    }
    phase = Phase.CLOSED;
    if (drainTimer >= 0) {
      loop.cancel(drainTimer);
      drainTimer = -1;
    }
    return true;
  }

  /** A drain that ran dry closes; a closed engine with no call left says so, once. */
  final void maybeFinish() {
    if (phase == Phase.DRAINING && queuedInputs() == 0 && inFlight() == 0) {
      close();
      return;
    }
    if (phase == Phase.CLOSED && !closedSignalled && (inFlight() == 0 || ownerClosing)) {
      if (ownerClosing) {
        // Only calls whose callers wait: one past its timeout was answered then and is not
        // handed over again (CallTimeouts#abandonAll), nor counted again (review AR).
        int[] givenUp = {0, 0, 0}; // calls, their keys, their inputs
        callTimeouts.abandonAll(batch -> {
          String message = "the ferry's owner closed while this input's call was in flight"
              + " (it may have been applied)";
          // Its outcome can no longer be learned: a cancellation, as the cause FAILED carries.
          CancellationException cause = new CancellationException(message);
          // A failed batch, as a call that timed out is (review AS): its callers got 502. Once:
          // the call is over now, and its late completion is ignored (callsForgotten).
          failedBatches++;
          givenUp[0]++;
          givenUp[1] += batch.key == null ? 0 : 1; // one call per key at most (guarantee 2)
          givenUp[2] += batch.entries.size();
          for (Entry<K, I> e : batch.entries) {
            // Sent, then given up: FAILED (502), as for a call timeout; CLOSED (503) is only ever
            // the answer for an input that was never sent (ADR 0064).
            settle(e, FerryError.FAILED, message, cause);
          }
        });
        callsForgotten = true;
        int pastTimeout = callsPastTimeout;
        callsPastTimeout = 0; // forgotten: no end will be told of them (the probes are told closed)
        if (givenUp[0] + pastTimeout > 0) {
          // Once for them all, for one log line (ADR 0171); the calls past their timeout were
          // counted and told as they passed it, and are only named here.
          out.gaveUp(givenUp[0], givenUp[1], givenUp[2], pastTimeout);
        }
        forgetCallsInFlight();
      }
      closedSignalled = true;
      out.closed();
    }
  }
}
