package dev.ferry.internal;

import dev.ferry.Ferry;
import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.FerryMetrics;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@link Ferry#keyed}: the data-loader pattern on a {@link StreamFerry} whose inputs are keys.
 *
 * <p>While a key waits in the queue, every caller asking for it shares its one entry: {@link
 * #waiting} maps the key to that entry and the callers attached to it. Once the entry has left in
 * a batch (or was refused), the next caller for the key makes a new entry, so values are never
 * reused across batches. All of this state lives on the loop, like the engine's.
 *
 * <p>Deadlines are per caller and kept here, not in the engine: the shared entry itself has none.
 * A caller whose deadline passes while its key still waits fails alone with TIMEOUT; when the last
 * caller of an entry gives up, the entry is expired in the engine, so a key nobody wants is never
 * sent. Once the key is in flight, its callers wait for the call, as with {@code make}.
 */
public final class KeyedFerry<K, V> implements Ferry<K, Optional<V>>, Probe.Observable {
  /** One waiting entry and how many of its callers still want it. */
  private static final class Shared<K, V> {
    final K key;
    final Entry<Void, K> entry;
    final Future<Optional<V>> outcome;
    int live;
    /** Its callers counted in {@link KeyedFerry#sharing}: those that joined it, until it leaves. */
    int sharers;
    /** Its callers with a deadline, judged against the moment it leaves ({@link KeyedFerry#tooLate}). */
    final List<Caller<V>> timed = new ArrayList<>(1);
    /**
     * Its callers, answered by the one listener on {@link #outcome} ({@link KeyedFerry#answerAll}).
     * A listener per caller held every caller that gave up while the key waited (its promise, in
     * the outcome's listeners) until the key left, however many came and went; this list lets go
     * of them as {@link #timed} does.
     */
    final List<Caller<V>> callers = new ArrayList<>(1);
    /** The listener answering {@link #callers} is on {@link #outcome}. */
    boolean listening;
    /** The latest deadline of its callers so far ({@link Long#MAX_VALUE}: one has none). */
    long latest = Long.MIN_VALUE;
    /** It is in {@link KeyedFerry#waiting} (until forgotten, or replaced there by a later entry). */
    boolean inMap;

    Shared(K key, Entry<Void, K> entry, Future<Optional<V>> outcome) {
      this.key = key;
      this.entry = entry;
      this.outcome = outcome;
    }
  }

  /** One caller of a shared entry. */
  private static final class Caller<V> {
    final Promise<Optional<V>> promise;
    final long deadline;
    long timer = -1;
    boolean done;
    /** It joined an entry that was already waiting: it counts toward {@code maxQueueing} on its own. */
    boolean sharing;

    Caller(Promise<Optional<V>> promise, long deadline) {
      this.promise = promise;
      this.deadline = deadline;
    }
  }

  private final Loop loop;
  private final StreamFerry<K, Map<K, V>, Optional<V>> queue;
  private final StreamEngine<K> engine;
  private final HashMap<K, Shared<K, V>> waiting = new HashMap<>();
  /**
   * The entries of {@link #waiting} whose leaving {@link #left} must judge (callers with a
   * deadline, or sharing), until it did or they are forgotten: where it finds one by identity when
   * its key, changed after submit, no longer finds it in {@link #waiting}. Identity set: {@code
   * Shared} keeps {@code Object}'s equals. Only on the loop.
   */
  private final HashSet<Shared<K, V>> watched = new HashSet<>();
  /**
   * On the loop only: published with the queue's figures at the end of each transition
   * ({@link #view}), so that a read from another thread sees them and the queue's at one moment.
   */
  private long joined;
  private long callersTimedOut;
  private long rejectedJoins;
  /**
   * Callers waiting on an entry another caller made, while that entry waits: each holds a promise,
   * so they count toward {@code maxQueueing} next to the entries (issue 13: nothing a caller can
   * make the node hold escapes the bounds); they leave the room with their key ({@link #left}).
   * Only on the loop.
   */
  private int sharing;
  private final int maxQueueing;

  public KeyedFerry(Loop loop, FerryConfig config, Function<List<K>, Future<Map<K, V>>> call) {
    this.loop = loop;
    this.queue = new StreamFerry<>(loop, config, null, keys -> {
      // A transition of its own: the callers it times out are counted before they are answered.
      queue().run(() -> left(keys));
      return fetch(call, keys);
    },
        (key, values) -> Optional.ofNullable(values.get(key)));
    this.engine = queue.engine();
    this.maxQueueing = config.maxQueueing();
    queue.metricsView(this::view);
  }

  /**
   * On the loop, as the batch of {@code keys} leaves: their callers no longer wait in the queue, so
   * they leave the room they took there, as the keys themselves do (they are held with the call,
   * whose bounds are {@code maxInFlightBatches} and {@code maxBatchSize}). Counted on, a hot key's
   * callers would fill the room while nothing waits and refuse every other key.
   */
  private void left(List<K> keys) {
    for (K key : keys) {
      Shared<K, V> shared = leaving(key);
      if (shared != null) {
        release(shared);
        tooLate(shared);
      }
    }
  }

  /**
   * The entry of {@code key} that just left, if {@link #left} has anything to do for it. A key its
   * caller changed while it waited no longer finds it in {@link #waiting}: then it is searched for
   * by identity among {@link #watched}, as {@link #forget} does, so that its late callers still
   * time out (a hostile review). That search runs only when the lookup misses, and {@code watched}
   * holds the entries waiting or just taken, whose leaving is not judged yet: few when a key leaves
   * at once.
   */
  private Shared<K, V> leaving(K key) {
    Shared<K, V> shared;
    try {
      shared = waiting.get(key);
    } catch (Throwable changedKeyBroke) {
      shared = null; // reported by forget, when the entry's work is over
    }
    if (shared != null && !shared.entry.waiting()) {
      return shared;
    }
    for (Shared<K, V> s : watched) {
      if (s.key == key && !s.entry.waiting()) {
        return s;
      }
    }
    return null;
  }

  /**
   * Takes {@code shared} out of {@link #waiting}. A key its caller changed while it waited no
   * longer finds it: then it is searched for by identity (that case only, as {@code PerKeyEngine}
   * does for lanes, ADR 0121), and what the changed key's {@code hashCode} or {@code equals}
   * throws is reported, so that the entry is not held for good and the callers after this
   * listener are still answered.
   */
  private void forget(Shared<K, V> shared) {
    watched.remove(shared);
    if (!shared.inMap) {
      return;
    }
    shared.inMap = false;
    try {
      if (waiting.remove(shared.key, shared)) {
        return;
      }
    } catch (Throwable t) {
      loop.report(t);
    }
    waiting.values().removeIf(s -> s == shared);
  }

  private StreamFerry<K, Map<K, V>, Optional<V>> queue() {
    return queue;
  }

  /**
   * On the loop, once {@code shared}'s entry has left: a caller whose deadline had passed when it
   * was taken fails with TIMEOUT, as a {@code make} input taken late would, instead of waiting for
   * a value it no longer wants. Its timer is overdue (the loop was held up), or due at that very
   * instant. The entry itself lasts as long as its latest caller's deadline, so the engine does not
   * take it once every caller's has passed. Idempotent; nothing for an entry never taken.
   */
  private void tooLate(Shared<K, V> shared) {
    for (Caller<V> caller : shared.timed) {
      if (caller.done || caller.deadline > shared.entry.takenAt) {
        continue;
      }
      caller.done = true;
      if (caller.timer >= 0) {
        loop.cancel(caller.timer);
        caller.timer = -1;
      }
      unshare(shared, caller);
      callersTimedOut++;
      shared.live--;
      later(caller.promise, new FerryException(FerryError.TIMEOUT,
          "the caller's deadline passed before its key was sent"));
    }
    shared.timed.clear();
  }

  /**
   * Gives back the room {@code shared}'s callers took, its entry having left. Also asked by {@link
   * #join} before it replaces an entry that left: the call runs a step after its batch was taken,
   * and a caller answered in between may ask for the key again, making a new entry under the key
   * that {@link #left} must not mistake for the one that left (a review).
   */
  private void release(Shared<K, V> shared) {
    watched.remove(shared);
    sharing -= shared.sharers;
    shared.sharers = 0;
  }

  /** One call per batch, with its distinct keys in first-seen order. */
  private Future<Map<K, V>> fetch(Function<List<K>, Future<Map<K, V>>> call, List<K> keys) {
    // A waiting key has one entry, so duplicates should not occur; dedupe anyway, it is cheap and
    // makes "each key once per call" independent of that reasoning.
    List<K> distinct;
    try {
      distinct = new ArrayList<>(new LinkedHashSet<>(keys));
    } catch (Throwable keyBroke) {
      // A key changed after submit whose hashCode or equals now throws (ADR 0121): let out, the
      // throw failed the whole batch, every other caller's key with it. The keys go as taken, one
      // per entry (a duplicate only ever comes from a changed key); the throw is reported.
      loop.report(keyBroke);
      distinct = new ArrayList<>(keys);
    }
    Future<Map<K, V>> values = call.apply(distinct);
    if (values == null) {
      return null; // the driver fails the batch
    }
    return values.compose(map -> map != null ? Future.succeededFuture(map)
        : Future.failedFuture(new NullPointerException("the keyed call answered a null map")));
  }

  @Override
  public Future<Optional<V>> submit(K key) {
    return submit(key, Long.MAX_VALUE);
  }

  @Override
  public Future<Optional<V>> submit(K key, Duration timeout) {
    String bad = Deadlines.badTimeout(timeout);
    if (bad != null) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, bad));
    }
    // The deadline runs from the submit, not from when the loop gets to it.
    return submit(key, Deadlines.after(loop.nanoTime(), timeout.toNanos()));
  }

  /** {@code deadline}: absolute loop nanos, {@link Long#MAX_VALUE} for none. */
  private Future<Optional<V>> submit(K key, long deadline) {
    if (key == null) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, "the key is null"));
    }
    try {
      // The key is hashed on the loop (the waiting keys, the batch's distinct keys): one whose
      // hashCode throws is refused here, before it could abort a transition or fail a batch of
      // other callers' keys.
      key.hashCode();
    } catch (Throwable e) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, "the key's hashCode failed: " + LogText.describe(e), e));
    }
    Promise<Optional<V>> mine = Driver.callerPromise();
    if (!queue.run(() -> join(key, deadline, mine))) {
      mine.tryFail(new FerryException(FerryError.CLOSED, "the ferry's Vert.x instance is closed"));
    }
    return mine.future();
  }

  /** On the loop: share the key's waiting entry, or make a new one. */
  private void join(K key, long deadline, Promise<Optional<V>> mine) {
    if (deadline <= loop.nanoTime() && engine.isOpen()) {
      // The loop got to it after the caller's deadline: it is a submission that timed out.
      joined++;
      callersTimedOut++;
      later(mine, new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before its key was sent"));
      return;
    }
    Shared<K, V> shared;
    try {
      shared = waiting.get(key);
    } catch (Throwable e) {
      // The key's equals threw (hashCode was checked at submit): refused like a key whose hashCode
      // throws, before anything of it is kept; let out, it would end this step with its caller
      // unanswered.
      later(mine, new FerryException(FerryError.BAD_INPUT, "the key's equals failed: " + LogText.describe(e), e));
      return;
    }
    if (shared != null && !shared.entry.waiting()) {
      // It left, and a new entry replaces it below (before the call, which would have judged it).
      release(shared);
      tooLate(shared);
    }
    boolean shares = shared != null && shared.entry.waiting() && engine.isOpen();
    if (engine.isOpen() && sharing + engine.queuedInputs() + engine.held().expired >= maxQueueing) {
      // The room is full, counting the callers that share a waiting key (the engine counts keys).
      joined++;
      rejectedJoins++;
      // Told to the probes as the engine tells its own refusals: the ferry.rejected meter counts it.
      queue.probe.rejected("queueing");
      later(mine, new FerryException(FerryError.REJECTED, "maxQueueing (" + maxQueueing
          + ") keys and callers sharing them are waiting"));
      return;
    }
    if (shares) {
      joined++;
    } else {
      Promise<Optional<V>> outcome = Promise.promise();
      // Never null: the key is not null and keys are not weighed.
      Entry<Void, K> entry = queue.admitEntry(key, Long.MAX_VALUE, outcome);
      shared = new Shared<>(key, entry, outcome.future());
      if (entry.waiting()) {
        Shared<K, V> placed = shared;
        try {
          Shared<K, V> replaced = waiting.put(key, placed);
          placed.inMap = true;
          if (replaced != null) {
            replaced.inMap = false;
          }
        } catch (Throwable keyBroke) {
          // The key's hashCode or equals threw now, though it did not at submit nor at the lookup
          // above (a key inconsistent with itself). The queue holds its entry already and will
          // send it: its caller is still attached below and gets the key's value, only no later
          // caller shares it. Let out, the throw left the caller unanswered for good. Reported
          // as a key that breaks when its lane is let go of is (ADR 0121).
          loop.report(keyBroke);
        }
        outcome.future().onComplete(ar -> {
          forget(placed);
          if (placed.live > 0 && ar.cause() instanceof FerryException fe && fe.kind() == FerryError.TIMEOUT) {
            // The engine dropped the entry as it would have left, every caller's deadline passed
            // (their timers overdue): counted in a transition, so before they are answered.
            queue.run(() -> callersTimedOut += placed.live);
          }
        });
      }
    }
    attach(shared, deadline, mine, shares);
  }

  private void attach(Shared<K, V> shared, long deadline, Promise<Optional<V>> mine, boolean shares) {
    Caller<V> caller = new Caller<>(mine, deadline);
    shared.live++;
    if (shares) {
      caller.sharing = true;
      sharing++;
      shared.sharers++;
      watched.add(shared);
    }
    if (shared.entry.waiting()) {
      shared.latest = Math.max(shared.latest, deadline);
      shared.entry.deadline = shared.latest;
      if (deadline != Long.MAX_VALUE) {
        shared.timed.add(caller);
        watched.add(shared);
        caller.timer = loop.schedule(deadline - loop.nanoTime(), () -> queue.run(() -> expired(shared, caller)));
      }
    }
    shared.callers.add(caller);
    if (!shared.listening) {
      shared.listening = true;
      shared.outcome.onComplete(ar -> answerAll(shared, ar));
    }
  }

  /** The key's outcome is in: every caller still waiting for it is answered, in the order they came. */
  private void answerAll(Shared<K, V> shared, AsyncResult<Optional<V>> ar) {
    List<Caller<V>> callers = shared.callers;
    // By index, and to the end as it is now: a caller's callback may submit again, but never joins
    // this entry (it is no longer waiting), so the list does not change under the loop.
    for (int i = 0; i < callers.size(); i++) {
      Caller<V> caller = callers.get(i);
      if (caller.timer >= 0) {
        loop.cancel(caller.timer);
        caller.timer = -1;
      }
      if (caller.done) {
        continue;
      }
      caller.done = true;
      unshare(shared, caller);
      // Shielded: a throw out of one caller's callback must not keep the callers after it from
      // their answers.
      answer(caller.promise, ar.result(), ar.cause());
    }
    callers.clear();
  }

  /** A caller answered or given up leaves the room it took, unless its key took it along on leaving. */
  private void unshare(Shared<K, V> shared, Caller<V> caller) {
    if (caller.sharing && shared.sharers > 0) {
      caller.sharing = false;
      sharing--;
      shared.sharers--;
    }
  }

  /** On the loop: one caller's deadline passed. Only a key still waiting is given up. */
  private void expired(Shared<K, V> shared, Caller<V> caller) {
    caller.timer = -1;
    if (caller.done || !shared.entry.waiting()) {
      return;
    }
    caller.done = true;
    unshare(shared, caller);
    callersTimedOut++;
    if (shared.timed.size() > 2 * shared.live + 8) {
      // Callers given up leave the list too, in amortized O(1): a key kept waiting by one patient
      // caller must not hold every impatient caller that came and went (the room no longer counts them).
      shared.timed.removeIf(c -> c.done);
    }
    if (shared.callers.size() > 2 * shared.live + 8) {
      // Likewise every caller that came and gave up: answered already, nothing of it is kept.
      shared.callers.removeIf(c -> c.done);
    }
    if (--shared.live == 0) {
      forget(shared);
      engine.expire(shared.entry);
    }
    // Replied last, once the state is consistent: the caller's callback may submit again.
    later(caller.promise, new FerryException(FerryError.TIMEOUT,
        "the caller's deadline passed before its key was sent"));
  }

  /**
   * Fails one caller once the transition is over and published, as the engine's replies are: a
   * caller answered then sees its own outcome in the metrics, from any thread.
   */
  private void later(Promise<Optional<V>> caller, Throwable failure) {
    queue.afterTransition(() -> answer(caller, null, failure));
  }

  /** Answers one caller; what its callbacks throw is reported to the loop, never let out into the ferry. */
  private void answer(Promise<Optional<V>> caller, Optional<V> value, Throwable failure) {
    Driver.complete(caller, value, failure, loop);
  }

  /** The queue's snapshot with the callers counted; see {@link #view}. */
  @Override
  public FerryMetrics metrics() {
    return queue.metrics();
  }

  /**
   * The queue's snapshot, except that {@code submitted} and {@code timedOut} count callers (a
   * caller who shared a waiting key is a submission too), while {@code queuedInputs} counts the
   * distinct keys waiting. On the loop.
   */
  private FerryMetrics view(FerryMetrics m) {
    // The queue's call-limit figures pass through: a keyed ferry's ferry.call.limit meter must not read 0.
    return new FerryMetrics(m.inFlightBatches(), m.queuedInputs(), m.queuedWeight(), 0,
        m.submitted() + joined, m.rejected() + rejectedJoins, m.batches(), 0, m.failedBatches(), callersTimedOut,
        m.callLimit(), m.callsWaiting(), m.seenLatencyMicros(), m.seenFloorMicros(), m.seenLoopLagMicros(),
        m.callsPastTimeout());
  }

  @Override
  public Future<Void> close() {
    return queue.close();
  }

  @Override
  public Future<Void> drain(Duration timeout) {
    return queue.drain(timeout);
  }

  @Override
  public Runnable observe(Probe probe) {
    return queue.observe(probe);
  }
}
