package dev.ferry.cluster;

import dev.ferry.verticle.FerryClient;
import dev.ferry.FerryError;
import dev.ferry.internal.LogText;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.internal.VertxLoop;
import dev.ferry.verticle.Discarded;
import dev.ferry.verticle.Submission;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * The cluster side of one FerryVerticle, on Vert.x: turns event-bus messages and membership
 * snapshots into {@link Router} transitions, and performs the router's network effects (forwards
 * and releases on the other nodes' peer addresses). The decisions themselves are the router's
 * (docs/adr/0055-the-routing-rule.md; hand-off and release: 0051-hand-off-and-release.md). Runs on the verticle's context only: every handler is
 * registered from it, and the router asserts it.
 *
 * <p>Two addresses per node (ADR 0103): the node address ({@link FerryClient#nodeAddress}), where
 * clients enter (routing clients, {@code atThisNode()}), and the peer address ({@link
 * #peerAddress}), where only nodes send: forwards with their hop count, the nodes passed and the
 * hand-off class, and releases. The headers that carry those ({@link Submission#RESERVED_PREFIX})
 * are honoured on the peer address only; a client that sends one anywhere gets 400, so it cannot
 * pose as a node (skip the held bound as a hand-off, stretch the hop limit, release a key for its
 * previous owner). Both addresses live and leave together: refused alike while leaving, withdrawn,
 * lingered on and unregistered at the same steps.
 */
public final class ClusterNode implements Router.Links {
  private static final System.Logger LOG = System.getLogger(ClusterNode.class.getName());
  /** A control request: "view" (anyone: what this node routes by) or "release" (nodes only). */
  static final String CTL = "ferry-ctl";
  static final String VIEW = "ferry-view";
  static final String FROM = "ferry-from";
  /** Which ferry at {@link #FROM}'s node id sent a release ({@link Router#life}, ADR 0131). */
  static final String LIFE = "ferry-life";
  /** The nodes a forward has passed, comma-separated, the sender last. */
  static final String VISITED = "ferry-visited";
  /** A request's sender and place in its order, "sender#n" (ADR 0098); a routing client sets it. */
  static final String ORIGIN = Submission.ORIGIN;
  static final String HOP = "ferry-hop";
  static final String HANDOFF = "ferry-handoff";
  /** How long the receiving node may hold a forward before handing it back unapplied, ms (ADR 0109). */
  static final String HOLD_MS = "ferry-hold-ms";

  private final Vertx vertx;
  private final Context context;
  private final String address;
  private final long maxHoldMs;
  private final BiConsumer<Message<Object>, AsyncResult<Object>> reply;
  private final Membership membership;
  private final String self;
  private final Router router;
  private MessageConsumer<Object> nodeConsumer;
  /** The consumer of {@link #peerAddress}: what other nodes send. */
  private MessageConsumer<Object> peerConsumer;
  /** Messages of the node and peer addresses dropped unanswered: publishes (see {@link #dropPublishes}). */
  private java.util.function.Predicate<Message<?>> dropped = m -> !m.isSend();

  private ClusterNode(Vertx vertx, Context context, String address, PerKeyFerry<String, Submission, ?, Object> ferry,
      long callTimeoutMs, long drainTimeoutMs, int maxHeld, BiConsumer<Message<Object>, AsyncResult<Object>> reply,
      Membership membership) {
    this.vertx = vertx;
    this.context = context;
    this.address = address;
    this.maxHoldMs = maxHoldMs(callTimeoutMs, drainTimeoutMs);
    this.reply = reply;
    this.membership = membership;
    this.self = membership.self();
    this.router = new Router(new VertxLoop(context), self, ferry, callTimeoutMs, maxHoldMs, maxHeld, this);
  }

  /** This node's id: the Vert.x node id the cluster routes by ({@code address.node.<id>}). */
  public String self() {
    return self;
  }

  /**
   * How long a node holds an input (within its caller's deadline) waiting for another node: a key's
   * release, or the answers of earlier inputs of the key forwarded there. In a graceful leave the
   * previous owner answers and releases within its leave, which gives up after {@code
   * drainTimeoutMs} + 2 x {@code callTimeoutMs} (the drain, and the call in flight before the
   * hand-off plus the one after it): a shorter hold answers 503 to inputs the leave would still
   * have served (ADR 0099).
   */
  static long maxHoldMs(long callTimeoutMs, long drainTimeoutMs) {
    return drainTimeoutMs + 2 * callTimeoutMs;
  }

  /**
   * The cluster layer for a clustered Vert.x; the only entry point that loads Hazelcast classes.
   * {@code maxQueueing} (the ferry's) also bounds the inputs held here while ownership changes
   * (ADR 0100).
   */
  @SuppressWarnings("unchecked")
  public static ClusterNode create(Vertx vertx, Context context, String address, Object perKeyFerry,
      long callTimeoutMs, long drainTimeoutMs, int maxQueueing, BiConsumer<Message<Object>, AsyncResult<Object>> reply) {
    return new ClusterNode(vertx, context, address, (PerKeyFerry<String, Submission, ?, Object>) perKeyFerry,
        callTimeoutMs, drainTimeoutMs, maxQueueing, reply, new HazelcastMembership(vertx, context, address));
  }

  /** As {@link #create}, with the membership given (tests: a fixed view on an unclustered Vert.x). */
  @SuppressWarnings("unchecked")
  static ClusterNode create(Vertx vertx, Context context, String address, Object perKeyFerry, long callTimeoutMs,
      long drainTimeoutMs, int maxQueueing, BiConsumer<Message<Object>, AsyncResult<Object>> reply, Membership membership) {
    return new ClusterNode(vertx, context, address, (PerKeyFerry<String, Submission, ?, Object>) perKeyFerry,
        callTimeoutMs, drainTimeoutMs, maxQueueing, reply, membership);
  }

  /**
   * The address at which node {@code nodeId} takes what other nodes send it for the ferry at
   * {@code address}: forwards and releases (ADR 0103). Not a client's entry: use {@link
   * FerryClient#nodeAddress}.
   */
  static String peerAddress(String address, String nodeId) {
    return address + ".peer." + nodeId;
  }

  public String nodeId() {
    return self;
  }

  /**
   * Tells the node and peer addresses' consumers which messages to drop before anything else (the verticle's
   * publishes: no submission, no reply address); call before {@link #start()}.
   */
  public void dropPublishes(java.util.function.Predicate<Message<?>> drop) {
    this.dropped = drop;
  }

  /** Registers the node and peer addresses, then joins the ownership view (in that order: releases need them). */
  public Future<Void> start() {
    nodeConsumer = vertx.eventBus().consumer(FerryClient.nodeAddress(address, self), m -> onNode(m, false));
    Discarded.answer(nodeConsumer, true, "node " + self);
    peerConsumer = vertx.eventBus().consumer(peerAddress(address, self), m -> onNode(m, true));
    Discarded.answer(peerConsumer, true, "node " + self);
    return Future.all(nodeConsumer.completion(), peerConsumer.completion())
        .compose(v -> membership.start(router.life(), s -> router.snapshot(s.members(), s.announced(), s.leaving(), s.lives())));
  }

  /** An input that arrived at the public address (already parsed). */
  public void route(Message<Object> message, Submission input) {
    router.accept(input, 0, false, null, message.headers().get(ORIGIN), answerFor(message));
  }

  /**
   * A request at the node address (a client's: {@code peer} false) or the peer address (another
   * node's): a control request, or an input.
   */
  private void onNode(Message<Object> m, boolean peer) {
    if (dropped.test(m)) {
      return;
    }
    String ctl = m.headers().get(CTL);
    if (ctl != null) {
      if ("view".equals(ctl)) {
        // For operators and tests: what this node routes by, and whether it still waits for releases.
        m.reply(new JsonObject().put("node", self).put("view", new JsonArray(router.view()))
            .put("settled", router.settled()).put("held", router.heldCount())
            .put("awaiting", new JsonArray(List.copyOf(router.awaiting())))
            .put("handOffsOpen", router.handOffsOpen()).put("openForwards", router.openForwards())
            .put("givenUpKept", router.givenUpKept()));
      } else if (peer && "release".equals(ctl)) {
        router.released(m.headers().get(FROM), m.headers().get(LIFE), m.headers().get(VIEW));
        m.reply(null);
      } else {
        // A release from a client would end a new owner's wait while the previous owner may still
        // have a call in flight for the key (two calls at once: ADR 0103).
        m.fail(FerryError.BAD_INPUT.code(), peer ? "\"" + CTL + "\" must be \"view\" or \"release\""
            : "\"" + CTL + "\" may only be \"view\" at a node address; releases travel between ferry nodes only");
      }
      return;
    }
    if (refusing) {
      // Leaving: not delivered here; the sender (a routing client or a node) sends it again.
      m.reply(new ReplyException(ReplyFailure.NO_HANDLERS, ClientRouter.GONE, "node " + self + " is leaving the cluster"));
      return;
    }
    Submission input;
    try {
      input = peer ? Submission.parse(m.headers(), m.body()) : Submission.parseFromClient(m.headers(), m.body());
    } catch (Submission.BadInput e) {
      m.fail(FerryError.BAD_INPUT.code(), e.getMessage());
      return;
    }
    if (!peer) {
      // A caller entering here directly, not a forward.
      router.accept(input, 0, false, null, m.headers().get(ORIGIN), answerFor(m));
      return;
    }
    int hop;
    try {
      // A node sends 1 to MAX_HOPS; kept in that range whatever arrives, so that no input is passed
      // on at network speed more often than the rule allows (ADR 0053).
      hop = Math.max(0, Math.min(Router.MAX_HOPS, Integer.parseInt(m.headers().get(HOP))));
    } catch (NumberFormatException e) {
      hop = 0;
    }
    long holdMs;
    try {
      // Absent or malformed: no bound but this node's own, as before ADR 0109.
      holdMs = Math.max(0, Long.parseLong(m.headers().get(HOLD_MS)));
    } catch (NumberFormatException e) {
      holdMs = 0;
    }
    String visited = m.headers().get(VISITED);
    router.accept(input, hop, m.headers().contains(HANDOFF), visited != null ? visited : m.headers().get(FROM),
        m.headers().get(ORIGIN), holdMs, answerFor(m));
  }

  private Promise<Object> answerFor(Message<Object> m) {
    Promise<Object> answer = Promise.promise();
    answer.future().onComplete(ar -> {
      if (ar.failed() && ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
        m.fail(re.failureCode(), re.getMessage()); // the owner's code and text, unchanged
      } else if (ar.failed() && ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS) {
        m.reply(re); // handed back unapplied (ADR 0109): the sender routes it again, as when refused
      } else {
        reply.accept(m, ar);
      }
    });
    return answer;
  }

  @Override
  public void forward(Router.Forward f) {
    Submission s = f.pending.input;
    // The router's wait (ADR 0109): the target holds it at most f.holdMs, then hands it back
    // unapplied; one in an owner's ferry is answered within its deadline, or the hold, plus a
    // couple of call timeouts.
    DeliveryOptions o = new DeliveryOptions()
        .setSendTimeout(f.sendTimeoutMs)
        .addHeader(HOLD_MS, Long.toString(f.holdMs))
        .addHeader(Submission.KEY, s.key)
        .addHeader(HOP, Integer.toString(f.hop))
        .addHeader(FROM, self)
        .addHeader(VISITED, f.visited);
    if (s.id != null) {
      o.addHeader(Submission.ID, s.id);
    }
    if (s.ordered) {
      // Long.MAX_VALUE too: a value the caller gave still sorts before inputs without one.
      o.addHeader(Submission.ORDER, Long.toString(s.order));
    }
    if (f.remainingMs > 0) {
      // timeout-ms counts from arrival: the owner gets what is left of the caller's deadline.
      o.addHeader(Submission.TIMEOUT_MS, Long.toString(f.remainingMs));
    }
    if (f.handOff) {
      o.addHeader(HANDOFF, "1");
    }
    if (f.origin != null) {
      o.addHeader(ORIGIN, f.origin);
    }
    vertx.eventBus().request(peerAddress(address, f.target), s.body, o)
        .onComplete(ar -> router.forwarded(f, ar.map(Message::body)));
  }

  @Override
  public void release(String node, String viewId) {
    DeliveryOptions o = new DeliveryOptions().addHeader(CTL, "release").addHeader(FROM, self)
        .addHeader(LIFE, router.life()).addHeader(VIEW, viewId);
    vertx.eventBus().request(peerAddress(address, node), null, o).onFailure(t -> {
      LOG.log(Level.WARNING, "ferry: release of view [{0}] not delivered to {1}: {2}", viewId, node, LogText.escape(t));
      if (!(t instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE)) {
        // Not taken (no consumer there yet, or no reply in time): that node would wait for it
        // until the next view change. Sent again, once a later snapshot comes (review P).
        router.releaseNotDelivered(node, viewId);
      }
    });
  }

  /**
   * How long a leaving node keeps its consumers after it took them out of the cluster's
   * registrations: requests that other members routed here before the removal reached them
   * still arrive meanwhile, and Vert.x's clustered event bus silently drops a request that
   * reaches a node after its consumer was unregistered (no reply at all), so the consumers stay
   * until nobody routes here any more (docs/adr/0093-a-leave-that-drops-nothing.md).
   */
  static final long LINGER_MS = 2_000;

  /** Set while leaving: requests at the node and peer addresses are refused with NO_HANDLERS (not delivered). */
  private boolean refusing;

  /**
   * Graceful leave (docs/adr/0056-a-leave-that-fails-nobody.md, 0093-a-leave-that-drops-nothing.md):
   * withdraws this node from the view and takes its public consumer out of the cluster's
   * registrations (raw senders stop picking this node; what they sent before is still taken and
   * forwarded); once every other node routes by a view without it (their releases arrived) and
   * every key was handed over, refuses requests at its node and peer addresses with NO_HANDLERS and takes
   * those consumers out of the registrations too, lingers {@link #LINGER_MS} while all three
   * consumers still take what arrives, then unregisters them ({@code stopPublic}, the node and peer addresses) and
   * waits for the forwards of what arrived before. Forwards still open after {@code maxWaitMs}
   * are answered CLOSED.
   */
  public Future<Void> leave(long maxWaitMs, Supplier<Future<?>> stopPublic) {
    long timer = vertx.setTimer(Math.max(1, maxWaitMs),
        t -> router.abandonForwards("this node left the cluster before the key's owner answered"));
    Future<Void> left = router.leaving(false);
    Future<Void> publicWithdrawn = withdraw(address);
    return membership.withdraw()
        .compose(v -> publicWithdrawn)
        .compose(v -> left)
        .compose(v -> {
          refusing = true;
          return Future.all(withdraw(FerryClient.nodeAddress(address, self)), withdraw(peerAddress(address, self))).<Void>mapEmpty();
        })
        .compose(v -> {
          Promise<Void> lingered = Promise.promise();
          vertx.setTimer(LINGER_MS, t -> lingered.complete());
          return lingered.future();
        })
        .compose(v -> Future.join(stopPublic.get(), nodeConsumer.unregister(), peerConsumer.unregister()))
        .compose(v -> router.leaving(true))
        .onComplete(ar -> vertx.cancelTimer(timer));
  }

  /**
   * Takes this node's consumers of {@code at} out of the cluster's registrations (they stay
   * registered here); completes on this node's context, and succeeds even if that failed (then
   * the unregistration later does it, as before: logged).
   */
  private Future<Void> withdraw(String at) {
    Promise<Void> done = Promise.promise();
    ClusterAccess.withdrawRegistrations(vertx, at).onComplete(ar -> context.runOnContext(v -> {
      if (ar.failed()) {
        LOG.log(Level.WARNING, "ferry: could not withdraw the registrations of {0} before leaving: {1}",
            at, LogText.escape(ar.cause()));
      }
      done.complete();
    }));
    return done.future();
  }

  /**
   * Unregisters the node and peer addresses and stops listening to membership. Whatever this node still
   * holds is answered CLOSED first, and forwards still open (a leave that gave up does not wait for
   * them) 502: an accepted input always gets its one reply, even if Vert.x closes next.
   */
  public Future<Void> close() {
    router.close();
    Future<?> unregistered = Future.join(nodeConsumer == null ? Future.succeededFuture() : nodeConsumer.unregister(),
        peerConsumer == null ? Future.succeededFuture() : peerConsumer.unregister());
    return unregistered.<Void>mapEmpty().eventually(membership::close);
  }
}
