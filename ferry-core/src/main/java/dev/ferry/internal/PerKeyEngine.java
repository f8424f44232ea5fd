package dev.ferry.internal;

import dev.ferry.Dispatch;
import dev.ferry.FerryError;
import dev.ferry.FerryMetrics;
import dev.ferry.PerKeyConfig;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The per-key batching engine: a state machine over lanes, the ready lines and call counts.
 *
 * <h2>Design</h2>
 *
 * Every key with work has a {@link Lane}: its waiting inputs in sending order, and whether a call
 * for the key is on the wire. Lanes that have waiting inputs, no call in flight and (with a batch
 * delay) are due are <em>ready</em>: they wait for a call slot in a ready line. Whenever the bound
 * on calls allows, {@link #dispatch()} grants the next ready lane a call carrying everything it
 * holds, up to the batch bounds. When that call completes, a lane that still has inputs is ready
 * again; an empty lane is removed, so an idle key costs nothing. Batches therefore form on
 * completion: whatever arrived while a key's previous call was in flight leaves together in its
 * next one (group commit), and no timer is involved unless a batch delay is configured.
 *
 * <p>Two dispatch modes (ADR 0011, 0014, 0016):
 *
 * <ul>
 *   <li><b>Adaptive</b> (the default): every call counts against one limit, learned by {@link
 *       CallLimit} from the calls' latency. An input whose key is idle (no lane) leaves at once as a
 *       batch of one (a <em>direct call</em>) when the limit allows and nothing waits; otherwise
 *       its new lane waits in the {@link #line idle line}, FIFO. Lanes re-queued after a call wait
 *       in the {@link #busy busy line}, ordered by the admission number of their next input (oldest
 *       first). A grant takes the idle line's head unless busy lanes wait and idle lanes have
 *       already carried, since the last busy grant, as many inputs as that grant did (ADR 0014 and
 *       its addendum): idle keys go first, but never send much more than the busy keys do. A key
 *       gets one such head start per wait: granted from the idle line ahead of waiting busy lanes,
 *       its next lane joins the busy line while an input admitted before that grant waits there
 *       (ADR 0183), unless the idle line is itself behind the busy line (its head waits with an
 *       input admitted before the busy head's), where joining it is no head start (ADR 0196: at
 *       overload with many keys, such keys sent to the busy line left with one or two inputs from
 *       behind the whole backlog).
 *   <li><b>Fixed slots</b> (the original rule, opt-in): at most {@code maxInFlightBatches} batch calls
 *       from one FIFO {@link #line}, a lane with inputs left goes to its back; direct calls of idle
 *       keys outside the slots, at most {@code maxInFlightBatches} of them (past that bound an
 *       idle key's input waits in its lane like any other).
 * </ul>
 *
 * The lane of a direct call exists, marked in flight, for the duration of that call, so whatever
 * arrives meanwhile waits and batches behind it.
 *
 * <h2>Invariants</h2>
 *
 * <ul>
 *   <li>A key has a lane iff it has live waiting inputs or a call in flight.
 *   <li>A lane in flight is never in the line, and a key never has two calls in flight: the lane is
 *       marked in flight before its call starts and cleared only in {@link #completed}, even when
 *       the call timeout has already failed its callers.
 *   <li>Fixed slots: {@code batchesInFlight <= maxInFlightBatches} and {@code directInFlight <=
 *       maxInFlightBatches}. Adaptive: no call starts while {@code calls >= limit}, and {@code calls
 *       <= maxInFlightBatches} (a lowered limit lets the calls above it finish).
 *   <li>{@code readyLanes} counts the lanes waiting in the lines; a retired lane left in a line is
 *       counted in {@code staleInLines} and skipped, and the lines are compacted when stale ones
 *       outnumber the live, so expired keys never hold memory.
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
 * passes (nothing leaves after it, even before its timer runs). {@link #close} moves to CLOSED:
 * waiting inputs fail with CLOSED, calls in flight finish
 * and deliver, and {@link Effects#closed} fires once the last of them is over.
 */
public final class PerKeyEngine<K, I> extends EngineCore<K, I> {
  private final boolean directCalls;
  private final Comparator<Entry<K, I>> order;
  /** Adaptive dispatch's limit; null in fixed-slots mode. */
  private final CallLimit callLimit;
  /** Adaptive, learned limit: how late this loop runs callbacks, taken off the calls' latency (ADR 0015). */
  private final LoopLag loopLag;

  private final HashMap<K, Lane<K, I>> lanes = new HashMap<>();
  /** Expired inputs some lane still holds: they take room until they are gone (see {@link Lane}). */
  private final Lane.Held held = new Lane.Held();
  /** Fixed slots: the one FIFO ready line. Adaptive: the idle line (keys that were idle), FIFO. */
  private final ArrayDeque<Lane<K, I>> line = new ArrayDeque<>();
  /** Adaptive: lanes re-queued after a call, oldest next input first. */
  private final PriorityQueue<Lane<K, I>> busy = new PriorityQueue<>(Comparator.comparingLong(l -> l.tag));
  private int readyLanes;
  private int staleInLines;
  /**
   * Adaptive: the inputs idle lanes may still carry ahead of waiting busy lanes, before a busy lane
   * must be granted: each busy grant sets it to the inputs that grant carried (ADR 0014), and each
   * idle grant made over waiting busy lanes spends the inputs it carries (ADR 0014's addendum), so
   * idle keys send about as many inputs as busy keys, never more calls.
   */
  private int idleCredit = 1;
  /**
   * Adaptive: keys whose lane was let go of after a call granted from the idle line ahead of
   * waiting busy lanes, by the admission number at that grant (ADR 0183). While an input admitted
   * before that grant still waits in the busy line, such a key's next input is not an idle key's:
   * its lane joins the busy line, by the age of that input (one head start per wait). Forgotten,
   * in the order their calls ended ({@link #servedOrder}), once the busy line's head was admitted
   * after the grant, and all at once when the busy line is empty; both are read lazily, when a
   * lane is let go of after such a grant or a new lane is admitted (review BH's model follows
   * this): only keys served while the current head waits are held. A remembered key still makes
   * an idle lane while the idle line is behind the busy line ({@link #idleLineBehind}, ADR 0196).
   */
  private final HashMap<K, Long> servedOverWaiting = new HashMap<>();
  private final ArrayDeque<Served<K>> servedOrder = new ArrayDeque<>();
  /** Adaptive: the lane being granted came from the busy line. */
  private boolean grantingBusy;
  /** Adaptive: the lane being granted is idle and busy lanes wait: its call spends the idle credit. */
  private boolean grantingIdleOverBusy;
  /**
   * Adaptive, for the invariant check: idle grants over waiting busy lanes since the last busy
   * grant, the inputs they carried, and that busy grant's size.
   */
  private int idleOverBusyRun;
  private int idleInputsOverBusy;
  private int lastBusyGrant = 1;
  /** Adaptive, for the invariant check: a grant broke P1 of ADR 0011 or P3 of ADR 0014 (never set by a correct engine). */
  private String brokenGrant;

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
    super(Limits.Access.of(config), Limits.Access.names(config), loop, out);
    this.directCalls = config.directCallsEnabled();
    this.callLimit = config.dispatch() != Dispatch.ADAPTIVE ? null
        : config.pinnedLimit() > 0 ? CallLimit.pinned(config.pinnedLimit())
        : CallLimit.learned(config.maxInFlightBatches());
    this.loopLag = callLimit == null || callLimit.isPinned() ? null : new LoopLag(loop);
    this.order = order == null ? null
        : PerKeyEngine.<K, I>safely(order).thenComparingLong(e -> e.seq);
  }

  /**
   * The user's order over entries, made total: a comparator that throws (anything, an Error or a
   * sneaky-thrown checked exception included) would otherwise abort a transition halfway (an entry
   * neither queued nor answered), so a throw counts as a tie and submission order decides.
   */
  private static <K, I> Comparator<Entry<K, I>> safely(Comparator<? super I> order) {
    return (a, b) -> {
      try {
        return order.compare(a.input, b.input);
      } catch (Throwable e) {
        return 0;
      }
    };
  }

  /** Creates the entry for one valid input; {@code deadline}: absolute loop nanos, {@link Long#MAX_VALUE} for none. */
  public Entry<K, I> entry(K key, I input, long weight, Object caller, long deadline) {
    return newEntry(key, input, weight, caller, deadline);
  }

  // ---------------------------------------------------------------- transitions

  /** An input arrives: refuse it, call it directly, or let it wait in its key's lane. */
  public void admit(Entry<K, I> e) {
    assert loop.inLoop();
    if (!accepting(e)) {
      return;
    }
    Lane<K, I> lane = lanes.get(e.key);
    if (lane == null && directCallAllowed()) {
      lane = newLane(e.key);
      directCount++;
      start(lane, List.of(e), true, e.weight);
      return;
    }
    if (refusedForRoom(e, queuedInputs + held.expired, queuedWeight + held.expiredWeight)) {
      return;
    }
    if (lane == null) {
      lane = newLane(e.key);
      lane.idle = directCalls && !servedWhileBusyWaits(e.key);
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

  /** Whether an idle key's input may leave at once, as a direct call, now. */
  private boolean directCallAllowed() {
    if (!directCalls) {
      return false;
    }
    if (callLimit == null) {
      return directInFlight < limits.maxInFlightBatches();
    }
    return inFlight() < callLimit.limit() && readyLanes == 0;
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
    if (loopLag != null) {
      long now = loop.nanoTime();
      callLimit.completed(now, now - batch.startedAt, batch.size(), batch.inFlightAtStart,
          batch.overdue || batch.failure != null, loopLag.told());
      loopLag.probe();
    }
    // Its own lane, not the key hashed again: a key mutated while its call was out would miss it.
    Lane<K, I> lane = batch.lane;
    assert lane.inFlight && !lane.retired : "completed a call for a key that was not in flight";
    lane.inFlight = false;
    lane.idle = false;
    if (lane.handOffs != null) {
      finishHandOff(lane);
    } else if (lane.count == 0) {
      retire(lane);
      noteServedOverWaiting(lane);
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
    Lane<K, I> lane = e.lane;
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
    busy.clear();
    readyLanes = 0;
    staleInLines = 0;
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

  /**
   * Grants calls to ready lanes while the bound on calls allows. A drain whose timeout has passed
   * while its timer has not run yet (the loop was held up, and a completion reached it first)
   * closes instead: what waits is CLOSED, never sent only to be given up (as in StreamEngine).
   */
  private void dispatch() {
    if (drainRanOut()) {
      close();
      return;
    }
    for (Lane<K, I> lane = nextGrant(); lane != null; lane = nextGrant()) {
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
      if (grantingBusy) {
        idleCredit = entries.size();
      } else if (grantingIdleOverBusy) {
        // Spent per input: an idle lane that gathered several inputs while it waited (at overload,
        // many keys do) takes as much of the busy lanes' turn as it sends, not one unit of it.
        idleCredit -= entries.size();
      }
      countForInvariant(entries.size());
      start(lane, entries, false, weight);
    }
  }

  /**
   * Counts the grant for the check of P3 in {@link #nextGrant}, apart from the credit it checks:
   * kept in the same statements, a change that stopped idle grants spending the credit stopped the
   * count too, and no simulation saw the bound broken.
   */
  private void countForInvariant(int inputs) {
    if (grantingBusy) {
      lastBusyGrant = inputs;
      idleOverBusyRun = 0;
      idleInputsOverBusy = 0;
    } else if (grantingIdleOverBusy) {
      idleOverBusyRun++;
      idleInputsOverBusy += inputs;
    }
  }

  /** The next lane to call, taken out of its line, or null when none may start now. */
  private Lane<K, I> nextGrant() {
    skipStale();
    if (callLimit == null) {
      if (batchesInFlight >= limits.maxInFlightBatches() || line.isEmpty()) {
        return null;
      }
      return leaveLine(line.poll());
    }
    if (inFlight() >= callLimit.limit() || readyLanes == 0) {
      return null;
    }
    retagBusyHead();
    boolean idle = !line.isEmpty() && (busy.isEmpty() || idleCredit > 0);
    grantingIdleOverBusy = idle && !busy.isEmpty();
    if (grantingIdleOverBusy && idleInputsOverBusy >= lastBusyGrant) {
      // (Each call carries an input at least, so the grants are bounded too.)
      brokenGrant = "an idle key was granted while busy keys waited, after " + idleOverBusyRun + " idle grants"
          + " carrying " + idleInputsOverBusy + " inputs since a busy grant of " + lastBusyGrant;
    }
    grantingBusy = !idle;
    return leaveLine(idle ? line.poll() : busy.poll());
  }

  /**
   * The busy head is granted on the tag of the input it will send first: a lane whose tagged input
   * expired while it waited, or (custom order) that an input sorting before it joined since, takes
   * its next input's tag and its place in line. Kept, the old tag would send the lane ahead of keys
   * whose next input is older than the one it sends (guarantee 4; P5 of ADR 0011: each overtaking
   * grant sends an input admitted before the waiting lane's tag), and under a comparator a key fed
   * inputs that sort first could take every busy turn for good. Lazily, at the head: a stale tag is
   * only ever smaller than the fresh one here (an expiry that leaves an older input next, under a
   * custom order, is re-ranked at once in {@link #dropWaiting}).
   */
  private void retagBusyHead() {
    for (Lane<K, I> head = busy.peek(); head != null && head.tagged != head.peek(); head = busy.peek()) {
      busy.poll();
      head.tagged = head.peek();
      head.tag = head.tagged.seq;
      busy.add(head);
      skipStale();
    }
  }

  /** A key that had a head start over waiting busy lanes, let go of since (ADR 0183). */
  private record Served<K>(K key, long grantedAt) {}

  /**
   * The key's lane was let go of after a call: remembered if that call was an idle grant ahead of
   * waiting busy lanes and an input admitted before it still waits in the busy line (ADR 0183).
   * Idle-first is a head start for keys that were quiet. At a limit of a few fast calls most calls
   * empty their key, so a key as busy as the rest came back idle after every call and was granted
   * ahead of the busy line again, one input a call: those calls took the ones the busy keys'
   * backlog needed to drain, and the backlog stayed (review AU's `drop`; at a pinned limit of 1
   * after a stall, for good).
   */
  private void noteServedOverWaiting(Lane<K, I> lane) {
    if (lane.grantedAt < 0) {
      return;
    }
    Lane<K, I> head = busyHead();
    if (head == null || lane.grantedAt <= head.tag) {
      return;
    }
    try {
      servedOverWaiting.put(lane.key, lane.grantedAt);
    } catch (Throwable keyBroke) {
      // A key whose hashCode throws (ADR 0121): reported where its lane was let go of; it counts as idle.
      return;
    }
    servedOrder.add(new Served<>(lane.key, lane.grantedAt));
  }

  /**
   * Whether the key had a head start over the busy line since its oldest waiting input was admitted
   * (ADR 0183), and the idle line would give it another: not when the idle line's head waits with
   * an input admitted before the busy head's (ADR 0196). Then the back of the idle line is no head
   * start over the busy line, and the key joins it as before 0183: sent to the busy line instead,
   * by the age of its one new input, it waited behind every input of the busy line's backlog and
   * was sent with the few it had gathered, while the idle lanes (kept younger than the busy line by
   * the credit) were sent with fewer still; at overload with thousands of keys the calls carried
   * a sixth fewer inputs (review BN).
   */
  private boolean servedWhileBusyWaits(K key) {
    Lane<K, I> head = busyHead();
    if (head == null || servedOverWaiting.isEmpty()) {
      return false;
    }
    Long grantedAt = servedOverWaiting.get(key);
    return grantedAt != null && grantedAt > head.tag && !idleLineBehind(head);
  }

  /**
   * Whether the idle line's head (live: {@link #busyHead} skipped the stale) waits with an input
   * admitted before the busy head's tagged one (ADR 0196): the idle line is then behind the busy
   * line, not ahead of it.
   */
  private boolean idleLineBehind(Lane<K, I> busyHead) {
    Lane<K, I> first = line.peek();
    Entry<K, I> next = first == null ? null : first.peek();
    return next != null && next.seq < busyHead.tag;
  }

  /**
   * The busy line's head, its tag fresh (null when no busy lane waits); forgets the served keys the
   * head no longer waited behind, all of them when the line is empty.
   */
  private Lane<K, I> busyHead() {
    if (callLimit == null) {
      return null;
    }
    skipStale();
    retagBusyHead();
    Lane<K, I> head = busy.peek();
    if (head == null) {
      servedOverWaiting.clear();
      servedOrder.clear();
      return null;
    }
    while (!servedOrder.isEmpty() && servedOrder.peek().grantedAt() <= head.tag) {
      Served<K> old = servedOrder.poll();
      try {
        servedOverWaiting.remove(old.key(), old.grantedAt());
      } catch (Throwable keyBroke) {
        // Reported when its lane was let go of; what it left in the map goes when the line empties.
      }
    }
    return head;
  }

  private Lane<K, I> leaveLine(Lane<K, I> lane) {
    lane.inLine = false;
    readyLanes--;
    return lane;
  }

  /** Drops retired lanes from the heads of the lines, so a head is always live. */
  private void skipStale() {
    while (!line.isEmpty() && line.peek().retired) {
      line.poll();
      staleInLines--;
    }
    while (!busy.isEmpty() && busy.peek().retired) {
      busy.poll();
      staleInLines--;
    }
  }

  /** Moves the lane's next batch into {@code entries}; returns its weight. */
  private long take(Lane<K, I> lane, List<Entry<K, I>> entries) {
    long weight = takeBatch(lane, entries);
    queuedInputs -= entries.size();
    queuedWeight -= weight;
    return weight;
  }

  private void start(Lane<K, I> lane, List<Entry<K, I>> entries, boolean direct, long weight) {
    lane.inFlight = true;
    lane.grantedAt = !direct && grantingIdleOverBusy ? admitted() : -1;
    if (lane.delayTimer >= 0) {
      loop.cancel(lane.delayTimer);
      lane.delayTimer = -1;
    }
    if (direct) {
      directInFlight++;
    } else {
      batchesInFlight++;
    }
    if (callLimit != null && inFlight() > callLimit.limit()) {
      brokenGrant = "a call started with " + inFlight() + " calls in flight, over the limit " + callLimit.limit();
    }
    launch(lane, entries, direct, weight);
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
      readyLanes++;
      if (callLimit == null || lane.idle) {
        line.add(lane);
      } else {
        lane.tagged = lane.peek();
        lane.tag = lane.tagged.seq;
        busy.add(lane);
      }
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
    return Deadlines.after(lane.oldestArrival(), delayNanos) - loop.nanoTime();
  }

  // ---------------------------------------------------------------- bookkeeping

  private Lane<K, I> newLane(K key) {
    Lane<K, I> lane = new Lane<>(key, order, held);
    lanes.put(key, lane);
    return lane;
  }

  /**
   * Removes a lane with nothing live left and lets go of its expired entries, so that a lane left
   * (stale) in a line while every slot is busy holds nothing but itself (issue 13, item 2).
   */
  private void retire(Lane<K, I> lane) {
    lane.retired = true;
    lane.tagged = null;
    lane.release();
    if (lane.inLine) {
      // Left in its line and skipped there; compacted once the stale outnumber the live.
      lane.inLine = false;
      readyLanes--;
      staleInLines++;
      if (staleInLines > readyLanes + 32) {
        line.removeIf(l -> l.retired);
        busy.removeIf(l -> l.retired);
        staleInLines = 0;
      }
    }
    if (lane.delayTimer >= 0) {
      loop.cancel(lane.delayTimer);
      lane.delayTimer = -1;
    }
    boolean removed;
    try {
      removed = lanes.remove(lane.key, lane);
    } catch (Throwable keyBroke) {
      // A bug in the key (ADR 0121): reported, never silent; the lane is still let go of below.
      loop.report(keyBroke);
      removed = false;
    }
    if (!removed) {
      // The key's hashCode or equals changed since it was submitted (a mutable key, mutated): its
      // lane is found by identity, so that no lane outlives its work and no later input joins a
      // retired lane, where it would never be sent.
      lanes.values().remove(lane);
    }
  }

  @Override
  void dropWaiting(Lane<K, I> lane, Entry<K, I> e) {
    // Settled first: the lane lets go of an expired head at once only if it reads as settled.
    answerTimedOut(e);
    lane.forget(e);
    queuedInputs--;
    queuedWeight -= e.weight;
    if (order != null && callLimit != null && lane.inLine && !lane.idle && lane.tagged == e && lane.count > 0) {
      // Under a custom order the lane's next input may be older than the one its tag named, so the
      // lazy re-tag at the head (retagBusyHead) would not reach it: re-ranked now, O(ready lanes).
      busy.remove(lane);
      lane.tagged = lane.peek();
      lane.tag = lane.tagged.seq;
      busy.add(lane);
    }
  }

  @Override
  int queuedInputs() {
    return queuedInputs;
  }

  @Override
  Lane.Held held() {
    return held;
  }

  @Override
  void forgetCallsInFlight() {
    for (Lane<K, I> lane : new ArrayList<>(lanes.values())) {
      // Closed: every lane left is one in flight, with nothing waiting. A hand-off waiting on its
      // call completes now, with nothing to forward: the call is given up and this ferry claims
      // nothing of the key any more, as a hand-off asked from now on finds (no lane, done at once).
      // Kept waiting, it would never complete. The given-up call may still run: a node's owner
      // closing is a membership change, under which guarantee 2 holds per node only (ADR 0127).
      if (lane.handOffs != null) {
        finishHandOff(lane);
      } else {
        retire(lane);
      }
    }
    batchesInFlight = 0;
    directInFlight = 0;
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

  /** The bound on calls now: the call limit (adaptive) or {@code maxInFlightBatches} (fixed slots). */
  int callLimitNow() {
    return callLimit == null ? limits.maxInFlightBatches() : callLimit.limit();
  }

  /** Ready lanes waiting for a call. */
  int readyLanes() {
    return readyLanes;
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
    int expiredHeld = 0;
    for (Lane<K, I> lane : line) {
      if (lane.retired && lane.expiredHeld() > 0) {
        return "retired lane " + lane.key + " still holds expired inputs";
      }
    }
    for (Lane<K, I> lane : lanes.values()) {
      expiredHeld += lane.expiredHeld();
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
    if (brokenGrant != null) {
      return brokenGrant;
    }
    if (callLimit == null && batchesInFlight > limits.maxInFlightBatches()) {
      return batchesInFlight + " batch calls exceed maxInFlightBatches";
    }
    if (callLimit == null && directInFlight > limits.maxInFlightBatches()) {
      return directInFlight + " direct calls exceed maxInFlightBatches";
    }
    if (callLimit != null && inFlight() > limits.maxInFlightBatches()) {
      return inFlight() + " calls exceed maxInFlightBatches";
    }
    if (callLimit != null && (callLimit.limit() < 1 || callLimit.limit() > limits.maxInFlightBatches())) {
      return "the call limit " + callLimit.limit() + " is outside [1, maxInFlightBatches]";
    }
    if (expiredHeld != held.expired) {
      return "the lanes hold " + expiredHeld + " expired inputs but " + held.expired + " are counted";
    }
    if (queuedInputs + held.expired > limits.maxQueueing()
        || queuedWeight + held.expiredWeight > limits.maxQueuedWeight()) {
      return "the waiting room (expired inputs still held included) exceeds its bounds";
    }
    int inLines = 0;
    for (Lane<K, I> lane : line) {
      inLines += lane.retired ? 0 : 1;
    }
    for (Lane<K, I> lane : busy) {
      inLines += lane.retired ? 0 : 1;
    }
    if (inLines != readyLanes) {
      return readyLanes + " ready lanes counted but " + inLines + " live in the lines";
    }
    if (line.size() + busy.size() - readyLanes > readyLanes + 33) {
      return "the lines hold " + (line.size() + busy.size() - readyLanes) + " retired lanes";
    }
    if (phase != Phase.OPEN || delayNanos == 0) {
      // Work conservation: a free slot never coexists with a lane that could leave now.
      boolean free = callLimit == null ? batchesInFlight < limits.maxInFlightBatches() : inFlight() < callLimit.limit();
      if (free && readyLanes > 0) {
        return "a call may start but " + readyLanes + " ready lanes wait";
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

  /** Lanes in the ready lines, stale ones included (for leak checks in tests). */
  int linedUp() {
    return line.size() + busy.size();
  }

  /** Lanes in the map (for leak checks in tests). */
  int lanesHeld() {
    return lanes.size();
  }

  /** A snapshot, on the loop (the driver publishes it for other threads). */
  @Override
  public FerryMetrics metrics() {
    return new FerryMetrics(inFlight(), queuedInputs, queuedWeight, lanes.size(), submitted,
        rejected, batches + directCount, directCount, failedBatches, timedOut, callLimitNow(), readyLanes,
        callLimit == null ? 0 : callLimit.seenLatencyNanos() / 1000,
        callLimit == null ? 0 : callLimit.seenFloorNanos() / 1000,
        callLimit == null ? 0 : callLimit.seenLoopLagNanos() / 1000, callsPastTimeout());
  }
}
