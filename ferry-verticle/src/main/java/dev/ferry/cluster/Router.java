package dev.ferry.cluster;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.internal.Deadlines;
import dev.ferry.internal.Driver;
import dev.ferry.internal.Loop;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.verticle.Submission;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * One node's routing decisions (docs/adr/0055-the-routing-rule.md): for each input, submit it to
 * this node's ferry, forward it to its key's owner, or hold it; on a view change, hand lost keys
 * over and say "released" once none is left here; while leaving, stay until every forward made
 * here has been answered.
 *
 * <h2>Design</h2>
 *
 * A state machine over the ownership view ({@link Views}), the inputs held per key, the forwards
 * still open per key ("paths") and per target node, and the keys being handed off. Each public
 * method is one transition: it updates state and queues effects (a forward, a release, a submit to
 * the local ferry, a hand-off, an answer), which run after it in order; an effect whose outcome
 * comes back at once (a ferry answering inline) starts a new transition whose effects join the
 * queue instead of growing the stack, as in {@link Driver}. Time and timers come from {@link Loop}
 * so that a simulation can drive several routers in virtual time (RouterSimulationTest).
 *
 * <h2>Invariants</h2>
 *
 * <ul>
 *   <li>Every input accepted here ({@link Pending}) is answered exactly once: by the local ferry, by
 *       the node it was forwarded to, or here (CLOSED or TIMEOUT when a hold ends).
 *   <li>An input is held in at most one queue; its hold timer is live iff it is held ({@link
 *       Pending#held}); at most {@code maxHeld} inputs are held here ({@link #heldTotal}), beyond
 *       which a new one is refused (ADR 0100).
 *   <li>Routing a key's held inputs again costs one step per input and no timer for those that
 *       would only be held again behind an earlier one (ADR 0100): a hold ending under a stream of
 *       inputs never re-routes, or re-arms the timers of, everything held behind it.
 *   <li>A key's held inputs are kept in one queue, hand-offs first, then in the order they arrived
 *       here ({@link Pending#before}); an input never passes one held before it, except one that
 *       waits for the key's path, which inputs coming along that path pass. So that an
 *       input that comes back (its forward was not delivered) goes before later ones.
 *   <li>{@code path(k)} counts the forwards of k open to one node; while it is set, k's new inputs
 *       follow it (or wait here if this node owns k now).
 *   <li>An input forwarded here is held no longer than its sender allows ({@link Forward#holdMs},
 *       half of what is left of the sender's bound), then handed back unapplied with what came
 *       after it from the same node or client, also when it waited in this node's ferry and is
 *       handed off; what passed a node that left the members is never applied (ADR 0109, 0110,
 *       0112). So a forward given up by its sender is never applied afterwards, but in an owner's
 *       ferry, where the engine and the hand-off keep its order.
 *   <li>Once this node handed an input back, the same client's later inputs of the key that reach
 *       it go back too until that input comes again or its sender's allowance ends ({@link
 *       #handBackMarks}, ADR 0112): none passes it on its way back.
 *   <li>An input that came back not delivered is not sent again while a later input of its client
 *       and key, forwarded from here after it to the same node, is unanswered, and is never applied
 *       once one of those may have been ({@link #behindSent}, ADR 0115): however slow the link,
 *       none passes it there.
 *   <li>A forward answered "given up by a leave" ({@link #GIVEN_UP}) before the holds it allowed
 *       are over counts as open until then: its client's later inputs of the key wait here behind
 *       it ({@link #keepGivenUp}, ADR 0115), since it may still reach an owner.
 *   <li>No input of a client and key that passed another node is applied, or sent on, after this
 *       node submitted a later input of theirs to its ferry ({@link #fence}, ADR 0146, 0147): a
 *       forward given up by a leave, or sent by a node that crashed or stalled, and slow on the wire
 *       gets 503 instead, whatever its delay.
 *   <li>Every input's holds here end within the hold bound from its arrival ({@link #holdBound}).
 * </ul>
 *
 * <h2>Threads</h2>
 *
 * Runs only on the node's loop (asserted at each transition): no locks, nothing else touches it.
 */
final class Router {
  /** Pause before an input is sent on again after views disagreed or a forward was not delivered. */
  static final long RETRY_MS = 100;
  /**
   * How long a forward just sent may still be in its sender's registration lookup, a NO_HANDLERS
   * for it on its way here (ADR 0159): a local lookup answers in far less than a retry's pause.
   */
  static final long LOOKUP_GRACE_MS = RETRY_MS;
  /** Forwarded at once at most twice; beyond that, only after a pause (ADR 0053). */
  static final int MAX_HOPS = 2;
  /**
   * The failure code of an input handed back to the node that forwarded it here, never applied,
   * before that node's wait for it ends (a NO_HANDLERS reply: "not delivered, route it again in
   * its place"): see {@link Pending#giveUpAt}, ADR 0109.
   */
  static final int RETURNED = 408;
  /**
   * How the 503 of an input that came back begins when a later input of its client, sent after it,
   * may have been applied first (ADR 0115).
   */
  static final String OVERTAKEN = "never applied: a later input of its sender";
  /**
   * How the 502 of a forward given up by a leave ({@link #abandonForwards}) begins: the input may
   * still be on its way, held further on, and be applied later. Each node that sent it on reads it
   * (it travels back unchanged) and keeps that client's later inputs of the key behind it until its
   * own forward's holds are over ({@link Forward#givenUpUntil}, ADR 0115). What follows says for
   * how long at most, counted when it was given up ({@link #givenUpForMs}), for a routing client,
   * which knows neither when the forward went nor what hold it allowed.
   */
  static final String GIVEN_UP = "given up by a leave";
  /**
   * How the 503 of an input begins when a later input of its sender (the same client and key) was
   * submitted to this node's ferry before it arrived (ADR 0146): applied now, it would come after
   * that one.
   */
  static final String FENCED = "never applied: fenced, its sender's later input went to the downstream first";
  /** Key-and-sender pairs {@link #fence} remembers, most recently used kept. */
  static final int FENCE_ENTRIES = 1 << 16;
  /**
   * The longest origin (without its place) {@link #fence} keeps: a routing client's is a UUID.
   * Nothing else bounds {@code ferry-origin}, and the fence keeps its text after the input is
   * answered: an origin no client writes is not fenced.
   */
  static final int FENCED_ORIGIN_MAX = 256;
  /** Why {@link #close} gives up a forward still open (after {@link #GIVEN_UP}'s words and hold). */
  static final String CLOSED_BEFORE_ANSWER = "this node closed before the key's owner answered";
  private static final String GIVEN_UP_FOR = GIVEN_UP + " (may still be applied for ";

  /** What a router asks of the network; each call is made from an effect, never mid-transition. */
  public interface Links {
    /** Sends {@code f.pending} to {@code f.target}; its outcome comes back through {@link #forwarded}. */
    void forward(Forward f);

    /** Tells {@code node} that this node released view {@code viewId}. */
    void release(String node, String viewId);
  }

  /** One forward in progress: where it went and what it carries. */
  public static final class Forward {
    public final String target;
    public final Pending pending;
    /** The hop count it carries (the number of nodes it has passed, at most MAX_HOPS). */
    public final int hop;
    public final boolean handOff;
    /** What is left of the caller's deadline when sent: ms, 0 for none. */
    public final long remainingMs;
    /** The nodes it has passed, this one last, comma-separated (it carries them along). */
    public final String visited;
    /** It goes back to a node it had come through (a back trip: see {@link Router#backTrips}). */
    final boolean back;
    /** Its sender and place in that sender's order ({@link Pending#origin}), or null. */
    public final String origin;
    /**
     * How long the target may hold it (ms): past that it hands it back, never applied ({@link
     * #RETURNED}), well before this node stops waiting (ADR 0109).
     */
    public final long holdMs;
    /** How long this node waits for the answer (ms): the forward's send timeout. */
    public final long sendTimeoutMs;
    /** Its number among the forwards made by this router (1, 2, ...): which of two was sent first. */
    long no;
    /** When it was sent (loop time). */
    long sentAt;
    /**
     * Answered "given up by a leave" ({@link #GIVEN_UP}) while it may still be held further on: until
     * then (loop time) it stays in {@link Router#openByOrigin}, and its client's later inputs of the
     * key wait here behind it; 0 otherwise.
     */
    long givenUpUntil;
    /**
     * A later input of its client and key, sent on after it to the same node, was answered "may
     * have been applied" while this one was still out ({@link Router#overtakeOpen}): if it comes
     * back not delivered it is never sent again (its place was passed). That input's place; null
     * otherwise.
     */
    String overtakenBy;

    Forward(String target, Pending pending, int hop, boolean handOff, long remainingMs, String visited, boolean back,
        long holdMs, long sendTimeoutMs) {
      this.target = target;
      this.pending = pending;
      this.hop = hop;
      this.handOff = handOff;
      this.remainingMs = remainingMs;
      this.visited = visited;
      this.back = back;
      this.origin = pending.originText();
      this.holdMs = holdMs;
      this.sendTimeoutMs = sendTimeoutMs;
    }
  }

  private final Loop loop;
  private final String self;
  private final PerKeyFerry<String, Submission, ?, Object> ferry;
  private final Links links;
  private final long maxHoldNanos;
  private final long callTimeoutMs;
  /** How many inputs may be held here at once (the ferry's maxQueueing: ADR 0100). */
  private final int maxHeld;
  /** How long after losing a key this node still forwards its inputs with the hand-off class. */
  private final long ownedWindowNanos;
  private final Views views;

  /** Per key, the inputs held here, in the order they go ({@link Pending#before}). */
  private final Map<String, ArrayDeque<Pending>> held = new LinkedHashMap<>();
  /** The inputs in {@link #held}, all keys together. */
  private int heldTotal;
  /** How many times an input was routed (for tests: the work a hold's end causes). */
  long routes;
  /** The nodes each input submitted to the local ferry had passed, for a hand-off to carry on. */
  private final Map<Submission, Pending> submitted = new java.util.IdentityHashMap<>();
  private final Set<String> handingOff = new HashSet<>();
  private int handOffsOpen;
  /**
   * The nodes this node's release of its current view went to (cleared on a view change): a node
   * that comes to wait for it later (a join this node's view never showed, a member that became a
   * ferry) gets it too, with the view unchanged (ADR 0105).
   */
  private final Set<String> releasedTo = new HashSet<>();
  /**
   * The nodes of {@link #releasedTo} whose release of the current view was not delivered ({@link
   * #releaseNotDelivered}): sent again at a later snapshot (read every second, ADR 0113), once no
   * hand-off that came back from them waits here to go again, so that it still arrives behind the
   * hand-offs it speaks for (cleared on a view change).
   */
  private final Set<String> releaseLost = new HashSet<>();
  /** The timer that sends a lost release once a hand-off's lookup is surely over, -1 if none. */
  private long releaseCheck = -1;
  /** Forwards not yet answered, per target node. */
  private final Map<String, Set<Forward>> open = new HashMap<>();
  /**
   * Per key, the nodes its inputs were forwarded to and are still unanswered at, with how many,
   * the most recently used last: the key's "path" (ADR 0053, 0055).
   */
  private final Map<String, LinkedHashMap<String, Integer>> paths = new HashMap<>();
  /**
   * Per key, how many of {@link #paths}' forwards went back to a node the input had come
   * through. An input that arrives from such a node may have left it before the one sent back
   * got there: it is not "along the path" and does not go around it, but waits for it.
   */
  private final Map<String, Map<String, Integer>> backTrips = new HashMap<>();
  /** The live members of the last snapshot adopted here. */
  private Set<String> members = Set.of();
  /**
   * Nodes seen as members and then gone from the members (crashed, or left), each with when this
   * node saw it go (loop time), until seen as members again: what passed through them nobody waits
   * for any more (the nodes that had sent it to them answered it when they left), so it is never
   * applied (ADR 0110, 0112). Forgotten twice the hold bound after it went (review P: a restart
   * is a new node id, so under churn the set only grew): what passed it and was on the wire then
   * is held at most the hold bound from its arrival at its next node, and a hand-back mark of it
   * ends within that too.
   */
  private final Map<String, Long> departed = new HashMap<>();
  /**
   * Per key and origin (a client, {@link Pending#origin}), the places in that client's order of
   * the inputs this node handed back and has not seen again, each with the moment (loop time)
   * its sender stops waiting for it: that client's later inputs of the key go back too until
   * then (ADR 0112). Entries end when they come again, their moment passes, or the node they went
   * back to leaves the members (what it sends was dropped since: ADR 0110).
   */
  private final Map<String, Map<String, TreeMap<Long, HandBackMark>>> handBackMarks = new HashMap<>();

  /** One place handed back: until when, and to which node ({@link #handBackMarks}). */
  private record HandBackMark(long end, String sender) {}

  /**
   * Per key and origin (a client), by place, the forwards made here that are still unanswered:
   * which of that client's later inputs of the key went out after a given one ({@link #sentAfter}).
   */
  private final Map<String, Map<String, TreeMap<Long, List<Forward>>>> openByOrigin = new HashMap<>();
  /** Per key, how many of its forwards in {@link #openByOrigin} are given up and kept ({@link Forward#givenUpUntil}). */
  private final Map<String, Integer> givenUpOpen = new HashMap<>();
  /**
   * Per key and origin, by place, the inputs held here that came back not delivered while inputs
   * of the same client and key sent from here after them were still unanswered ({@link
   * Pending#behindSent}): each waits for those, and is never applied once one of them may have been
   * (ADR 0115).
   */
  private final Map<String, Map<String, TreeMap<Long, List<Pending>>>> behindSent = new HashMap<>();

  /**
   * Per key and origin (a client that stamped it, {@link #fenceable}), the largest place this node
   * submitted to its ferry: the fence (ADR 0146). An input of that client and key with a smaller
   * place that passed another node and arrives later is answered 503, never applied (ADR 0147):
   * whatever kept it on its way (a slow link behind a leave that gave it up, a node that crashed or
   * stalled), its client's later input got through first. Lowered when the ferry hands the key
   * off (what it hands off was never called), but never below a place the ferry called. A sender
   * that starts its count again must take a new origin (ADR 0147): its old fence would refuse its
   * inputs that pass another node until its count passed the old one. The most recently used
   * {@link #FENCE_ENTRIES} pairs are kept; an input of a pair forgotten relies on ADR 0115's waits
   * alone.
   */
  private final Map<Fenced, Fence> fence = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Fenced, Fence> eldest) {
      return size() > FENCE_ENTRIES;
    }
  };

  /** A key and a client: one entry of {@link #fence}. */
  private record Fenced(String key, String origin) {}

  /**
   * The places of one key and client that went to this node's ferry: the largest submitted (a
   * hand-off lowers it) and the largest that left it otherwise than by a hand-off (called, or
   * answered there). The second is never lowered: the engine hands off in the order it was given,
   * but that is the client's order only if its places came in order, and a raw sender may stamp
   * any place (ADR 0098), so a place handed off says nothing of those already called.
   */
  private static final class Fence {
    long submitted = Long.MIN_VALUE;
    long called = Long.MIN_VALUE;

    long place() {
      return Math.max(submitted, called);
    }
  }

  /** Entries in {@link #handBackMarks}, and the count past which they are swept for ended ones. */
  private int handBackEntries;
  private int handBackSweepAbove = 64;

  /**
   * Hand-back marks and held inputs looked at to route inputs and hand-offs (for tests: what one
   * costs, which must not grow with what is marked or held).
   */
  long scanned;
  /**
   * Nodes that answered a forward with NO_HANDLERS (or 410) since the last view change, until their
   * handler answers a forward sent after that (review P: with no view change to end it, every input
   * forwarded there waited a pause, a key's inputs one per pause).
   */
  private final Refusals unreachable = new Refusals();
  private long arrivals;
  /** Forwards made here, numbered for {@link Forward#no}. */
  private long forwardsMade;
  /** Inputs that entered at this node from a caller, numbered for {@link Pending#origin}. */
  private long entered;
  /** This node as the origin of what enters it without one. */
  private final String selfOrigin;
  /** See {@link #life()}. */
  private final String life = java.util.UUID.randomUUID().toString();
  private Promise<Void> left;
  /** Leaving gave up waiting for forwards: later leaving() calls complete at once. */
  private boolean abandoned;
  /**
   * Per key, per client (null: an input without origin), the first place a leave gave up here
   * ({@link #abandonForwards}); kept until the node closes, for the inputs still arriving.
   */
  private final Map<String, Map<String, Long>> givenUp = new HashMap<>();
  private String givenUpWhy;
  /** Leaving, every other node routed by a view without this node (it is never routed to again). */
  private boolean goneFromViews;
  /** Whether {@link #left} also waits for nothing held or open here (of what arrived by {@link #idleAfter}). */
  private boolean leftIdle;
  /**
   * The last arrival ({@link Pending#seq}) the idle wait covers: what arrives later (a bridge
   * client's sends keep entering at a leaving node) is answered as ever, but does not hold the
   * leave open (ADR 0102).
   */
  private long idleAfter;
  private boolean closed;

  private final EffectQueue effects = new EffectQueue();
  /** For a simulation's trace: what this router decided, in words. */
  java.util.function.Consumer<String> tracer;

  /**
   * @param callTimeoutMs the ferry's call timeout: a previous owner hands a key over once its call
   *     in flight is over
   * @param maxHoldMs how long an input may be held here (never beyond its caller's deadline): at
   *     least as long as another node may take to release a key or answer a forward, which in a
   *     graceful leave is that node's whole leave ({@link ClusterNode#maxHoldMs}, ADR 0099)
   */
  Router(Loop loop, String self, PerKeyFerry<String, Submission, ?, Object> ferry, long callTimeoutMs, long maxHoldMs,
      Links links) {
    this(loop, self, ferry, callTimeoutMs, maxHoldMs, Integer.MAX_VALUE, links);
  }

  /**
   * @param maxHeld how many inputs may be held here at once, all keys together (the ferry's {@code
   *     maxQueueing}): a new input beyond it is refused REJECTED, as the ferry refuses one beyond
   *     its queue (ADR 0100)
   */
  Router(Loop loop, String self, PerKeyFerry<String, Submission, ?, Object> ferry, long callTimeoutMs, long maxHoldMs,
      int maxHeld, Links links) {
    this.loop = loop;
    this.maxHeld = maxHeld;
    this.self = self;
    this.ferry = ferry;
    this.links = links;
    // The config accepts ms up to Long.MAX_VALUE / 10^6: drainTimeoutMs + 2 x callTimeoutMs, in
    // nanoseconds, wrapped (a ~10 s hold bound). Capped at ~73 years, which is "no bound" and
    // leaves room to add it to a nanoTime.
    this.maxHoldNanos = nanosCapped(maxHoldMs);
    this.callTimeoutMs = callTimeoutMs;
    this.ownedWindowNanos = nanosCapped(callTimeoutMs >= MAX_CAPPED_NANOS / 2_000_000 ? Long.MAX_VALUE : 2 * callTimeoutMs);
    this.views = new Views(self);
    // The '/' says a node gave it: never fenced (ADR 0146; a routing client's origin has none).
    this.selfOrigin = self + "/#";
  }

  public String self() {
    return self;
  }

  /** The longest time the Router holds in nanoseconds: a quarter of a long, about 73 years. */
  private static final long MAX_CAPPED_NANOS = Long.MAX_VALUE / 4;

  /** {@code ms} in nanoseconds, at most {@link #MAX_CAPPED_NANOS} (a negative {@code ms} is a bug: 0). */
  static long nanosCapped(long ms) {
    return ms <= 0 ? 0 : ms >= MAX_CAPPED_NANOS / 1_000_000 ? MAX_CAPPED_NANOS : ms * 1_000_000;
  }

  /**
   * This ferry among those deployed one after the other under its node id (a ferry deployed again
   * on the same Vert.x node has the same id): sent with its releases, so that a release of the one
   * before does not count for it (ADR 0131).
   */
  public String life() {
    return life;
  }

  // ---------------------------------------------------------------- transitions

  /**
   * An input accepted at this node: from a caller ({@code visited} null or empty, {@code hop} 0),
   * or forwarded through the nodes {@code visited} (comma-separated, the sender last). {@code
   * origin} is its sender and place in that sender's order ("sender#n", {@link Pending#origin}):
   * given by a routing client or carried by a forward; an input entering here without one gets
   * this node's. {@code answer} gets its one outcome.
   */
  public void accept(Submission input, int hop, boolean handedOff, String visited, String origin, Promise<Object> answer) {
    accept(input, hop, handedOff, visited, origin, 0, answer);
  }

  /**
   * As above, for a forward whose sender may hold it here at most {@code holdMs} (ms, 0 for no
   * bound but this node's own: {@link Forward#holdMs}).
   */
  public void accept(Submission input, int hop, boolean handedOff, String visited, String origin, long holdMs,
      Promise<Object> answer) {
    step(() -> {
      long now = loop.nanoTime();
      // Saturated, as Submission and the engine take it: near the documented top (9223372036854
      // ms) the sum wrapped past Long.MAX_VALUE into a time long gone, which then won the minimum
      // that bounds a hold (holdBound), and the input stayed held without bound.
      long deadline = input.timeoutMs > 0
          ? Deadlines.after(now, TimeUnit.MILLISECONDS.toNanos(input.timeoutMs))
          : Long.MAX_VALUE;
      Pending p = new Pending(input, hop, handedOff, deadline, answer);
      p.arrivedAt = now;
      if (holdMs > 0) {
        // Never beyond this node's own bound (and no overflow, whatever a node sends).
        p.giveUpAt = now + Math.min(holdMs, maxHoldNanos / 1_000_000) * 1_000_000;
        p.senderWaitsUntil = p.giveUpAt + (p.giveUpAt - now);
      }
      if (visited != null && !visited.isEmpty()) {
        p.visited = visited;
        p.sender = visited.substring(visited.lastIndexOf(',') + 1);
      }
      if (origin != null) {
        p.origin(origin);
      } else if (p.sender == null) {
        p.origin = selfOrigin; // no text per input: "self#n" is built only if it is forwarded
        p.originSeq = ++entered;
      }
      if (closed) {
        answer(p, new FerryException(FerryError.CLOSED, "this node left the cluster"));
        return;
      }
      if (behindGivenUp(p)) {
        // Arrived after the leave gave up an earlier input of its client (its bridge lingers):
        // with the key's path gone it would go to the owner directly, past that one.
        answer(p, behindGivenUpAnswer());
        return;
      }
      if (behindFence(p)) {
        answer(p, fencedAnswer(p));
        return;
      }
      route(p);
    });
  }

  /**
   * Whether {@code p} comes after an input of its client (any, without an origin) that a leave gave
   * up here: that one may still be on the wire and applied later, and with its path cleared {@code
   * p} could pass it (ADR 0115, a leave's given-up paths).
   */
  private boolean behindGivenUp(Pending p) {
    Map<String, Long> first = givenUp.get(p.input.key);
    if (first == null) {
      return false;
    }
    Long place = first.get(p.origin);
    return p.origin == null || first.containsKey(null) || place != null && place < p.originSeq;
  }

  private FerryException behindGivenUpAnswer() {
    return new FerryException(FerryError.CLOSED, "never applied: an earlier input of its sender was forwarded from "
        + self + " and given up (" + givenUpWhy + "), and may still be applied");
  }

  /**
   * Whether a later input of {@code p}'s client and key went to this node's ferry before {@code p}
   * (ADR 0146): {@code p} is then never applied here, nor sent on. The same place passes (the same
   * input coming again, or handed off and back). Only an input that passed another node is
   * refused (ADR 0147): one the client sent here straight cannot be behind its own later one
   * unless the client sent it out of order. Passing another node is the only way an input can
   * arrive after a later one of its client: a leave gave its forward up, or its sender's send
   * timed out (that node crashed or stalled) while it was still on the wire, and the node it
   * passed may still be in this node's view (a removal not yet adopted). A raw sender may stamp
   * a routing client's origin with a place of its choosing (ADR 0098); that client's inputs that
   * go straight to their owner never meet the fence it raised.
   */
  private boolean behindFence(Pending p) {
    return behind(p, fenceOf(p));
  }

  /** The fence of {@code p}'s client and key, or null if none is kept (or its origin is not fenced). */
  private Fence fenceOf(Pending p) {
    return fenceable(p) ? fence.get(new Fenced(p.input.key, p.origin)) : null;
  }

  private boolean behind(Pending p, Fence f) {
    return f != null && p.originSeq < f.place() && !p.visited.isEmpty();
  }

  /**
   * Whether {@code p}'s origin is one a sender stamped (a routing client's, or a raw sender's own),
   * and not too long to keep. An origin a node gave what entered it without one (it has a '/',
   * {@link #selfOrigin}) is shared by every raw sender entering there, whose inputs no rule keeps in
   * one order on their way (ADR 0098: in a membership storm a later one may overtake an earlier one
   * upstream): fenced, those would get 503 where they were applied before (ADR 0146's review).
   */
  private static boolean fenceable(Pending p) {
    return p.origin != null && p.origin.length() <= FENCED_ORIGIN_MAX && p.origin.indexOf('/') < 0;
  }

  private FerryException fencedAnswer(Pending p) {
    return new FerryException(FerryError.CLOSED, FENCED + " at " + self + " (" + p.originText() + ")");
  }

  /** {@link #snapshot(Set, Set, Set, Map)} with no lives announced. */
  public void snapshot(Set<String> members, Set<String> announced, Set<String> leaving) {
    snapshot(members, announced, leaving, Map.of());
  }

  /**
   * A membership snapshot: live members, announced nodes and leaving ones, and the lives their
   * ferries announced ({@link Membership.Snapshot}).
   */
  public void snapshot(Set<String> members, Set<String> announced, Set<String> leaving, Map<String, String> lives) {
    step(() -> {
      failForwardsToNonMembers(members);
      long now = loop.nanoTime();
      for (String m : this.members) {
        if (!members.contains(m)) {
          departed.put(m, now);
        }
      }
      this.members = Set.copyOf(members);
      // A node seen again as a member (a partition healed: Hazelcast merges it back with the same
      // Vert.x node id) is a member like any other; only its departure dropped what it had sent.
      departed.keySet().removeAll(members);
      departed.values().removeIf(at -> now - at > 2 * maxHoldNanos);
      dropFromDeparted();
      if (handBackEntries > 0) {
        // Marks whose senders stopped waiting go here too, not only when the table doubles: a
        // burst of hand-backs on keys never seen again would otherwise stay until twice as many
        // came (snapshots come at least every second: ADR 0113).
        sweepHandBackMarks();
      }
      if (views.adopt(members, announced, leaving, lives, loop.nanoTime())) {
        releasedTo.clear();
        releaseLost.clear();
        unreachable.clear();
        handOffLostKeys();
      } else {
        // One that stopped waiting (gone, or its ferry closed) and waits again (a ferry deployed
        // anew on the same Vert.x node: the same id) is sent it again.
        releasedTo.retainAll(views.releaseTargets());
      }
      flushAll();
      maybeRelease();
    });
  }

  /** Node {@code from} released view {@code viewId}. */
  public void released(String from, String viewId) {
    released(from, null, viewId);
  }

  /**
   * The ferry {@code life} ({@link #life}) at node {@code from} released view {@code viewId}; null
   * life: not said.
   */
  public void released(String from, String life, String viewId) {
    step(() -> {
      if (from == null || viewId == null) {
        return;
      }
      if (life != null && views.newLife(from, life)) {
        // A ferry deployed again under that id: it waits for this node's release of the view,
        // which may have gone to its predecessor only (this node saw no change of view or
        // ferries in between: ADR 0131).
        releasedTo.remove(from);
        maybeRelease();
      }
      if (views.released(from, life, viewId)) {
        flushAll();
        checkLeft(); // the last release a leaving node waited for
      }
    });
  }

  /**
   * This node's release of {@code viewId} did not reach {@code node}: its send failed (a joiner's
   * peer address not yet registered where this node sends from, ADR 0148, or no reply in time).
   * The node waits for it until the next view change otherwise, holding the keys it gained to
   * their bound: unless the view changed since, it is sent again at a later snapshot ({@link
   * #maybeRelease}). A release is true as long as the view stays (ADR 0105), so a second copy
   * that arrives does no harm.
   */
  public void releaseNotDelivered(String node, String viewId) {
    step(() -> {
      if (node != null && views.id().equals(viewId) && releasedTo.remove(node)) {
        releaseLost.add(node);
      }
    });
  }

  /** The outcome of a forward made by this router. */
  public void forwarded(Forward f, AsyncResult<Object> ar) {
    step(() -> {
      Set<Forward> toTarget = open.get(f.target);
      if (toTarget == null || !toTarget.remove(f)) {
        return; // already failed when its target left the members
      }
      if (toTarget.isEmpty()) {
        open.remove(f.target);
      }
      if (!keepGivenUp(f, ar)) {
        forwardClosed(f);
      }
      Pending p = f.pending;
      if (tracer != null && !ar.succeeded()) {
        tracer.accept("forward of " + p.input.body + " to " + f.target + " failed: "
            + (ar.cause() instanceof ReplyException re ? re.failureType() + " " + re.failureCode() : String.valueOf(ar.cause())));
      }
      boolean notDelivered = !ar.succeeded() && ar.cause() instanceof ReplyException re
          && re.failureType() == ReplyFailure.NO_HANDLERS;
      boolean passed = notDelivered && !closed && f.overtakenBy != null;
      if (passed) {
        // Back not delivered, but a later input sent after it may have been applied meanwhile:
        // sent again it could be applied after that one. Never applied, then (a 408 slower than
        // that input's send timeout: formal/Handoff.pml, ADR 0144).
        if (tracer != null) {
          tracer.accept("give up " + p.input.body + " (came back after " + f.overtakenBy + " may have been applied)");
        }
        answer(p, new FerryException(FerryError.CLOSED, OVERTAKEN + " (" + f.overtakenBy + "), sent on from " + self
            + " after this one, may have been applied before this one came back"));
        if (!(ar.cause() instanceof ReplyException re && re.failureCode() == RETURNED)) {
          unreachable.refused(f.target, loop.nanoTime()); // as below: a 410 says the target takes nothing more
        }
      } else if (notDelivered && !closed) {
        // Nothing reached a ferry: route it again, in its place among the key's inputs, once the
        // key's other forwards are back and no sooner than a pause or the next view (ADR 0056).
        // A hand-back says the target is up and only could not send it on in time: the target
        // stays reachable for the key's and other keys' inputs (ADR 0112).
        // Itself it still goes again only after a pause (handedBack).
        if (ar.cause() instanceof ReplyException re && re.failureCode() == RETURNED) {
          p.handedBack = true;
        } else {
          unreachable.refused(f.target, loop.nanoTime());
        }
        p.retry = false;
        hold(p, RETRY_MS);
        if (p.held) {
          waitBehindSent(p);
        }
      } else if (ar.succeeded()) {
        tookAfterRefusal(f);
        answerWith(p, ar.result());
      } else if (ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
        tookAfterRefusal(f);
        answer(p, re); // the owner's code and text, unchanged
      } else if (ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.TIMEOUT) {
        // Delivered or not, nobody can tell: the owner may have applied it. 502, never 503 (which
        // says "never sent" and invites a resend), as for a call given up (ADR 0064).
        answer(p, new FerryException(FerryError.FAILED, "the key's owner did not answer in time (it may have applied the input): "
            + ar.cause().getMessage()));
      } else {
        answer(p, new FerryException(FerryError.CLOSED, "the key's owner could not be reached: " + ar.cause().getMessage()));
      }
      boolean mayHave = !notDelivered && mayHaveApplied(ar);
      boolean gaveUp = mayHave && overtaken(f);
      if (mayHave) {
        overtakeOpen(f);
      }
      clearPath(f);
      sentAfterAnswered(f);
      if (gaveUp || passed) {
        // What waited behind the inputs given up goes on, once the key's path no longer counts
        // this forward (routed before, it would follow a path with nothing on it: ADR 0115 review).
        flushHeld(f.pending.input.key);
      }
      checkLeft();
    });
  }

  /**
   * {@code f}'s target answered it through its handler: if {@code f} went after that node's last
   * refusal, the node takes forwards again and is no longer paused for (as the routing client
   * reads it, ADR 0148). A reply to a forward sent before the refusal tells nothing.
   */
  private void tookAfterRefusal(Forward f) {
    unreachable.answered(f.target, f.sentAt);
  }

  /**
   * Leaving, once the caller has withdrawn this node's announcement (the next snapshot drops it
   * from the view). Completes once the view without this node is adopted here and by every other
   * node (their releases arrived) and every key was handed over; with {@code idle}, also once
   * nothing that arrived here before this call is held here or forwarded and unanswered (ask for
   * that once this node stopped consuming; an input that still arrives later, from its bridge,
   * does not keep the leave open: ADR 0102).
   */
  public Future<Void> leaving(boolean idle) {
    Promise<Void> done = Promise.promise();
    step(() -> {
      left = done;
      leftIdle = idle;
      idleAfter = arrivals;
      checkLeft();
    });
    return done.future();
  }

  /**
   * Gives up waiting: answers every open forward FAILED (leaving took too long; the owners may
   * have applied them, so 502, never 503: ADR 0064), and CLOSED what is held here behind one of
   * them of the same client, which with their paths gone could pass them (ADR 0115).
   */
  public void abandonForwards(String why) {
    step(() -> {
      giveUpOpenForwards(why);
      abandoned = true;
      if (left != null) {
        left.tryComplete();
      }
    });
  }

  /** {@link #abandonForwards}'s answers, in a step: every open forward 502, and what waits behind them here. */
  private void giveUpOpenForwards(String why) {
    List<Forward> given = new java.util.ArrayList<>();
    open.values().forEach(given::addAll);
    open.clear();
    // Forwards given up further on (keepGivenUp) stay: what they hold back here still waits.
    given.forEach(this::forwardClosed);
    paths.clear();
    backTrips.clear();
    Set<String> gaveUp = new java.util.HashSet<>();
    long now = loop.nanoTime();
    for (Forward f : given) {
      long forMs = Math.max(0, (f.sentAt + f.holdMs * 1_000_000 - now + 999_999) / 1_000_000);
      answer(f.pending, new FerryException(FerryError.FAILED, GIVEN_UP_FOR + forMs + " ms): " + why
          + " (it may have applied the input)"));
      if (overtaken(f)) {
        gaveUp.add(f.pending.input.key);
      }
      givenUp.computeIfAbsent(f.pending.input.key, k -> new HashMap<>())
          .merge(f.pending.origin, f.pending.originSeq, Math::min);
    }
    // What is held here behind a given-up input of its client may still be passed by it: that
    // one may be on the wire and applied later, and with the key's path gone this one would go
    // to the owner directly. It was never sent: 503, never applied (ADR 0115, abandoned paths).
    givenUpWhy = why;
    givenUp.keySet().forEach(key -> {
      ArrayDeque<Pending> q = held.get(key);
      for (Pending p : q == null ? List.<Pending>of() : List.copyOf(q)) {
        if (behindGivenUp(p)) {
          unhold(q, p);
          cancelHold(p);
          answer(p, behindGivenUpAnswer());
          gaveUp.add(key); // what waited behind it goes on
        }
      }
    });
    // Only once every given-up forward was counted: routed at the first, an input that came back
    // behind a later one still to be counted would go out again after it (ADR 0115 multi-router
    // review). What this lets go on is forwarded, and answered, anew.
    gaveUp.forEach(this::flushHeld);
  }

  /**
   * Closes: everything still held here is answered CLOSED, and later arrivals too; forwards still
   * open are given up (502, as by {@link #abandonForwards}). A leave that ends as planned leaves
   * none; one that gave up may leave some made after the give-up (a key handed off once its call
   * in flight ended). They are not waited for, and their answers would come back after the node,
   * and maybe its Vert.x, closed, leaving their callers to their send timeouts (ADR 0115).
   */
  public void close() {
    step(() -> {
      closed = true;
      for (ArrayDeque<Pending> q : held.values()) {
        for (Pending p : q) {
          p.held = false;
          cancelHold(p);
          answer(p, new FerryException(FerryError.CLOSED, "this node left the cluster"));
        }
      }
      held.clear();
      heldTotal = 0;
      if (!open.isEmpty()) {
        // Nothing is held any more, so nothing is routed anew by it.
        giveUpOpenForwards(CLOSED_BEFORE_ANSWER);
      }
    });
  }

  // ---------------------------------------------------------------- what others may read

  public boolean known() {
    return views.known();
  }

  public List<String> view() {
    return views.view();
  }

  public String viewId() {
    return views.id();
  }

  public boolean settled() {
    return views.settled();
  }

  /** The nodes whose release of the current view has not arrived (empty when settled). */
  public Set<String> awaiting() {
    return views.awaiting();
  }

  /** Hand-back marks kept here ({@link #handBackMarks}), for tests. */
  int handBackMarkCount() {
    return handBackEntries;
  }

  /** Keys being handed to their new owners; no release goes out until none is. */
  public int handOffsOpen() {
    return handOffsOpen;
  }

  /** Inputs held here now. */
  public int heldCount() {
    return heldTotal;
  }

  /**
   * Forwards answered "given up by a leave" and kept open here until the holds they allowed are
   * over ({@link #keepGivenUp}): their clients' later inputs of the key wait behind them.
   */
  public int givenUpKept() {
    int n = 0;
    for (int k : givenUpOpen.values()) {
      n += k;
    }
    return n;
  }

  /** Forwards made here and not answered yet. */
  public int openForwards() {
    int n = 0;
    for (Set<Forward> s : open.values()) {
      n += s.size();
    }
    return n;
  }

  /** What this router waits for, for a test's trace. */
  String describe() {
    Map<String, String> pathTargets = new TreeMap<>();
    paths.forEach((k, p) -> pathTargets.put(k, p.toString()));
    Map<String, Integer> heldKeys = new TreeMap<>();
    held.forEach((k, q) -> heldKeys.put(k, q.size()));
    return self + " view=" + views.view() + " settled=" + views.settled() + " held=" + heldKeys + " paths=" + pathTargets
        + " handingOff=" + handingOff + " handOffsOpen=" + handOffsOpen + " releasedTo=" + releasedTo
        + " unreachable=" + unreachable.nodes() + (left != null ? " leaving" : "") + (closed ? " closed" : "");
  }

  // ---------------------------------------------------------------- inside transitions

  private void route(Pending p) {
    routes++;
    String key = p.input.key;
    if (p.seq == 0) {
      p.seq = ++arrivals;
    }
    if (p.sender != null && !p.returned && passed(p.visited, self)) {
      // It passed here before and came back (views disagreed along its way): it is one of the
      // earlier inputs that this node's later ones of the key wait for, so it goes first.
      p.returned = true;
    }
    if (p.sender != null && !p.returned && !p.alongPath && passedPath(p.visited, key)) {
      // It comes from the node this node's earlier inputs of the key went to, which passes on what
      // it gets in order: it is not one of the later inputs that must wait for those.
      p.alongPath = true;
    }
    String gone = departedOnItsWay(p);
    if (gone != null) {
      drop(p, gone);
      return;
    }
    String after = afterHandedBack(p);
    if (after != null) {
      // Sent on before its node saw the earlier one come back (or along another way): taken here,
      // it could be applied before that one is sent again. It goes back too, to be sent again
      // behind it (ADR 0112).
      returnToSender(p, "sent after " + after + ", which went back to its sender");
      return;
    }
    if (behindGivenUpForward(p)) {
      // An earlier input of its client, forwarded from here, was given up by a leave further on
      // and may still be applied until that forward's holds end: sent now (the key's path is gone)
      // it could reach the owner first. It waits here for that moment (ADR 0115).
      hold(p);
      return;
    }
    if (p.behindSent && sentAfter(p)) {
      // It came back, and its client's later inputs of the key that went out from here after it
      // are still unanswered: sent now, it would follow them on the same link, and one of them
      // may reach a node after the mark of its hand-back ended there and be applied first. It
      // waits for their answers (ADR 0115).
      hold(p);
      return;
    }
    boolean first = p.handedOff || p.returned || p.alongPath;
    p.waitsForPath = false;
    if (!views.known() || handingOff.contains(key)) {
      hold(p);
      return;
    }
    if (p.retry ? behindOwnSender(p) : behindHeld(p)) {
      // Behind the key's inputs held here: one sender's inputs keep their order even when an
      // earlier one waits. A paced retry skips the others but not its own sender's earlier input
      // (one that came back NO_HANDLERS and whose new pause outlasts this one's: ADR 0106).
      hold(p);
      return;
    }
    String owner = views.owner(key);
    if (owner == null) {
      answer(p, new FerryException(FerryError.CLOSED, "no node of the cluster serves this address"));
      return;
    }
    // Hand-offs follow the path too: consecutive ones of a key may meet different views here.
    if (backTripTo(key, p.visited) && (!p.returned || behindBackTrip(p))) {
      // An input sent back to a node this one came through is still unanswered: this one may
      // have left that node before the other got there, so it waits for it (not for the rest of
      // the path). One that came back here waits only for the earlier inputs of its own sender
      // (ADR 0098): those never wait for it, so no two inputs wait for each other.
      p.waitsForPath = true;
      hold(p);
      return;
    }
    String via = pathOf(key, p.visited);
    if (via == SEVERAL) {
      hold(p); // routed again when one of those ways is clear
      return;
    }
    String target = owner;
    if (via != null && !via.equals(owner)) {
      // Earlier inputs of this key are still on their way through another node: follow them (it
      // passes these on behind them), or wait for them to come back if the key is ours now or
      // that node did not take them.
      if (owner.equals(self) || unreachable.contains(via)) {
        p.waitsForPath = true;
        hold(p);
        return;
      }
      target = via;
    }
    if (target.equals(self)) {
      if (views.gated(key)) {
        hold(p);
      } else {
        submit(p);
      }
      return;
    }
    if (!p.retry && (passed(p.visited, target) || unreachable.contains(target) || p.hop >= MAX_HOPS || p.handedBack)) {
      // Views disagree (the sender owns it by this node's view, or it was passed on twice), or the
      // target just refused a forward, or handed this input back: rather than bounce it at network
      // speed, wait for the next view or a short pause, then send it on once more.
      hold(p, RETRY_MS);
      return;
    }
    p.retry = false;
    p.handedBack = false;
    // Reaching the previous owner after the key moved, an input is older than whatever its
    // sender's entry node now sends to the new owner directly: it goes with the hand-off class.
    forward(target, p, target.equals(owner)
        ? first || views.ownedJustBefore(key, loop.nanoTime(), ownedWindowNanos)
        : first);
  }

  private static boolean passed(String visited, String node) {
    for (String v : visited.split(",")) {
      if (v.equals(node)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether {@code p} must wait behind an input of its key held here that goes before it. An input
   * coming along the key's path (or back) waits only behind others that came that way: it is older
   * than whatever entered here while the path was open, which may be waiting for it.
   */
  private boolean behindHeld(Pending p) {
    ArrayDeque<Pending> q = held.get(p.input.key);
    if (q != null) {
      boolean old = old(p);
      for (Pending earlier : q) {
        if (earlier.before(p) && (!old || (old(earlier) && !earlier.waitsForPath))) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Whether an earlier input of {@code p}'s sender and key is held here before it (ADR 0106). Only
   * that sender's order counts, and only inputs ahead of {@code p} in the key's queue, which never
   * wait for one behind them: so no two inputs wait for each other (ADR 0098's reasoning).
   */
  private boolean behindOwnSender(Pending p) {
    ArrayDeque<Pending> q = held.get(p.input.key);
    if (q != null && p.origin != null) {
      for (Pending earlier : q) {
        if (earlier.before(p) && sameSenderEarlier(earlier, p)) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean sameSenderEarlier(Pending earlier, Pending later) {
    return later.origin != null && later.origin.equals(earlier.origin) && earlier.originSeq < later.originSeq;
  }

  private void submit(Pending p) {
    long remaining = p.remainingMs(loop.nanoTime());
    if (remaining < 0) {
      answer(p, new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent"));
      return;
    }
    Fence placed = fenceOf(p);
    if (behind(p, placed)) {
      answer(p, fencedAnswer(p)); // held here while a later one went in: never applied after it
      return;
    }
    if (placed == null && fenceable(p)) {
      placed = new Fence();
      fence.put(new Fenced(p.input.key, p.origin), placed);
    }
    if (placed != null) {
      placed.submitted = Math.max(placed.submitted, p.originSeq);
    }
    Fence calledHere = placed;
    unwait(p);
    // Kept while it waits in the ferry: if the key is handed off meanwhile, the input goes on with
    // the nodes it passed and its place among the key's inputs here.
    submitted.put(p.input, p);
    if (tracer != null) {
      tracer.accept("submit " + p.input.body);
    }
    effects.add(() -> {
      Future<Object> outcome = remaining > 0 ? ferry.submit(p.input, Duration.ofMillis(remaining)) : ferry.submit(p.input);
      outcome.onComplete(done -> {
        AsyncResult<Object> ar = leftOutIsTimeout(p, done);
        // Still here: it left the ferry by its call or an answer there, not by a hand-off.
        if (submitted.remove(p.input, p) && calledHere != null && mayHaveBeenCalled(ar)) {
          calledHere.called = Math.max(calledHere.called, p.originSeq);
        }
      });
      // Not through Submission.answerTo: an input handed off and come back is submitted here again,
      // and each submission's outcome must reach its own Pending. An input whose deadline passes
      // while its batch waits to be written is still left out, and answered 504 when its call ends.
      // A hand-off that went back unapplied (the engine wraps that as CLOSED) goes back to its
      // sender as such, to be routed again there in its place (ADR 0112).
      outcome.onComplete(done -> {
        AsyncResult<Object> ar = leftOutIsTimeout(p, done);
        Throwable back = ar.failed() && ar.cause() instanceof FerryException fe ? asHandBack(fe.getCause()) : null;
        if (back != null && p.sender != null) {
          p.answer.fail(back);
        } else {
          p.answer.handle(ar);
        }
      });
    });
  }

  private void forward(String target, Pending p, boolean handOff) {
    long now = loop.nanoTime();
    long remaining = p.remainingMs(now);
    if (remaining < 0) {
      answer(p, new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent"));
      return;
    }
    // How long this node waits for the answer: the caller's deadline, else a hold's bound, and never
    // past the moment the node that forwarded it here gives it up. The target (and every node it
    // passes the input on to) holds it at most half of that (below), then hands it back unapplied: so a
    // forward given up here was never applied there, and what this node holds behind it has the
    // other half to go on once it is back. Past its holds only an input in an owner's ferry may
    // still be applied, and there the engine and the hand-off keep its sender's order (ADR 0109).
    long waitMs = remaining > 0 ? remaining : maxHoldNanos / 1_000_000;
    if (p.giveUpAt != Long.MAX_VALUE) {
      waitMs = Math.min(waitMs, (p.giveUpAt - now) / 1_000_000);
    }
    // Half of what is left of this node's own bound for it, not of a whole bound: a hand-back then
    // leaves this node the other half, and its holds, here and further on, end within its bound
    // from its arrival here (ADR 0112). The wait itself stays: an input in the owner's ferry may
    // take until its deadline.
    long holdMs = Math.min(waitMs, (holdBound(p) - now) / 1_000_000) / 2;
    if (holdMs <= 0 && p.giveUpAt != Long.MAX_VALUE) {
      // Too late to send on: held until its sender's wait runs out, then handed back with what
      // came after it from there (holdEnded), which meanwhile waits behind it.
      hold(p);
      return;
    }
    LinkedHashMap<String, Integer> path = paths.computeIfAbsent(p.input.key, k -> new LinkedHashMap<>());
    Integer before = path.remove(target); // re-put: the most recently used target goes last
    path.put(target, before == null ? 1 : before + 1);
    String visited = p.visited.isEmpty() ? self : passed(p.visited, self) ? p.visited : p.visited + "," + self;
    if (tracer != null) {
      tracer.accept("forward " + p.input.body + " to " + target + " (path " + path + ", owner " + views.owner(p.input.key)
          + ", returned " + p.returned + ", alongPath " + p.alongPath + ", handedOff " + p.handedOff + ")");
    }
    boolean back = passed(p.visited, target);
    if (back) {
      backTrips.computeIfAbsent(p.input.key, k -> new HashMap<>()).merge(target, 1, Integer::sum);
    }
    Forward f = new Forward(target, p, Math.min(p.hop + 1, MAX_HOPS), handOff, remaining, visited, back,
        Math.max(1, holdMs), waitMs + 3 * callTimeoutMs);
    f.no = ++forwardsMade;
    f.sentAt = now;
    p.forwardNo = f.no;
    p.forwardTarget = target;
    unwait(p);
    if (p.origin != null) {
      openByOrigin.computeIfAbsent(p.input.key, k -> new HashMap<>()).computeIfAbsent(p.origin, o -> new TreeMap<>())
          .computeIfAbsent(p.originSeq, s -> new java.util.ArrayList<>(1)).add(f);
    }
    open.computeIfAbsent(target, n -> new LinkedHashSet<>()).add(f);
    effects.add(() -> links.forward(f));
  }

  /** Handed off, come back, or along the key's path: older than what entered here meanwhile. */
  private static boolean old(Pending p) {
    return p.handedOff || p.returned || p.alongPath;
  }

  /** {@link #pathOf} when the key's inputs are unanswered at more than one node. */
  private static final String SEVERAL = "";

  /**
   * The node to follow for {@code key}: the one its inputs are still unanswered at, among those
   * {@code visited} does not name (an input never goes back along its way); null when there is
   * none, {@link #SEVERAL} when there are several (then no single way keeps the order: wait).
   */
  private String pathOf(String key, String visited) {
    LinkedHashMap<String, Integer> path = paths.get(key);
    String via = null;
    if (path != null) {
      for (String target : path.keySet()) {
        if (!passed(visited, target)) {
          if (via != null) {
            return SEVERAL;
          }
          via = target;
        }
      }
    }
    return via;
  }

  /**
   * Whether {@code visited} names a node that {@code key}'s inputs are unanswered at, other than by
   * a back trip (an input from there may have left before the one sent back arrived).
   */
  private boolean passedPath(String visited, String key) {
    LinkedHashMap<String, Integer> path = paths.get(key);
    if (path != null) {
      for (String target : path.keySet()) {
        if (passed(visited, target) && !backTrip(key, target)) {
          return true;
        }
      }
    }
    return false;
  }

  private boolean backTrip(String key, String target) {
    Map<String, Integer> trips = backTrips.get(key);
    return trips != null && trips.containsKey(target);
  }

  /**
   * Whether an earlier input of {@code p}'s sender and key was sent back from here to a node
   * {@code p} came through, and is still unanswered there. Only the sender's own order counts: two
   * inputs of different senders never wait for each other's back trips, which might otherwise
   * wait in a circle when views disagree (each node sees the other arrival first).
   */
  private boolean behindBackTrip(Pending p) {
    if (p.origin == null) {
      return false;
    }
    for (String target : backTrips.get(p.input.key).keySet()) {
      if (passed(p.visited, target)) {
        for (Forward f : open.getOrDefault(target, Set.of())) {
          Pending q = f.pending;
          if (f.back && q.input.key.equals(p.input.key) && p.origin.equals(q.origin) && q.originSeq < p.originSeq) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** Whether one of {@code key}'s back trips went to a node {@code visited} names. */
  private boolean backTripTo(String key, String visited) {
    Map<String, Integer> trips = backTrips.get(key);
    if (trips != null && !visited.isEmpty()) {
      for (String target : trips.keySet()) {
        if (passed(visited, target)) {
          return true;
        }
      }
    }
    return false;
  }

  private void clearPath(Forward f) {
    clearPath(f, true);
  }

  /** As {@link #clearPath(Forward)}; without {@code flush} the caller routes the key's held inputs later. */
  private void clearPath(Forward f, boolean flush) {
    String key = f.pending.input.key;
    if (f.back) {
      Map<String, Integer> trips = backTrips.get(key);
      if (trips != null && trips.merge(f.target, -1, Integer::sum) <= 0) {
        trips.remove(f.target);
        if (trips.isEmpty()) {
          backTrips.remove(key);
        }
      }
    }
    LinkedHashMap<String, Integer> path = paths.get(key);
    if (path == null) {
      return; // given up (abandonForwards)
    }
    Integer left = path.get(f.target);
    if (left != null && left > 1) {
      path.put(f.target, left - 1);
      if (flush && f.back && !handingOff.contains(key)) {
        flush(key); // what waited for that back trip may go now
      }
      return;
    }
    path.remove(f.target);
    if (path.isEmpty()) {
      paths.remove(key, path);
    }
    if (flush && !handingOff.contains(key)) {
      flush(key); // one way fewer: held inputs may go now
    }
  }

  private void hold(Pending p) {
    hold(p, Long.MAX_VALUE);
  }

  /**
   * Holds {@code p} until flushed, or until {@code retryMs} pass (then routes it again). A new
   * input (never held, not handed off) is refused instead when {@code maxHeld} are held here: the
   * ferry's own bound would refuse it too, and nothing else bounds what waits here (ADR 0100).
   */
  private void hold(Pending p, long retryMs) {
    long now = loop.nanoTime();
    if (p.holdUntil == 0 && !p.handedOff && heldTotal >= maxHeld) {
      cancelHold(p);
      answer(p, new FerryException(FerryError.REJECTED, "too many inputs held at " + self
          + " while ownership changes (" + maxHeld + ", maxQueueing): not sent"));
      return;
    }
    ArrayDeque<Pending> q = held.computeIfAbsent(p.input.key, k -> new ArrayDeque<>());
    if (tracer != null && p.holdUntil == 0) {
      tracer.accept("hold " + p.input.body + (retryMs != Long.MAX_VALUE ? " (pause)" : "")
          + (p.waitsForPath ? " (path " + paths.get(p.input.key) + ")" : ""));
    }
    insertInOrder(q, p);
    p.held = true;
    heldTotal++;
    if (p.holdUntil == 0) {
      // Bounded from the first hold: routing again after a view change does not extend it.
      p.heldSince = now;
      p.holdUntil = holdBound(p);
    }
    long wait = Math.max(1, Math.min(retryMs == Long.MAX_VALUE ? Long.MAX_VALUE : retryMs * 1_000_000, p.holdUntil - now));
    if (p.holdTimer >= 0 && p.holdTimerAt - (now + wait) <= 0) {
      // Held again (a flush) with its timer due no later: the timer stands. A pause is counted
      // from when it began: restarted at every flush, the key's held inputs, each flushed when
      // another one's pause ended, went on one per pause.
      return;
    }
    cancelHold(p);
    armHold(p, now, wait);
  }

  /** Sets {@code p}'s hold timer to fire {@code wait} nanos after {@code now} (its previous one already gone). */
  private void armHold(Pending p, long now, long wait) {
    p.holdTimerAt = now + wait;
    p.holdTimer = loop.schedule(wait, () -> step(() -> holdEnded(p)));
  }

  /**
   * When {@code p}'s holds here must end, whenever they begin: its caller's deadline, its sender's
   * allowance ({@link Pending#giveUpAt}), and the hold bound counted from its arrival here, so that
   * the time it spent held further on before it was handed back counts too (ADR 0112).
   */
  private long holdBound(Pending p) {
    return Math.min(p.giveUpAt, Math.min(p.deadline, p.arrivedAt + maxHoldNanos));
  }

  /** Takes {@code p} out of its key's queue (its timer, if live, is the caller's to cancel). */
  private void unhold(ArrayDeque<Pending> q, Pending p) {
    q.remove(p);
    p.held = false;
    heldTotal--;
    if (q.isEmpty()) {
      held.remove(p.input.key, q);
    }
  }

  private static void insertInOrder(ArrayDeque<Pending> q, Pending p) {
    if (q.isEmpty() || q.peekLast().before(p)) {
      q.addLast(p);
      return;
    }
    // A hand-off, or an input whose forward was not delivered, goes before later ones.
    List<Pending> all = new java.util.ArrayList<>(q);
    int i = 0;
    while (i < all.size() && all.get(i).before(p)) {
      i++;
    }
    all.add(i, p);
    q.clear();
    q.addAll(all);
  }

  private void holdEnded(Pending p) {
    p.holdTimer = -1;
    if (!p.held) {
      return; // flushed meanwhile (its timer is cancelled then: defensive)
    }
    ArrayDeque<Pending> q = held.get(p.input.key);
    if (loop.nanoTime() >= p.holdUntil) {
      // Only the first of the key's held inputs, or one that came along the path or back, may be
      // what later ones wait behind (behindHeld); an ordinary input behind another held one is
      // not: routing the rest again would hold each again, at a cost that grows with the queue.
      boolean blocking = q.peekFirst() == p || old(p) || retryBehind(q, p);
      unhold(q, p);
      if (loop.nanoTime() >= p.deadline) {
        answer(p, new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent"));
      } else if (loop.nanoTime() >= p.giveUpAt) {
        returnToSender(p, heldFor(p));
        // What came after it from the same node goes back with it: kept here, it could be sent on
        // before p returns along the same way, which would reorder that node's inputs (ADR 0109).
        // So does what came later from the same client through another node (ADR 0112).
        for (Pending later : List.copyOf(q)) {
          if (p.sender != null && p.sender.equals(later.sender) && later.seq > p.seq
              || later.sender != null && later.giveUpAt != Long.MAX_VALUE && sameSenderEarlier(p, later)) {
            // It may be what the rest waits behind (the first held, a hand-off ahead of p): then
            // they are routed again too, or nothing would until their bound.
            blocking |= q.peekFirst() == later || old(later);
            unhold(q, later);
            cancelHold(later);
            returnToSender(later, "sent here after " + p.input.body + ", which went back");
          }
        }
      } else {
        answer(p, new FerryException(FerryError.CLOSED, "the key's owner could not be reached: membership did not settle in time ("
            + heldFor(p) + ")"));
      }
      if (blocking && !q.isEmpty() && !handingOff.contains(p.input.key)) {
        flush(p.input.key); // those held behind it go on (nothing else may ever flush them)
      }
      checkLeft();
      return;
    }
    // Its pause is over: it may be sent on once more. The key's other held inputs are routed again
    // too, in order, so that none waits on a flush that depends on this one moving.
    p.retry = true;
    if (handingOff.contains(p.input.key)) {
      // Routed again when the hand-off ends; until then its bound runs on, as for every input held
      // for the hand-off: the hand-off waits for the key's call in flight, which a downstream that
      // does not answer keeps open past the call timeout (ADR 0005).
      long now = loop.nanoTime();
      armHold(p, now, p.holdUntil - now);
      return;
    }
    flush(p.input.key);
    checkLeft(); // routed again, some may be answered here now (handed back, dropped): the last a leave waited for
  }

  /** Whether a paced retry of {@code p}'s sender is held behind {@code p} (behindOwnSender). */
  private static boolean retryBehind(ArrayDeque<Pending> q, Pending p) {
    for (Pending later : q) {
      if (later != p && later.retry && sameSenderEarlier(p, later)) {
        return true;
      }
    }
    return false;
  }

  /** Why {@code p} is still held, for its 503: what an operator (or a CI log) needs to tell a stuck step from a slow one. */
  private String heldFor(Pending p) {
    String key = p.input.key;
    String why;
    if (!views.known()) {
      why = "no view yet";
    } else if (handingOff.contains(key)) {
      why = "the key's hand-off here";
    } else if (p.waitsForPath || paths.containsKey(key)) {
      why = "earlier inputs of the key open at " + paths.getOrDefault(key, new LinkedHashMap<>()).keySet();
    } else if (views.gated(key)) {
      why = "the releases of " + views.awaiting();
    } else {
      why = "a paced retry";
    }
    long heldMs = (loop.nanoTime() - p.heldSince) / 1_000_000;
    return "held at " + self + " for " + why + ", " + heldMs + " ms since its first hold here, view " + views.view()
        + (unreachable.isEmpty() ? "" : ", refused by " + unreachable.nodes());
  }

  private void cancelHold(Pending p) {
    if (p.holdTimer >= 0) {
      loop.cancel(p.holdTimer);
      p.holdTimer = -1;
    }
  }

  /**
   * Routes the key's held inputs again, in their order (hand-offs first: accepted before the
   * others). Once one is held again, an input that entered here from a caller and is no retry
   * would only be held behind it (route: behindHeld): it is put back at once, its timer kept.
   */
  private void flush(String key) {
    ArrayDeque<Pending> q = held.remove(key);
    if (q != null) {
      heldTotal -= q.size();
      for (Pending p : q) {
        p.held = false;
        if (p.sender == null && !p.handedOff && !p.retry && held.containsKey(key)) {
          hold(p);
        } else {
          route(p);
        }
        if (!p.held) {
          cancelHold(p);
        }
      }
    }
  }

  private void flushAll() {
    Set<String> keys = new LinkedHashSet<>(held.keySet());
    for (String key : keys) {
      if (views.known() && !handingOff.contains(key)) {
        flush(key);
      }
    }
  }

  /**
   * Answers what is held here from a node that left the members, never applied (ADR 0110): whoever
   * sent it there was answered 502 when that node left, and its sender's next input may already be
   * on its way to the owner; applied later, this one would follow it.
   */
  private void dropFromDeparted() {
    for (String key : List.copyOf(held.keySet())) {
      ArrayDeque<Pending> q = held.get(key);
      for (Pending p : List.copyOf(q)) {
        String gone = departedOnItsWay(p);
        if (gone != null) {
          unhold(q, p);
          cancelHold(p);
          drop(p, gone);
        }
      }
    }
  }

  /**
   * The first node {@code p} passed on its way here that left the members, or null. Not only its
   * sender: a node further back answered its own sender 502 when that one left (or, the entry
   * node, leaves its caller to time out), and the input's sender may be alive and waiting (ADR
   * 0112).
   */
  private String departedOnItsWay(Pending p) {
    if (departed.isEmpty() || p.visited.isEmpty()) {
      return null;
    }
    for (String v : p.visited.split(",")) {
      if (departed.containsKey(v)) {
        return v;
      }
    }
    return null;
  }

  private void drop(Pending p, String gone) {
    if (tracer != null) {
      tracer.accept("drop " + p.input.body + " (" + gone + " left)");
    }
    answer(p, new FerryException(FerryError.CLOSED, "a node it was forwarded through (" + gone
        + ") left the cluster before it was sent: never applied"));
  }

  private void failForwardsToNonMembers(Set<String> members) {
    for (String target : List.copyOf(open.keySet())) {
      if (!members.contains(target)) {
        for (Forward f : List.copyOf(open.remove(target))) {
          // Maybe delivered, maybe sent by the dead node: never sent again, answered FAILED (502:
          // it may have been applied; 503 would say it never was, ADR 0064).
          answer(f.pending, new FerryException(FerryError.FAILED, "the key's owner " + target
              + " left the cluster before answering (it may have applied the input)"));
          forwardClosed(f);
          // Neither flushes: the snapshot adopts its view and its departures first, then flushes
          // every key (ADR 0115 review: what this lets go, routed now, would go to the node that
          // left, or on for a sender that left).
          overtaken(f);
          clearPath(f, false);
        }
      }
    }
  }

  private void handOffLostKeys() {
    handOffsOpen++; // so that no release goes out before every lost key was looked at
    effects.add(() -> ferry.activeKeys().onSuccess(keys -> step(() -> {
      for (String key : keys) {
        String owner = views.owner(key);
        if (owner == null || owner.equals(self) || !handingOff.add(key)) {
          continue; // ours, or no one to hand to (the last node drains instead), or already going
        }
        handOffsOpen++;
        effects.add(() -> ferry.handOff(key, this::handedOff).onComplete(v -> step(() -> {
          handingOff.remove(key);
          handOffsOpen--;
          flush(key);
          maybeRelease();
        })));
      }
      handOffsOpen--;
      maybeRelease();
    })));
  }

  /**
   * {@code p} left this node's ferry uncalled (a hand-off): the fence of its client and key drops
   * below it, so that it may come back here, but not below what the ferry called ({@link Fence}).
   * The ferry keeps the order it was given, so every input of that client submitted here after it
   * leaves with it.
   */
  private void lowerFence(Pending p) {
    Fence f = fenceOf(p);
    if (f != null) {
      f.submitted = Math.min(f.submitted, p.originSeq - 1);
    }
  }

  /**
   * Whether this node's ferry may have sent an input to the downstream, by its outcome there: not
   * if refused, closed, out of time or bad before it was sent ({@link #mayHaveApplied}'s reading).
   */
  private static boolean mayHaveBeenCalled(AsyncResult<Object> ar) {
    if (ar.succeeded() || !(ar.cause() instanceof FerryException fe)) {
      return true;
    }
    return !neverSent(fe.kind());
  }

  /**
   * {@code ar}, or TIMEOUT when {@code p}'s input was left out of its batch at its caller's deadline,
   * before the request was written (an HTTP batch waiting for its connection, ADR 0062): it was
   * never sent, whatever that batch's call did. Standalone the input's own answer gives the 504 at
   * the deadline; here the ferry's Future brings the call's outcome, and a call that then failed
   * answered it 502 ("sent, it may have been applied") and counted it as maybe called (review S).
   */
  private static AsyncResult<Object> leftOutIsTimeout(Pending p, AsyncResult<Object> ar) {
    if (ar.failed() && p.input.leftOutAtDeadline()
        && !(ar.cause() instanceof FerryException fe && fe.kind() == FerryError.TIMEOUT)) {
      return Future.failedFuture(new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent"));
    }
    return ar;
  }

  /** Whether an answer of this kind says the input was never sent to the downstream. */
  private static boolean neverSent(FerryError kind) {
    return kind == FerryError.REJECTED || kind == FerryError.CLOSED || kind == FerryError.TIMEOUT
        || kind == FerryError.BAD_INPUT;
  }

  /** One waiting input of a key handed off here, routed to whoever owns the key now. */
  private Future<Object> handedOff(Submission input, Duration remaining) {
    Promise<Object> answer = Promise.promise();
    step(() -> {
      long deadline = remaining == null ? Long.MAX_VALUE : loop.nanoTime() + remaining.toNanos();
      Pending p = new Pending(input, 0, true, deadline, answer);
      // Its place is where it arrived here, before anything that arrived while it waited in the
      // ferry (a fresh number would put it behind those if ownership came back meanwhile).
      p.arrivedAt = loop.nanoTime();
      Pending before = submitted.remove(input);
      p.seq = before != null ? before.seq : ++arrivals;
      if (before != null) {
        p.visited = before.visited;
        p.origin = before.origin;
        p.originSeq = before.originSeq;
        // Its sender still waits for it no longer than it did: held or sent on from here, it stays
        // within that allowance and goes back unapplied once it is over, with what came after it
        // from the same node (ADR 0109). A hand-off that forgot it could be applied after its
        // sender gave it up and sent its next input to the new owner (ADR 0112).
        p.sender = before.sender;
        p.giveUpAt = before.giveUpAt;
        p.senderWaitsUntil = before.senderWaitsUntil;
        lowerFence(p);
      }
      // Not route(): the key is still marked as handing off, and these inputs go before its held ones.
      String owner = views.owner(input.key);
      if (closed) {
        // Closed (a drain's last hand-off): never sent, so never applied; nobody would take its answer.
        answer(p, new FerryException(FerryError.CLOSED, "this node left the cluster"));
      } else if (owner == null) {
        answer(p, new FerryException(FerryError.CLOSED, "no node of the cluster serves this address"));
      } else if (owner.equals(self)) {
        hold(p); // ownership came back meanwhile: flushed, first, when the hand-off completes
      } else if (heldBehindSameSender(p)) {
        // An earlier hand-off from its sender is held here, too late to send on: this one goes
        // back with it, never past it.
        hold(p);
      } else {
        // Older forwards of the key: follow them, except back along the input's own way (as in
        // route()): an input handed off here from a node it passed would otherwise go back there
        // while the same sender's next input, also arrived from there, goes to the owner directly.
        String via = pathOf(input.key, p.visited);
        forward(via != null && via != SEVERAL ? via : owner, p, true);
      }
    });
    return answer.future().recover(t -> Future.failedFuture(asFerryException(t)));
  }

  /**
   * The origin ("client#n") of an earlier input of {@code p}'s client and key that this node
   * handed back and that has not come again, while its sender may still send it again; null when
   * {@code p} may go on. Only forwarded inputs: they can go back. An input handed back ends its
   * own mark when it comes again, and then goes on.
   */
  private String afterHandedBack(Pending p) {
    if (p.sender == null || p.origin == null || p.giveUpAt == Long.MAX_VALUE) {
      return null;
    }
    Map<String, TreeMap<Long, HandBackMark>> byOrigin = handBackMarks.get(p.input.key);
    TreeMap<Long, HandBackMark> marks = byOrigin == null ? null : byOrigin.get(p.origin);
    if (marks == null) {
      return null;
    }
    long now = loop.nanoTime();
    // Handed back itself and sent again: its sender saw it go back and sends it in its own order
    // (which a forged origin may contradict: trusting it then keeps two inputs from waiting for
    // each other across the two nodes). Only through the node it went back to: a copy of its
    // place stamped elsewhere (a forged origin) goes on as that place, but leaves the mark.
    HandBackMark own = marks.remove(p.originSeq);
    boolean again = own != null && live(own, now) && own.sender != null && passed(p.visited, own.sender);
    int removed = 0;
    if (own != null && !again && live(own, now)) {
      marks.put(p.originSeq, own);
    } else if (own != null) {
      removed++;
    }
    // The earliest mark still live; the ended ones before it go on the way, each once, and the
    // others at a sweep: no input scans all its client's marks (a client's thousands of inputs of
    // a key handed back together would cost their square when they come again).
    Long earlier = null;
    for (Map.Entry<Long, HandBackMark> first = marks.firstEntry(); first != null; first = marks.firstEntry()) {
      scanned++;
      if (live(first.getValue(), now)) {
        earlier = first.getKey();
        break;
      }
      marks.pollFirstEntry();
      removed++;
    }
    handBackEntries -= removed;
    if (marks.isEmpty()) {
      byOrigin.remove(p.origin);
      if (byOrigin.isEmpty()) {
        handBackMarks.remove(p.input.key);
      }
    }
    return !again && earlier != null && earlier < p.originSeq ? p.origin + earlier : null;
  }

  /** Whether an input of {@code p}'s key that came earlier from the same node is held here. */
  private boolean heldBehindSameSender(Pending p) {
    ArrayDeque<Pending> q = held.get(p.input.key);
    if (q != null && p.sender != null) {
      for (Pending earlier : q) {
        scanned++;
        if (!earlier.handedOff && earlier.seq >= p.seq) {
          // The queue is in order (hand-offs, then arrivals): no earlier input after this one.
          // What arrived while the key is handed off is held behind, however many: not scanned.
          break;
        }
        if (p.sender.equals(earlier.sender) && earlier.seq < p.seq) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Once no key this node does not own has a call or waiting input here, says so to every node
   * that may wait for it. Sent after the hand-off forwards to the same node: ordered behind them.
   * A node that comes to wait for it later while the view stays (a join this node skipped, which
   * leaves the view as it was; a member that became a ferry) gets it then (ADR 0105): what the
   * release says still holds, since this node has called only keys it owns by the view since.
   */
  private void maybeRelease() {
    if (views.known() && handOffsOpen == 0) {
      String id = views.id();
      for (String node : views.releaseTargets()) {
        if (releaseLost.contains(node) && handingOffTo(node)) {
          continue; // a hand-off there may come back and be sent again: the release goes after it
        }
        long lookup = releaseLost.contains(node) ? lastHandOffLookup(node) : 0;
        if (lookup > 0) {
          // A hand-off there just sent may be in its lookup, refused with the failure on its way:
          // the release goes once that has surely come, not at the next snapshot.
          if (releaseCheck < 0) {
            releaseCheck = loop.schedule(lookup, () -> step(() -> {
              releaseCheck = -1;
              if (!closed) {
                maybeRelease();
              }
            }));
          }
          continue;
        }
        if (releasedTo.add(node)) {
          releaseLost.remove(node);
          effects.add(() -> links.release(node, id));
        }
      }
    }
    checkLeft();
  }

  /**
   * Whether a hand-off from this node's ferry came back from {@code node} (not delivered, or handed
   * back) and is held here to go there again: a release sent again now would pass it, and the node
   * would call the key before it (the first release goes behind the hand-offs on the same link).
   * Hand-offs still open there do not count once out of their lookup ({@link #lastHandOffLookup}):
   * sent before, they arrive before the release, and waiting for their answers could wait for ever,
   * as the node holds them until it is released.
   */
  /**
   * How long (ns) until the hand-offs sent to {@code node} have all surely left their sender's
   * registration lookup ({@link #LOOKUP_GRACE_MS} after the last), or 0 if they have. Until then
   * one may have been refused with its NO_HANDLERS not yet here: it counts as open, and a release
   * sent again now, after the node's registration appeared, would pass it (the trace
   * formal/Handoff.pml finds without its timing assumption, ADR 0159).
   */
  private long lastHandOffLookup(String node) {
    long now = loop.nanoTime();
    long wait = 0;
    for (Forward f : open.getOrDefault(node, Set.of())) {
      if (f.handOff) {
        wait = Math.max(wait, f.sentAt + LOOKUP_GRACE_MS * 1_000_000 - now);
      }
    }
    return wait;
  }

  private boolean handingOffTo(String node) {
    for (ArrayDeque<Pending> q : held.values()) {
      for (Pending p : q) {
        if (p.handedOff && node.equals(p.forwardTarget)) {
          return true;
        }
      }
    }
    return false;
  }

  private void checkLeft() {
    // Settled: every other node adopted the view without this one, so none routes here any more.
    // That stays true through later views (they never name this node again): a node joining while
    // this one lingers need not release to it for the leave to end (ADR 0099).
    if (left != null && views.known() && !views.view().contains(self) && views.settled()) {
      goneFromViews = true;
    }
    if (left != null && abandoned) {
      Promise<Void> done = left;
      effects.add(done::tryComplete);
    } else if (left != null && goneFromViews && handOffsOpen == 0 && (!leftIdle || idle())) {
      Promise<Void> done = left;
      effects.add(done::tryComplete);
    }
  }

  /** Nothing that arrived by {@link #idleAfter} is held here or forwarded and unanswered. */
  private boolean idle() {
    for (ArrayDeque<Pending> q : held.values()) {
      for (Pending p : q) {
        if (p.seq <= idleAfter) {
          return false;
        }
      }
    }
    for (Set<Forward> s : open.values()) {
      for (Forward f : s) {
        if (f.pending.seq <= idleAfter) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Hands {@code p} back to the node that forwarded it here, never applied, before that node stops
   * waiting for it: there it is not delivered (NO_HANDLERS) and is routed again in its place, ahead
   * of its sender's later inputs (ADR 0109).
   */
  private void returnToSender(Pending p, String why) {
    if (tracer != null) {
      tracer.accept("return " + p.input.body + " to " + p.sender + " (" + why + ")");
    }
    if (p.origin != null && p.giveUpAt != Long.MAX_VALUE) {
      // Its sender may already have sent the same client's next inputs of the key this way: until
      // p comes again, or its sender's wait for it is over (then that node never sends it again),
      // those go back too (afterHandedBack).
      TreeMap<Long, HandBackMark> marks = handBackMarks.computeIfAbsent(p.input.key, k -> new HashMap<>())
          .computeIfAbsent(p.origin, o -> new TreeMap<>());
      int before = marks.size();
      // The client's later inputs handed back before may come again before their sender sees this
      // one go back: they are no longer known to be sent again in its order.
      marks.tailMap(p.originSeq, false).clear();
      marks.merge(p.originSeq, new HandBackMark(p.senderWaitsUntil, p.sender), (a, b) -> a.end > b.end ? a : b);
      handBackEntries += marks.size() - before;
      if (handBackEntries > handBackSweepAbove) {
        sweepHandBackMarks();
      }
    }
    answer(p, new ReplyException(ReplyFailure.NO_HANDLERS, RETURNED, "handed back by " + self
        + ", never applied: " + why));
  }

  private void answer(Pending p, Throwable failure) {
    unwait(p);
    effects.add(() -> once(p.answer.tryFail(failure)));
  }

  private void answerWith(Pending p, Object body) {
    effects.add(() -> once(p.answer.tryComplete(body)));
  }

  /** Every input is answered exactly once; a second answer is a bug the tests must see. */
  private static void once(boolean first) {
    assert first : "an input was answered twice";
  }

  // ---------------------------------------------------------------- what came back behind what went on

  /** {@code f} is answered or given up: it no longer counts as sent after anything ({@link #openByOrigin}). */
  /** {@code p}'s client's forwards of its key open here, by place ({@link #openByOrigin}); null if none. */
  private TreeMap<Long, List<Forward>> openPlaces(Pending p) {
    Map<String, TreeMap<Long, List<Forward>>> byOrigin = openByOrigin.get(p.input.key);
    return byOrigin == null ? null : byOrigin.get(p.origin);
  }

  private void forwardClosed(Forward f) {
    Pending p = f.pending;
    if (p.origin == null) {
      return;
    }
    Map<String, TreeMap<Long, List<Forward>>> byOrigin = openByOrigin.get(p.input.key);
    TreeMap<Long, List<Forward>> places = byOrigin == null ? null : byOrigin.get(p.origin);
    List<Forward> same = places == null ? null : places.get(p.originSeq);
    if (same != null && same.remove(f) && same.isEmpty()) {
      places.remove(p.originSeq);
      if (places.isEmpty()) {
        byOrigin.remove(p.origin);
        if (byOrigin.isEmpty()) {
          openByOrigin.remove(p.input.key);
        }
      }
    }
  }

  /**
   * Whether a later input of {@code p}'s client and key that was forwarded from here after {@code
   * p}'s last forward is unanswered. Later: a later place, and behind {@code p} here too ({@link
   * #laterHere}). Earlier places go first anyway, and a later one sent before {@code p} reached the
   * next node before it. A client's later places open here were all sent after {@code p} (it waited
   * for those sent before, when it came back), so the first looked at answers; only forged places
   * can make this look further, at most at what the forger has open here.
   */
  private boolean sentAfter(Pending p) {
    TreeMap<Long, List<Forward>> places = openPlaces(p);
    if (places != null) {
      for (List<Forward> same : places.tailMap(p.originSeq, false).values()) {
        for (Forward f : same) {
          scanned++;
          if (laterHere(p, f)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * For a leave's give-up 502 ({@link #GIVEN_UP}), how long after it was given up the input may
   * still be applied (ms); -1 for any other failure.
   */
  static long givenUpForMs(Throwable failure) {
    if (!(failure instanceof ReplyException re) || re.failureType() != ReplyFailure.RECIPIENT_FAILURE
        || re.failureCode() != FerryError.FAILED.code() || re.getMessage() == null) {
      return -1;
    }
    String m = re.getMessage();
    // Only at the start: our nodes write it first and relay it unchanged, while a ferry's own
    // failures start with their own words, so a downstream's error text that quotes these words
    // (an echo of a caller's input) is never read as a give-up (review of ADR 0115's give-up wait).
    if (!m.startsWith(GIVEN_UP_FOR)) {
      return -1;
    }
    int from = GIVEN_UP_FOR.length();
    int to = from;
    while (to < m.length() && to - from < 12 && Character.isDigit(m.charAt(to))) {
      to++;
    }
    return to == from ? -1 : Long.parseLong(m.substring(from, to));
  }

  /**
   * Whether {@code f}'s answer is a leave's give-up ({@link #GIVEN_UP}) that comes before its holds
   * further on are over: by ADR 0109 every node on its way holds it at most what this node allowed
   * ({@link Forward#holdMs}, from its arrival at the target), then passes it on or hands it back, so
   * until then it may still reach an owner. If so, {@code f} stays in {@link #openByOrigin} until
   * that moment, as if still open, and its client's later inputs of the key wait here behind it
   * ({@link #behindGivenUpForward}); then the key's held inputs are routed again.
   */
  private boolean keepGivenUp(Forward f, AsyncResult<Object> ar) {
    if (f.origin == null || ar.succeeded() || givenUpForMs(ar.cause()) < 0) {
      return false;
    }
    long now = loop.nanoTime();
    long until = f.sentAt + f.holdMs * 1_000_000;
    if (until <= now) {
      return false;
    }
    f.givenUpUntil = until;
    String key = f.pending.input.key;
    givenUpOpen.merge(key, 1, Integer::sum);
    loop.schedule(until - now, () -> step(() -> {
      forwardClosed(f);
      f.givenUpUntil = 0;
      givenUpOpen.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
      // An earlier input that came back here meanwhile waited behind it (sentAfter): it may have
      // been applied, so that one never is (as at its answer).
      overtaken(f);
      flushHeld(key);
      checkLeft();
    }));
    return true;
  }

  /**
   * Whether an earlier input of {@code p}'s client and key forwarded from here was given up by a
   * leave further on and may still be applied ({@link #keepGivenUp}). Looks only at keys with such
   * a forward, and there at that client's earlier forwards still open here.
   */
  private boolean behindGivenUpForward(Pending p) {
    if (p.origin == null || !givenUpOpen.containsKey(p.input.key)) {
      return false;
    }
    TreeMap<Long, List<Forward>> places = openPlaces(p);
    if (places != null) {
      for (List<Forward> same : places.headMap(p.originSeq, false).values()) {
        for (Forward f : same) {
          scanned++;
          if (f.givenUpUntil != 0) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * Whether {@code f} went out from here after {@code p}'s last forward, to the same node (sent
   * again now, {@code p} would follow it on that link), and is behind {@code p} in this node's own
   * order of the key's inputs too: it arrived here later, and is not one of the older inputs (a
   * hand-off, one come back or along the key's path) that pass newer ones (behindHeld). An
   * origin's places alone may be forged, and an input this node puts first is no later input of
   * {@code p}'s.
   */
  private static boolean laterHere(Pending p, Forward f) {
    return f.no > p.forwardNo && f.target.equals(p.forwardTarget) && p.before(f.pending)
        && (old(p) || !old(f.pending));
  }

  /**
   * {@code p} came back not delivered and is held here: from now until it is sent again, a later
   * input of its client and key that went out from here after it and may have been applied means
   * {@code p} never is ({@link #overtaken}).
   */
  private void waitBehindSent(Pending p) {
    if (p.origin == null || p.behindSent || p.forwardNo == 0) {
      return;
    }
    p.behindSent = true;
    behindSent.computeIfAbsent(p.input.key, k -> new HashMap<>()).computeIfAbsent(p.origin, o -> new TreeMap<>())
        .computeIfAbsent(p.originSeq, s -> new java.util.ArrayList<>(1)).add(p);
  }

  /** {@code p} is sent again, submitted or answered: it no longer waits behind what went on ({@link #behindSent}). */
  private void unwait(Pending p) {
    if (!p.behindSent) {
      return;
    }
    p.behindSent = false;
    Map<String, TreeMap<Long, List<Pending>>> byOrigin = behindSent.get(p.input.key);
    TreeMap<Long, List<Pending>> places = byOrigin.get(p.origin);
    List<Pending> same = places.get(p.originSeq);
    same.remove(p);
    if (same.isEmpty()) {
      places.remove(p.originSeq);
      if (places.isEmpty()) {
        byOrigin.remove(p.origin);
        if (byOrigin.isEmpty()) {
          behindSent.remove(p.input.key);
        }
      }
    }
  }

  /**
   * {@code f} may have been applied. Every input of its client and key with an earlier place that
   * came back here and waits to be sent again, sent before {@code f}, can no longer be applied in
   * its place: it is answered CLOSED, never applied (ADR 0115). Each such input is looked at once.
   * Whether any was, is returned: the caller routes again what waited behind them, once its own
   * state is settled.
   */
  private boolean overtaken(Forward f) {
    Pending later = f.pending;
    if (later.origin == null) {
      return false;
    }
    Map<String, TreeMap<Long, List<Pending>>> byOrigin = behindSent.get(later.input.key);
    TreeMap<Long, List<Pending>> places = byOrigin == null ? null : byOrigin.get(later.origin);
    if (places == null) {
      return false;
    }
    List<Pending> gone = new java.util.ArrayList<>();
    for (List<Pending> same : places.headMap(later.originSeq, false).values()) {
      for (Pending p : same) {
        scanned++;
        if (laterHere(p, f)) {
          gone.add(p);
        }
      }
    }
    if (gone.isEmpty()) {
      return false;
    }
    ArrayDeque<Pending> q = held.get(later.input.key);
    for (Pending p : gone) {
      if (tracer != null) {
        tracer.accept("give up " + p.input.body + " (" + later.input.body + ", sent on after it, may have been applied)");
      }
      if (p.held) {
        unhold(q, p);
        cancelHold(p);
      }
      answer(p, new FerryException(FerryError.CLOSED, OVERTAKEN + " ("
          + later.originText() + "), sent on from " + self + " before this one came back, may have been applied first"));
    }
    return true;
  }

  /**
   * {@code f} may have been applied. Every earlier input of its client and key whose forward went
   * out from here before {@code f}'s, to the same node, and is still out, is marked: should it
   * come back not delivered (a hand-back slower than {@code f}'s answer), it is answered CLOSED,
   * never sent again ({@link #overtaken} does the same for those already back; ADR 0144).
   */
  private void overtakeOpen(Forward f) {
    Pending later = f.pending;
    TreeMap<Long, List<Forward>> places = later.origin == null ? null : openPlaces(later);
    if (places == null) {
      return;
    }
    for (List<Forward> same : places.headMap(later.originSeq, false).values()) {
      for (Forward e : same) {
        scanned++;
        if (e.overtakenBy == null && e.givenUpUntil == 0 && laterHere(e.pending, f)) {
          e.overtakenBy = later.originText();
        }
      }
    }
  }

  /** Routes the key's held inputs again, unless none is held or the key is being handed off. */
  private void flushHeld(String key) {
    if (held.containsKey(key) && !handingOff.contains(key)) {
      flush(key);
    }
  }

  /**
   * {@code f} is answered: an input of its client and key that came back and waited for the inputs
   * sent after it may go once none of them is unanswered (routed again with its key's).
   */
  private void sentAfterAnswered(Forward f) {
    Pending later = f.pending;
    if (later.origin == null || handingOff.contains(later.input.key)) {
      return;
    }
    Map<String, TreeMap<Long, List<Pending>>> byOrigin = behindSent.get(later.input.key);
    if (byOrigin == null || !byOrigin.containsKey(later.origin)) {
      return;
    }
    // The client's earliest input waiting here goes first (the others wait behind it anyway): the
    // key's held inputs are routed again once that one may go, not at every answer.
    Map.Entry<Long, List<Pending>> first = byOrigin.get(later.origin).firstEntry();
    if (first.getKey() < later.originSeq && !sentAfter(first.getValue().get(0))) {
      flush(later.input.key);
    }
  }

  /**
   * Whether the answer of a forward says it may have been applied. The same reading as the answer
   * {@link #forwarded} gives its caller: what is answered 503 "never applied" here is never
   * counted as maybe applied, or an earlier input would be given up for nothing (ADR 0115).
   * Never applied: refused by the owner's ferry before it took it; no consumer (NO_HANDLERS); the
   * event bus's ERROR, which Vert.x 5 raises only when the target node cannot decode the message,
   * before any consumer sees it; a failure that is no reply at all (the send failed here). Maybe:
   * a reply, any other failure of the owner, and a reply timeout (delivered or not, nobody knows).
   * The routing client reads its answers the same way ({@link ClientRouter}).
   */
  static boolean mayHaveApplied(AsyncResult<Object> ar) {
    if (ar.succeeded()) {
      return true;
    }
    if (!(ar.cause() instanceof ReplyException re)) {
      return false;
    }
    switch (re.failureType()) {
      case RECIPIENT_FAILURE: {
        return !neverSent(FerryError.ofCode(re.failureCode()));
      }
      case TIMEOUT:
        return true;
      default:
        return false;
    }
  }

  /** Whether {@code m} still holds the client's later inputs back at {@code now}. */
  private boolean live(HandBackMark m, long now) {
    return m.end > now && !departed.containsKey(m.sender);
  }

  /**
   * Drops the marks whose senders stopped waiting or left the members; run when the table doubled since the last sweep,
   * so that a burst of hand-backs costs a constant per hand-back, and at each snapshot, so that
   * marks of keys never seen again do not stay.
   */
  private void sweepHandBackMarks() {
    long now = loop.nanoTime();
    handBackEntries = 0;
    handBackMarks.values().removeIf(byOrigin -> {
      byOrigin.values().removeIf(marks -> {
        marks.values().removeIf(m -> !live(m, now));
        handBackEntries += marks.size();
        return marks.isEmpty();
      });
      return byOrigin.isEmpty();
    });
    handBackSweepAbove = Math.max(64, 2 * handBackEntries);
  }

  /** {@code t} if it is a hand-back ({@link #RETURNED}), else null. */
  private static Throwable asHandBack(Throwable t) {
    return t instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS && re.failureCode() == RETURNED
        ? re : null;
  }

  /** A recipient failure as the FerryException of the same code and text (for hand-off relays). */
  static Throwable asFerryException(Throwable t) {
    if (t instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
      FerryError kind = FerryError.ofCode(re.failureCode());
      return new FerryException(kind == null ? FerryError.FAILED : kind, re.getMessage());
    }
    return t;
  }

  /** Runs {@code transition}, then the effects it queued (unless an outer transition runs them). */
  private void step(Runnable transition) {
    assert loop.inLoop() : "a router runs on its node's loop only";
    effects.step(transition);
  }

}
