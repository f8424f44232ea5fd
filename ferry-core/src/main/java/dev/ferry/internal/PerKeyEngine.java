package dev.ferry.internal;

import dev.ferry.FerryError;
import dev.ferry.FerryMetrics;
import dev.ferry.PerKeyConfig;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;

/**
 * The per-key batching engine: a state machine over lanes, the ready line and slot counts.
 *
 * <h2>Design</h2>
 *
 * Every key with work has a {@link Lane}: its waiting inputs in sending order, and whether a call
 * for the key is on the wire. Lanes that have waiting inputs, no call in flight and (with a batch
 * delay) are due, stand in the ready {@link #line}, first come first served. Whenever a slot is
 * free, {@link #dispatch()} takes the lane at the front of the line and sends everything it holds,
 * up to the batch bounds. When that call completes, a lane that still has inputs goes to the back
 * of the line; an empty lane is removed, so an idle key costs nothing. Batches therefore form on
 * completion: whatever arrived while a key's previous call was in flight leaves together in its
 * next one (group commit), and no timer is involved unless a batch delay is configured.
 *
 * <p>An input whose key is idle (no lane) is, by default, sent at once as a batch of one: a
 * <em>direct call</em>, outside the slots, so quiet keys never queue behind busy ones. The key's
 * lane exists, marked in flight, for the duration of that call, so whatever arrives meanwhile
 * waits and batches behind it.
 *
 * <h2>Invariants</h2>
 *
 * <ul>
 *   <li>A key has a lane iff it has live waiting inputs or a call in flight.
 *   <li>A lane in flight is never in the line, and a key never has two calls in flight: the lane is
 *       marked in flight before its call starts and cleared only in {@link #completed}, even when
 *       the call timeout has already failed its callers.
 *   <li>{@code batchesInFlight <= maxInFlightBatches}; direct calls are counted apart.
 *   <li>{@code queuedInputs}/{@code queuedWeight} are the sums of the lanes' live counts/weights and
 *       never exceed their bounds.
 *   <li>Every entry is settled exactly once: by {@link Effects#deliver}, or by one {@link
 *       Effects#fail}. Entry state moves one way, so a second settlement is impossible.
 * </ul>
 *
 * <h2>Threads and effects</h2>
 *
 * The engine runs only on its owning loop (asserted on every entry point); it holds no locks and
 * needs none, because nothing else touches its state. Each public method is one transition: it
 * updates state and hands the effects (start a call, reply to callers) to {@link Effects}, which
 * the driver runs only after the transition returns. Timers are the one thing set directly, since
 * scheduling never runs code inline. The engine knows nothing of Vert.x I/O; time comes from
 * {@link Loop}, so tests drive the real engine in virtual time.
 *
 * <h2>Lifecycle</h2>
 *
 * OPEN admits. {@link #drain} moves to DRAINING: nothing is admitted, waiting inputs still leave
 * (at once, ignoring any batch delay), and the engine closes when empty or when the drain timeout
 * passes. {@link #close} moves to CLOSED: waiting inputs fail with CLOSED, calls in flight finish
 * and deliver, and {@link Effects#closed} fires once the last of them is over.
 */
public final class PerKeyEngine<K, I> extends EngineCore<K, I> {
  private final boolean directCalls;
  private final Comparator<Entry<K, I>> order;

  private final HashMap<K, Lane<K, I>> lanes = new HashMap<>();
  private final ArrayDeque<Lane<K, I>> line = new ArrayDeque<>();

  private int batchesInFlight;
  private int directInFlight;
  private int queuedInputs;
  private long queuedWeight;

  private long directCount;

  /**
   * @param order the order of a key's inputs, or {@code null} for submission order; ties always
   *     fall back to submission order
   */
  public PerKeyEngine(PerKeyConfig config, Comparator<? super I> order, Loop loop, Effects<K, I> out) {
    super(Limits.Access.of(config), loop, out);
    this.directCalls = config.directCallsEnabled();
    this.order = order == null ? null
        : PerKeyEngine.<K, I>safely(order).thenComparingLong(e -> e.seq);
  }

  /**
   * The user's order over entries, made total: a comparator that throws would otherwise abort a
   * transition halfway (an entry neither queued nor answered), so a throw counts as a tie and
   * submission order decides.
   */
  private static <K, I> Comparator<Entry<K, I>> safely(Comparator<? super I> order) {
    return (a, b) -> {
      try {
        return order.compare(a.input, b.input);
      } catch (RuntimeException e) {
        return 0;
      }
    };
  }

  /** Creates the entry for one valid input; {@code timeoutNanos <= 0} means no deadline. */
  public Entry<K, I> entry(K key, I input, long weight, Object caller, long timeoutNanos) {
    return newEntry(key, input, weight, caller, timeoutNanos);
  }

  // ---------------------------------------------------------------- transitions

  /** An input arrives: refuse it, call it directly, or let it wait in its key's lane. */
  public void admit(Entry<K, I> e) {
    assert loop.inLoop();
    if (!accepting(e)) {
      return;
    }
    Lane<K, I> lane = lanes.get(e.key);
    if (lane == null && directCalls) {
      lane = newLane(e.key);
      directCount++;
      start(lane, List.of(e), true, e.weight);
      return;
    }
    if (refusedForRoom(e, queuedInputs, queuedWeight)) {
      return;
    }
    if (lane == null) {
      lane = newLane(e.key);
    }
    lane.add(e);
    queuedInputs++;
    queuedWeight += e.weight;
    armDeadline(e);
    if (!lane.inFlight) {
      offer(lane);
      dispatch();
    }
  }

  /** A call is over (its Future completed, and the driver is back on the loop). */
  @Override
  public void completed(Batch<K, I> batch) {
    assert loop.inLoop();
    if (!callEnded(batch)) {
      return;
    }
    if (batch.direct) {
      directInFlight--;
    } else {
      batchesInFlight--;
    }
    Lane<K, I> lane = lanes.get(batch.key);
    assert lane != null && lane.inFlight : "completed a call for a key that was not in flight";
    lane.inFlight = false;
    if (lane.handOffs != null) {
      finishHandOff(lane);
    } else if (lane.count == 0) {
      retire(lane);
    } else {
      offer(lane);
    }
    dispatch();
    maybeFinish();
  }

  /**
   * Stops serving {@code key} here, for a new owner (cluster membership changed). Once the key has
   * no call in flight, its waiting inputs are handed over in sending order through {@link
   * Effects#handedOff} and its lane is removed; until then it is never dispatched again, so the
   * new owner's first call can never overlap this node's last one. A key with no lane is handed
   * over at once, with nothing.
   */
  public void handOff(K key, Object token) {
    assert loop.inLoop();
    Lane<K, I> lane = lanes.get(key);
    if (lane == null) {
      out.handedOff(key, List.of(), List.of(token));
      return;
    }
    if (lane.handOffs == null) {
      lane.handOffs = new ArrayList<>(1);
    }
    lane.handOffs.add(token);
    if (!lane.inFlight) {
      finishHandOff(lane);
      dispatch();
      maybeFinish();
    }
  }

  private void finishHandOff(Lane<K, I> lane) {
    List<Entry<K, I>> entries = lane.takeAll();
    for (Entry<K, I> e : entries) {
      queuedInputs--;
      queuedWeight -= e.weight;
      // Its caller now waits on the new owner's answer: no deadline timer here any more.
      e.state = Entry.State.SETTLED;
      if (e.deadlineTimer >= 0) {
        loop.cancel(e.deadlineTimer);
        e.deadlineTimer = -1;
      }
    }
    List<Object> handOffs = lane.handOffs;
    lane.handOffs = null;
    lane.inLine = false;
    retire(lane);
    out.handedOff(lane.key, entries, handOffs);
  }

  /** A waiting input's deadline passed: drop it, never send it. */
  @Override
  void expire(Entry<K, I> e) {
    assert loop.inLoop();
    e.deadlineTimer = -1;
    if (!e.waiting()) {
      return;
    }
    Lane<K, I> lane = lanes.get(e.key);
    dropWaiting(lane, e);
    if (lane.count == 0 && !lane.inFlight) {
      retire(lane);
    }
    maybeFinish();
  }

  /** The batch delay of a lane's oldest input ran out. */
  private void delayOver(Lane<K, I> lane) {
    assert loop.inLoop();
    lane.delayTimer = -1;
    if (!lane.retired && !lane.inFlight && !lane.inLine && lane.count > 0) {
      offer(lane);
      dispatch();
    }
  }

  /**
   * Stops admitting and sends what is waiting, then closes; whatever is still waiting when the
   * timeout passes fails with CLOSED.
   */
  @Override
  public void drain(long timeoutNanos) {
    assert loop.inLoop();
    if (!beginDrain(timeoutNanos)) {
      return;
    }
    // A batch delay no longer applies: nothing more can arrive to keep a lane company.
    for (Lane<K, I> lane : lanes.values()) {
      if (!lane.inFlight && lane.count > 0) {
        offer(lane);
      }
    }
    dispatch();
    maybeFinish();
  }

  /** Stops admitting, fails every waiting input with CLOSED, and lets calls in flight finish. */
  @Override
  public void close() {
    assert loop.inLoop();
    if (!beginClose()) {
      return;
    }
    line.clear();
    for (Lane<K, I> lane : new ArrayList<>(lanes.values())) {
      lane.inLine = false;
      for (Entry<K, I> e : lane.takeAll()) {
        queuedInputs--;
        queuedWeight -= e.weight;
        settle(e, FerryError.CLOSED, "the ferry closed before this input was sent");
      }
      if (!lane.inFlight) {
        retire(lane);
      }
    }
    maybeFinish();
  }

  // ---------------------------------------------------------------- dispatch

  /** Starts batches from the front of the line while slots are free. */
  private void dispatch() {
    while (batchesInFlight < limits.maxInFlightBatches() && !line.isEmpty()) {
      Lane<K, I> lane = line.poll();
      lane.inLine = false;
      if (lane.retired || lane.inFlight || lane.count == 0) {
        continue;
      }
      List<Entry<K, I>> entries = new ArrayList<>(Math.min(lane.count, limits.maxBatchSize()));
      long weight = take(lane, entries);
      if (entries.isEmpty()) {
        // Everything that was waiting had expired at this very instant.
        if (lane.count == 0) {
          retire(lane);
        }
        continue;
      }
      batches++;
      start(lane, entries, false, weight);
    }
  }

  /** Moves the lane's next batch into {@code entries}; returns its weight. */
  private long take(Lane<K, I> lane, List<Entry<K, I>> entries) {
    long now = loop.nanoTime();
    long weight = 0;
    while (entries.size() < limits.maxBatchSize()) {
      Entry<K, I> e = lane.peek();
      if (e == null) {
        break;
      }
      if (!entries.isEmpty() && e.weight > limits.maxBatchWeight() - weight) {
        break;
      }
      if (e.deadline <= now) {
        // Its timer has not run yet, but its deadline has passed: it must not leave.
        dropWaiting(lane, e);
        continue;
      }
      lane.poll();
      queuedInputs--;
      queuedWeight -= e.weight;
      entries.add(e);
      weight += e.weight;
    }
    return weight;
  }

  private void start(Lane<K, I> lane, List<Entry<K, I>> entries, boolean direct, long weight) {
    lane.inFlight = true;
    if (lane.delayTimer >= 0) {
      loop.cancel(lane.delayTimer);
      lane.delayTimer = -1;
    }
    if (direct) {
      directInFlight++;
    } else {
      batchesInFlight++;
    }
    launch(lane.key, entries, direct, weight);
  }

  /** Puts a lane with waiting inputs in line when it is due, else arms its batch-delay timer. */
  private void offer(Lane<K, I> lane) {
    if (lane.inLine || lane.inFlight || lane.count == 0) {
      return;
    }
    long wait = dueIn(lane);
    if (wait <= 0) {
      if (lane.delayTimer >= 0) {
        loop.cancel(lane.delayTimer);
        lane.delayTimer = -1;
      }
      lane.inLine = true;
      line.add(lane);
    } else if (lane.delayTimer < 0) {
      lane.delayTimer = loop.schedule(wait, () -> delayOver(lane));
    }
  }

  /** Nanos until the lane may leave: 0 when there is no delay, it is full, or its oldest input waited enough. */
  private long dueIn(Lane<K, I> lane) {
    if (delayNanos == 0 || phase != Phase.OPEN) {
      return 0;
    }
    if (lane.count >= limits.maxBatchSize() || lane.weight >= limits.maxBatchWeight()) {
      return 0;
    }
    return lane.oldestArrival() + delayNanos - loop.nanoTime();
  }

  // ---------------------------------------------------------------- bookkeeping

  private Lane<K, I> newLane(K key) {
    Lane<K, I> lane = new Lane<>(key, order);
    lanes.put(key, lane);
    return lane;
  }

  private void retire(Lane<K, I> lane) {
    lane.retired = true;
    if (lane.delayTimer >= 0) {
      loop.cancel(lane.delayTimer);
      lane.delayTimer = -1;
    }
    lanes.remove(lane.key);
  }

  /** Settles a waiting entry with TIMEOUT and takes it out of the counts. */
  private void dropWaiting(Lane<K, I> lane, Entry<K, I> e) {
    lane.forget(e);
    queuedInputs--;
    queuedWeight -= e.weight;
    answerTimedOut(e);
  }

  @Override
  int queuedInputs() {
    return queuedInputs;
  }

  @Override
  int inFlight() {
    return batchesInFlight + directInFlight;
  }

  // ---------------------------------------------------------------- reads

  /** Batch slots in use (direct calls not counted). */
  int batchesInFlight() {
    return batchesInFlight;
  }

  /** The keys that have a lane (inputs waiting or a call in flight), in no particular order. */
  public List<K> laneKeys() {
    assert loop.inLoop();
    return new ArrayList<>(lanes.keySet());
  }

  /**
   * Checks the invariants of the design comment against the current state; returns the first one
   * broken, or null. For the simulation tests: O(lanes), never called on a hot path.
   */
  String brokenInvariant() {
    int waiting = 0;
    long weight = 0;
    int lanesInFlight = 0;
    for (Lane<K, I> lane : lanes.values()) {
      if (lane.count == 0 && !lane.inFlight) {
        return "lane " + lane.key + " has no work but is held";
      }
      if (lane.handOffs != null && !lane.inFlight) {
        return "lane " + lane.key + " is being handed off with no call in flight";
      }
      if (lane.inFlight && lane.inLine) {
        return "lane " + lane.key + " is in flight and in line";
      }
      if (lane.retired) {
        return "lane " + lane.key + " is retired but held";
      }
      waiting += lane.count;
      weight += lane.weight;
      lanesInFlight += lane.inFlight ? 1 : 0;
    }
    if (waiting != queuedInputs || weight != queuedWeight) {
      return "queued counts " + queuedInputs + "/" + queuedWeight + " differ from the lanes' " + waiting + "/" + weight;
    }
    if (lanesInFlight != batchesInFlight + directInFlight) {
      return lanesInFlight + " lanes in flight but " + (batchesInFlight + directInFlight) + " calls";
    }
    if (batchesInFlight > limits.maxInFlightBatches()) {
      return batchesInFlight + " batch calls exceed maxInFlightBatches";
    }
    if (queuedInputs > limits.maxQueueing() || queuedWeight > limits.maxQueuedWeight()) {
      return "the waiting room exceeds its bounds";
    }
    if (phase != Phase.OPEN || delayNanos == 0) {
      // Work conservation: a free slot never coexists with a lane that could leave now.
      if (batchesInFlight < limits.maxInFlightBatches()) {
        for (Lane<K, I> lane : line) {
          if (!lane.retired && lane.count > 0 && !lane.inFlight) {
            return "a slot is free but lane " + lane.key + " waits in line";
          }
        }
      }
      for (Lane<K, I> lane : lanes.values()) {
        if (!lane.inFlight && lane.count > 0 && !lane.inLine) {
          return "lane " + lane.key + " has waiting inputs but is neither in flight nor in line";
        }
      }
    }
    if (phase == Phase.CLOSED && queuedInputs != 0) {
      return "closed with inputs still waiting";
    }
    return null;
  }

  /** Lanes in the map (for leak checks in tests). */
  int lanesHeld() {
    return lanes.size();
  }

  /** A snapshot, on the loop (the driver publishes it for other threads). */
  @Override
  public FerryMetrics metrics() {
    return new FerryMetrics(inFlight(), queuedInputs, queuedWeight, lanes.size(), submitted,
        rejected, batches + directCount, directCount, failedBatches, timedOut);
  }
}
