package dev.ferry.internal;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import io.vertx.core.AsyncResult;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.function.BiFunction;
import java.util.function.ToLongFunction;

/**
 * Runs an engine's effects on its loop: starts batch calls, brings their completions back to the
 * loop, and replies to callers. Runs only on the owning loop.
 *
 * <p>Effects are queued while a transition runs and performed afterwards, in order, by a
 * trampoline: a call that completes inline, or a caller whose callback submits again, starts a new
 * transition whose effects join the queue instead of growing the stack.
 *
 * <p>A caller is answered through a {@link Promise} (the {@link dev.ferry.Ferry} API: a Future per
 * input, its callbacks on the caller's context) or, for a caller on the ferry's own loop that only
 * needs the answer, through a plain {@link Completable} handle ({@link #submit(Object, long,
 * Completable)}: no promise, no listener, no dispatch through a context per input; ADR 0097).
 * Either is answered exactly once, as an effect, after the transition that settled its entry.
 *
 * @param <R> the batch call's result type
 * @param <O> a caller's outcome type
 */
public abstract class Driver<K, I, R, O> implements Effects<K, I>, Probe.Observable {
  protected final Loop loop;
  private final BiFunction<? super I, ? super R, ? extends O> extract;
  private final ArrayDeque<Runnable> pending = new ArrayDeque<>();
  private final Promise<Void> closed = Promise.promise();
  private final Loop engineLoop;
  private boolean running;
  /**
   * A transition is running (not its effects): user code the engine calls inside one (a custom
   * order's compare, an exception handler a report reaches) may re-enter the ferry, and such a
   * submit or close must wait for the transition to end (see {@link #onLoopOrRefused}).
   */
  private boolean inTransition;
  /** Probes observing the engine; changed only on the loop. */
  private final java.util.List<Probe> probes = new java.util.ArrayList<>(2);
  /**
   * What the engine reports to: every probe in {@link #probes}, as it is at each report; what a
   * probe throws goes to the loop's report, never into the transition that reported.
   */
  protected final Probe probe;

  private final PublishedMetrics published;
  /** What the ferry shows of its engine's metrics ({@link KeyedFerry} adds its callers); on the loop. */
  private java.util.function.UnaryOperator<dev.ferry.FerryMetrics> metricsView = m -> m;
  /** The engine this driver performs effects for; set once by the subclass's constructor. */
  private EngineCore<K, I> engine;
  /** Unregisters the owner-close hook; run once the ferry is closed, so closed ferries are let go of. */
  private Runnable unhook = () -> {};

  protected Driver(Loop loop, BiFunction<? super I, ? super R, ? extends O> extract) {
    this.loop = loop;
    this.extract = extract;
    this.probe = Probe.all(probes, loop::report);
    this.published = new PublishedMetrics(loop, () -> metricsView.apply(engine.metrics()));
    this.engineLoop = new TransitionTimers(loop);
    // However the ferry ends (its close, or its owner's with the loop gone), its probes hear of it
    // and may let go of what they hold for it (FerryMeterBinder removes its meters).
    closed.future().onComplete(ar -> probe.closed());
  }

  /**
   * The loop to give the engine: the same loop, except that a timer's task runs as a transition,
   * so the effects it queues (a reply on a deadline, a call when a batch delay ends) are performed
   * when the timer fires, not left waiting for the next submit or completion.
   */
  protected final Loop engineLoop() {
    return engineLoop;
  }

  private final class TransitionTimers implements Loop {
    private final Loop inner;

    TransitionTimers(Loop inner) {
      this.inner = inner;
    }

    @Override public boolean inLoop() { return inner.inLoop(); }
    @Override public void execute(Runnable task) { inner.execute(task); }
    @Override public long nanoTime() { return inner.nanoTime(); }
    @Override public void cancel(long timerId) { inner.cancel(timerId); }
    @Override public void report(Throwable failure) { inner.report(failure); }

    @Override
    public long schedule(long delayNanos, Runnable task) {
      return inner.schedule(delayNanos, () -> onLoop(task));
    }
  }

  @Override
  public final Runnable observe(Probe added) {
    boolean accepted = onLoopOrRefused(() -> {
      probes.add(added);
      if (closed.future().isComplete()) {
        // Closed already: told at once, as it would have been at the close.
        tellClosed(added);
      }
      // Calls already past their timeout are not told over to it (they were, review AQ, for a
      // gauge that counted them from the probe's events): the count is the snapshot's
      // callsPastTimeout now (ADR 0170), and a probe added mid-call may hear ends it did not hear
      // begin, as with batchStarted (ADR 0173).
    });
    if (!accepted) {
      // The loop is gone (its Vert.x closed): nothing more will ever be reported, so the probe is
      // told now, on this thread. Dropped silently, a FerryMeterBinder bound then kept its meters
      // in the registry for good, holding the closed ferry and its name (ADR 0130).
      tellClosed(added);
    }
    return () -> onLoop(() -> probes.remove(added));
  }

  /** Tells one probe the ferry is closed, shielded as every report to probes is. */
  private void tellClosed(Probe probe) {
    Probe.all(java.util.List.of(probe), loop::report).closed();
  }

  /**
   * Binds the engine (built with {@link #engineLoop()} and this driver as its effects) and lets it
   * report to this driver's probes. Called once, from the subclass's constructor.
   */
  protected final <E extends EngineCore<K, I>> E bind(E built) {
    this.engine = built;
    // Published once as built, so that a read off the loop before the first transition shows the
    // ferry as it is (its call limit: 1, pinned or maxInFlightBatches), not zeros (review M). The
    // ferry has not escaped its constructor yet: nothing else reads or writes the figures now.
    published.publish();
    built.observe(probe);
    this.unhook = loop.onOwnerClose(this::ownerClosing);
    return built;
  }

  /**
   * The ferry's owner is closing: the verticle whose context it is bound to undeploys, or its
   * Vert.x closes (issue 12, issue 13 item 11). The ferry drains for its config's {@code
   * drainTimeout}, then every caller still waiting is answered CLOSED and every caller of a call
   * still in flight FAILED (ADR 0064); {@code done}
   * runs once it is closed. Any thread.
   */
  private void ownerClosing(Runnable done) {
    closed.future().onComplete(ar -> done.run());
    long nanos = engine.limits.drainTimeout().toNanos();
    if (!onLoopOrRefused(() -> engine.ownerClosing(nanos))) {
      // The event loop is already gone: nothing can run there any more, nor answer anyone.
      loopGone();
    }
  }

  // ---------------------------------------------------------------- the Ferry API, shared

  /** Submits with no deadline; see {@link dev.ferry.Ferry#submit(Object)}. */
  public final Future<O> submit(I input) {
    return submit(input, Long.MAX_VALUE);
  }

  /** Submits with a deadline; see {@link dev.ferry.Ferry#submit(Object, java.time.Duration)}. */
  public final Future<O> submit(I input, java.time.Duration timeout) {
    String bad = Deadlines.badTimeout(timeout);
    if (bad != null) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, bad));
    }
    // The deadline runs from now, on the caller's thread, not from when the loop gets to it: a
    // busy loop must not stretch a caller's deadline (issue 13, item 3).
    return submit(input, Deadlines.after(loop.nanoTime(), timeout.toNanos()));
  }

  /**
   * Submits with the caller's answer as a handle instead of a Future, for a caller that lives on
   * this ferry's loop and only forwards the answer (the verticle replies to its message): no
   * promise, no listener, no hop through a context per input (ADR 0097). {@code timeoutNanos} is the
   * caller's deadline from now, or 0 for none. {@code answer} is called exactly once, on the loop,
   * like a promise's callback; what it throws is reported to the loop ({@link Loop#report}), never
   * to the ferry.
   */
  public final void submit(I input, long timeoutNanos, Completable<O> answer) {
    java.util.Objects.requireNonNull(answer, "answer");
    if (input == null) {
      answer(answer, null, new FerryException(FerryError.BAD_INPUT, "the input is null"));
      return;
    }
    if (timeoutNanos < 0) {
      answer(answer, null, new FerryException(FerryError.BAD_INPUT,
          "a deadline must be a positive duration, got " + timeoutNanos + " ns"));
      return;
    }
    long deadline = timeoutNanos == 0 ? Long.MAX_VALUE : Deadlines.after(loop.nanoTime(), timeoutNanos);
    if (loop.inLoop() && !inTransition) {
      // The common case, inlined: no task object for the transition.
      inTransition = true;
      try {
        beforeTransition();
        admitSafely(input, deadline, answer);
      } finally {
        inTransition = false;
      }
      published.publish();
      runEffects();
    } else if (!onLoopOrRefused(() -> admitSafely(input, deadline, answer))) {
      answer(answer, null, new FerryException(FerryError.CLOSED, "the ferry's Vert.x instance is closed"));
    }
  }

  /** {@code deadline} is absolute, in loop nanos, or {@link Long#MAX_VALUE} for none. */
  private Future<O> submit(I input, long deadline) {
    if (input == null) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, "the input is null"));
    }
    Promise<O> promise = callerPromise();
    if (!onLoopOrRefused(() -> admitSafely(input, deadline, promise))) {
      promise.tryFail(new FerryException(FerryError.CLOSED, "the ferry's Vert.x instance is closed"));
    }
    return promise.future();
  }

  /**
   * Admits on the loop. Every user function is already guarded where it is called; this is the
   * last line for the promise "every accepted input gets exactly one reply": should anything still
   * throw out of an admission, its caller is answered rather than stranded.
   */
  private void admitSafely(I input, long deadline, Completable<O> caller) {
    try {
      admit(input, deadline, caller);
    } catch (Throwable t) {
      pending.add(() -> answer(caller, null, new FerryException(FerryError.BAD_INPUT,
          "the ferry could not admit this input: " + LogText.describe(t), t)));
    }
  }

  /**
   * A promise bound to the caller's context when there is one: its callbacks then run where the
   * caller lives, not on the ferry's loop (a verticle submitting to another verticle's ferry keeps
   * its own thread). On the ferry's own context this costs nothing.
   */
  public static <T> Promise<T> callerPromise() {
    return VertxLoop.callerPromise();
  }

  /**
   * A Future of the caller's own completed with {@code future}'s outcome, its callbacks on the
   * caller's context when it has one; tried, so that a caller that completed it first breaks
   * nothing (see {@link VertxLoop#onCallersContext}).
   */
  public static <T> Future<T> onCallersContext(Future<T> future) {
    return VertxLoop.onCallersContext(future);
  }

  /**
   * Counts an input given up at its caller's deadline after it left its lane, by a downstream that
   * had not written it yet (ADR 0062), in {@code timedOut} and to the probes, as the engine counts
   * its own; on the loop (inline when already there).
   */
  public final void countTimedOutAfterLeaving() {
    onLoopOrRefused(engine::timedOutAfterLeaving);
  }

  /** Closes now; see {@link dev.ferry.Ferry#close()}. */
  public final Future<Void> close() {
    if (!onLoopOrRefused(() -> engine.close())) {
      loopGone();
    }
    return VertxLoop.onCallersContext(closed.future());
  }

  /** Closes after sending what waits; see {@link dev.ferry.Ferry#drain(java.time.Duration)}. */
  public final Future<Void> drain(java.time.Duration timeout) {
    if (Deadlines.tooLong(timeout)) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT,
          "a drain timeout must be at most " + Deadlines.LONGEST + ", got " + timeout));
    }
    long nanos = timeout == null || timeout.isNegative() ? 0 : timeout.toNanos();
    if (!onLoopOrRefused(() -> engine.drain(nanos))) {
      loopGone();
    }
    return VertxLoop.onCallersContext(closed.future());
  }

  /**
   * The loop refused a close or drain: its Vert.x is closed and its event loop gone. Then nothing
   * was admitted that is not answered (the owner's close answered it, or the loop refused it
   * CLOSED), nothing can run there any more, and the ferry is closed, as the owner's close says
   * when it finds the loop gone ({@link #ownerClosing}). Left waiting for the loop, the close (or
   * drain) of a ferry made on a closed Vert.x never completed. Any thread.
   */
  private void loopGone() {
    complete(closed, null, null, loop);
  }

  /**
   * The ferry's metrics: exact on its context; elsewhere the snapshot published at the end of the
   * last transition on the loop.
   */
  public final dev.ferry.FerryMetrics metrics() {
    return published.get();
  }


  /**
   * Sets what {@link #metrics()} shows of the engine's snapshot, published with it at the end of
   * each transition, so that a read from another thread never mixes two moments. Before the first
   * transition.
   */
  final void metricsView(java.util.function.UnaryOperator<dev.ferry.FerryMetrics> view) {
    this.metricsView = view;
  }

  /**
   * Queues an answer (or any effect) to run once the current transition is over and its state
   * published, like the engine's replies; on the loop, inside a transition.
   */
  final void afterTransition(Runnable effect) {
    assert loop.inLoop();
    pending.add(effect);
  }

  /**
   * Expired inputs still held (not yet let go of), and their weight, on the loop: with {@code
   * queuedInputs}/{@code queuedWeight}, what the waiting room's bounds apply to. For tests and the soak.
   */
  public final long[] expiredStillHeld() {
    assert loop.inLoop();
    Lane.Held held = engine.held();
    return new long[] {held.expired, held.expiredWeight};
  }

  /**
   * Validates one input and hands it to the engine; on the loop, inside a transition. {@code
   * deadline} is absolute in loop nanos ({@link Long#MAX_VALUE}: none), fixed at submit.
   */
  protected abstract void admit(I input, long deadline, Completable<O> caller);


  /**
   * The weight of {@code input}, computed once: 1 without a weigh function. A weigh function that
   * throws or returns a negative weight fails the caller with BAD_INPUT; then -1 is returned.
   */
  protected final long weightOf(ToLongFunction<? super I> weigh, I input, Completable<?> caller) {
    long weight;
    try {
      weight = weigh == null ? 1 : weigh.applyAsLong(input);
    } catch (Throwable e) {
      // Errors and sneaky-thrown checked exceptions too: the caller must be answered.
      refuse(caller, "the weight function failed: " + LogText.describe(e), e);
      return -1;
    }
    if (weight < 0) {
      refuse(caller, "the weight must be >= 0, got " + weight, null);
    }
    return weight;
  }

  /**
   * Fails a caller whose input is bad, as an effect like any reply: its callback may submit again,
   * and must find the transition over.
   */
  protected final void refuse(Completable<?> caller, String message, Throwable cause) {
    FerryException bad = new FerryException(FerryError.BAD_INPUT, message, cause);
    pending.add(() -> answer(caller, null, bad));
  }

  /**
   * Answers the caller of one entry. The engine settles each entry once (its state moves one way);
   * a second answer for one is a bug the tests must see, so it is asserted here, on the entry. Not
   * on the caller's promise: a Vert.x 5 Future made by a promise is that promise, so a caller may
   * complete its own (to give up on it), and the ferry's answer then finds it complete. Asserted
   * there, that threw out of the effect answering a batch, and the callers after it were never
   * answered (review AJ).
   */
  private void answer(Entry<K, I> e, Object value, Throwable failure) {
    assert !e.answered : "a caller was answered twice";
    e.answered = true;
    tell(e.caller, value, failure);
  }

  /** Answers a caller refused before its input became an entry: once, by construction. */
  private void answer(Object caller, Object value, Throwable failure) {
    tell(caller, value, failure);
  }

  /**
   * Gives one caller its answer: a promise unless it has one already (returns whether it was the
   * first); any other handle directly, shielded like a promise's callback: what it throws goes to
   * the loop's report and the effects go on.
   */
  @SuppressWarnings("unchecked")
  private boolean tell(Object caller, Object value, Throwable failure) {
    if (caller instanceof Promise<?> p) {
      return complete((Promise<Object>) p, value, failure, loop);
    }
    try {
      ((Completable<Object>) caller).complete(value, failure);
    } catch (Throwable t) {
      loop.report(t);
    }
    return true;
  }

  /**
   * Completes a caller's promise (returns whether it was the first answer), shielded like a handle:
   * a promise with no context (a caller off Vert.x threads) runs its callbacks inline and Vert.x
   * rethrows what they throw. Let out, that would end the effect answering a batch halfway, leaving
   * its other callers unanswered for good; it goes to the loop's report instead. The promise is
   * completed before its callbacks run, so a throw means this was the first answer.
   */
  static <T> boolean complete(Promise<T> promise, T value, Throwable failure, Loop loop) {
    try {
      return failure == null ? promise.tryComplete(value) : promise.tryFail(failure);
    } catch (Throwable callbackThrew) {
      loop.report(callbackThrew);
      return true;
    }
  }

  /**
   * Starts the downstream call for the batch. May throw or return null: both fail the batch; so does
   * a Future whose {@code onComplete} throws (ADR 0129).
   */
  protected abstract Future<R> invoke(Batch<K, I> batch);

  /** Runs {@code transition} on the loop (inline when already there), then the effects it queued. */
  protected final void onLoop(Runnable transition) {
    onLoopOrRefused(transition);
  }

  /**
   * Like {@link #onLoop}, but returns false when the loop refused the task (its Vert.x instance is
   * closed and its event loop gone): then nothing ran, and the caller answers for it.
   */
  protected final boolean onLoopOrRefused(Runnable transition) {
    if (loop.inLoop()) {
      if (inTransition) {
        // Re-entered from user code the engine runs inside a transition (a custom order compares
        // inside the lane's priority queue): run inline, the nested transition changed the lane
        // halfway through the outer one's change (an input lost from the queue while counted, the
        // key stuck for good). It runs once the outer one is over, in turn with its effects.
        pending.add(() -> step(transition));
        return true;
      }
      step(transition);
      return true;
    }
    try {
      loop.execute(() -> step(transition));
      return true;
    } catch (java.util.concurrent.RejectedExecutionException gone) {
      return false;
    }
  }

  /** One transition on the loop: the transition, the metrics it changed, then the effects it queued. */
  private void step(Runnable transition) {
    inTransition = true;
    try {
      beforeTransition();
      transition.run();
    } finally {
      inTransition = false;
    }
    published.publish();
    runEffects();
  }

  /**
   * Tells the probes that a call past its timeout holds the wire while inputs wait, when it does as
   * a transition begins (ADR 0171): the state since the last transition, which the transition may
   * end (an input's deadline, the hung call's end) before anyone asked for health. Two reads per
   * transition; the second only while a call is past its timeout. Told inside the transition (ADR
   * 0178): a probe that re-enters the ferry from it waits for the transition to end, as from any
   * other event; told before, its submit ran a whole transition first, heard held up twice.
   */
  private void beforeTransition() {
    if (engine.callsPastTimeout() > 0 && engine.queuedInputs() > 0 && probe.active()) {
      probe.heldUp();
    }
  }

  private void runEffects() {
    if (running) {
      return;
    }
    running = true;
    try {
      for (Runnable effect = pending.poll(); effect != null; effect = pending.poll()) {
        effect.run();
      }
    } finally {
      running = false;
    }
  }

  @Override
  public final void call(Batch<K, I> batch) {
    pending.add(() -> {
      Future<R> future;
      try {
        future = invoke(batch);
        if (future == null) {
          future = Future.failedFuture(new NullPointerException("the batch call returned null"));
        }
      } catch (Throwable t) {
        future = Future.failedFuture(t);
      }
      try {
        future.onComplete(ar -> onLoop(() -> record(batch, ar)));
      } catch (Throwable t) {
        // A hand-rolled Future that cannot be listened to: its completion will never reach the
        // ferry, so the call is taken as over now, failed with what it threw (ADR 0129). Kept
        // waiting, its key (or slot) would stay reserved for ever and, with no call timeout, its
        // callers never answered. If the Future did call back before throwing, or does later, the
        // call is over already and that completion is ignored (record).
        loop.report(t);
        onLoop(() -> record(batch, Future.failedFuture(t)));
      }
    });
  }

  private void record(Batch<K, I> batch, AsyncResult<R> ar) {
    if (batch.over) {
      // The call is over already: a hand-rolled Future that completes twice, or a call given up
      // when the owner closed. Its callers have their answer; a second one must not overwrite it.
      return;
    }
    try {
      if (ar.succeeded()) {
        batch.result = ar.result();
      } else {
        // A hand-rolled Future may fail without naming a cause. Kept null, the failure read as a
        // success with a null result (every caller told its input went through); FAILED always
        // carries a cause (ADR 0141).
        Throwable cause = ar.cause();
        batch.failure = cause != null ? cause
            : new IllegalStateException("the batch call's Future failed without a cause");
      }
    } catch (Throwable unreadable) {
      // A hand-rolled Future that called back with no AsyncResult (null), or with one whose
      // methods throw: let out, the throw ended this transition, so the call never ended and its
      // key (or slot) stayed reserved for good. Its answer cannot be known: the call failed, with
      // the throw, reported as ADR 0129 reports a Future that cannot be listened to (review AJ).
      loop.report(unreadable);
      batch.result = null;
      batch.failure = unreadable;
    }
    engine.completed(batch);
  }

  @Override
  public final void deliver(Batch<K, I> batch) {
    pending.add(() -> {
      if (batch.failure != null) {
        FerryException failed = new FerryException(FerryError.FAILED,
            "the batch call failed: " + LogText.message(batch.failure), batch.failure);
        for (Entry<K, I> e : batch.entries) {
          answer(e, null, failed);
        }
        return;
      }
      @SuppressWarnings("unchecked")
      R result = (R) batch.result;
      for (Entry<K, I> e : batch.entries) {
        O outcome;
        try {
          outcome = extract.apply(e.input, result);
        } catch (FerryException rejectedOrFailed) {
          answer(e, null, rejectedOrFailed);
          continue;
        } catch (Throwable t) {
          answer(e, null, new FerryException(FerryError.FAILED, "extract failed for this input: " + LogText.describe(t), t));
          continue;
        }
        answer(e, outcome, null);
      }
    });
  }

  @Override
  public final void fail(Entry<K, I> entry, FerryError kind, String message, Throwable cause) {
    pending.add(() -> answer(entry, null, new FerryException(kind, message, cause)));
  }

  /** Where handed-off inputs go: the new owner. {@code remaining} is null when there is no deadline. */
  @FunctionalInterface
  public interface Forward<I, O> {
    Future<O> forward(I input, java.time.Duration remaining);
  }

  /** A hand-off request: where the key's waiting inputs go, and what completes when they went. */
  public record HandOff<I, O>(Forward<I, O> forward, Promise<Void> done) {}

  @Override
  public final void handedOff(K key, java.util.List<Entry<K, I>> entries, java.util.List<Object> handOffs) {
    pending.add(() -> {
      @SuppressWarnings("unchecked")
      Forward<I, O> forward = ((HandOff<I, O>) handOffs.get(0)).forward();
      long now = loop.nanoTime();
      for (Entry<K, I> e : entries) {
        Object caller = e.caller;
        if (e.deadline <= now) {
          tell(caller, null, new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent"));
          continue;
        }
        java.time.Duration remaining = e.deadline == Long.MAX_VALUE ? null : java.time.Duration.ofNanos(e.deadline - now);
        Future<O> answer;
        try {
          answer = forward.forward(e.input, remaining);
          if (answer == null) {
            // Let out, the NPE would end this effect halfway: the inputs after this one never
            // forwarded, their callers and the hand-off never answered.
            answer = Future.failedFuture(new NullPointerException("the forward returned null"));
          }
        } catch (Throwable t) {
          answer = Future.failedFuture(t); // called with the input, it may have sent it: FAILED (forwardFailure)
        }
        boolean[] told = {false};
        try {
          answer.onComplete(ar -> {
            if (loop.inLoop()) {
              forwarded(caller, told, ar);
              return;
            }
            // Completed on a thread of its own: the answer is given on the loop, where an answer
            // handle is promised its call (ADR 0097) and where told is read and written, so that
            // a Future completing twice on two threads answers once, with no lock (review AM).
            try {
              loop.execute(() -> forwarded(caller, told, ar));
            } catch (java.util.concurrent.RejectedExecutionException gone) {
              forwarded(caller, told, ar); // the loop is gone: nothing else runs there any more
            }
          });
        } catch (Throwable t) {
          // A forward's Future that cannot be listened to (ADR 0129): let out, the throw would end
          // this effect halfway, the inputs after this one never forwarded and the hand-off never
          // complete. The forward was made, so the input may be applied there while its answer
          // cannot be learned: FAILED, never CLOSED (which says it never was, ADR 0064).
          loop.report(t);
          if (!told[0]) {
            told[0] = true;
            tell(caller, null, new FerryException(FerryError.FAILED,
                "the key's new owner was sent the input, its answer cannot be learned (it may have been applied): " + LogText.describe(t), t));
          }
        }
      }
      for (Object h : handOffs) {
        complete(((HandOff<?, ?>) h).done(), null, null, loop);
      }
    });
  }

  /**
   * Answers the caller of one handed-off input with its forward's outcome, once: {@code told} is
   * set by the first answer, and a Future that completes again is ignored.
   */
  private void forwarded(Object caller, boolean[] told, AsyncResult<O> ar) {
    if (told[0]) {
      return;
    }
    told[0] = true;
    O value = null;
    Throwable failure;
    try {
      if (ar.succeeded()) {
        value = ar.result();
        failure = null;
      } else {
        failure = forwardFailure(ar.cause());
      }
    } catch (Throwable unreadable) {
      // A hand-rolled Future that called back with no AsyncResult (null), or with one whose
      // methods throw: let out, the throw left this caller marked as told and never answered
      // (review AM). The input was forwarded, so it may have been applied: FAILED, never CLOSED,
      // and reported, as a batch call's unreadable answer is (review AJ, ADR 0129).
      loop.report(unreadable);
      value = null;
      failure = new FerryException(FerryError.FAILED,
          "the key's new owner was sent the input, its answer cannot be read (it may have been applied): "
              + LogText.describe(unreadable), unreadable);
    }
    tell(caller, value, failure);
  }

  /**
   * What the caller of a handed-off input is told when its forward failed with {@code cause}
   * (review AN). CLOSED promises the input was never applied (ADR 0064), so it is given only where
   * the failure says the input never reached anyone: a {@link FerryException}, passed on as it is
   * (the new owner's own answer, or the cluster router's, which knows what it sent), and a message
   * the event bus delivered to no handler (the router hands an input back unapplied so, and reads
   * this cause to return it to its sender). Anything else (a timeout, the recipient's failure, an
   * I/O error, a forward that threw or returned null, a failure with no cause) may have come after
   * the input arrived: FAILED, which always carries a cause (ADR 0141).
   */
  private static FerryException forwardFailure(Throwable cause) {
    if (cause instanceof FerryException fe) {
      return fe;
    }
    if (cause == null) {
      return new FerryException(FerryError.FAILED,
          "the forward to the key's new owner failed without a cause (it may have been applied)",
          new IllegalStateException("the forward's Future failed without a cause"));
    }
    if (cause instanceof io.vertx.core.eventbus.ReplyException re
        && re.failureType() == io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS) {
      return new FerryException(FerryError.CLOSED,
          "the key's new owner could not be reached: " + LogText.message(re), re);
    }
    return new FerryException(FerryError.FAILED,
        "the forward to the key's new owner failed (it may have been applied): " + LogText.describe(cause), cause);
  }

  /**
   * One line for the calls the owner's close gave up (ADR 0171), at WARNING: their callers got
   * FAILED and their inputs may have been applied, and no other trace is left (the ferry's meters
   * go with it). The calls past their timeout were answered and counted then; named here only.
   */
  @Override
  public final void gaveUp(int calls, int keys, int inputs, int pastTimeout) {
    pending.add(() -> GAVE_UP.log(System.Logger.Level.WARNING, gaveUpText(calls, keys, inputs, pastTimeout)));
  }

  /** The close's one line, naming only what it holds (no "0 call(s)" parts). */
  static String gaveUpText(int calls, int keys, int inputs, int pastTimeout) {
    String late = pastTimeout == 1 ? "1 call past its timeout" : pastTimeout + " calls past their timeout";
    if (calls == 0) {
      return "ferry: its owner closed with " + late + " still on the wire: given up; their inputs were"
          + " answered FAILED at the timeout, and may have been applied";
    }
    String held = keys > 0 ? "the calls of " + keys + " key(s)" : calls + " call(s)";
    return "ferry: its owner closed with " + held + " still on the wire: given up, their " + inputs
        + " input(s) answered FAILED, which may have been applied"
        + (pastTimeout == 0 ? "" : "; " + late + ", answered then, given up too");
  }

  private static final System.Logger GAVE_UP = System.getLogger(Driver.class.getName());

  @Override
  public final void closed() {
    pending.add(() -> {
      unhook.run();
      complete(closed, null, null, loop);
    });
  }
}
