package dev.ferry.cluster;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.internal.PerKeyFerry;
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
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * The cluster side of one FerryVerticle: decides, per input, whether this node owns its key
 * ({@link Rendezvous} over the announced live nodes), and otherwise forwards it to the owner's node
 * address. On a view change it hands the keys it lost to their new owners and tells every node
 * when it has no call left for a key it does not own ("released" for that view); keys it gained
 * stay held until every node that could have owned them since the last settled view released them
 * (docs/adr/0051-hand-off-on-membership-change.md). All state lives on the verticle's context.
 */
public final class ClusterNode {
  private static final System.Logger LOG = System.getLogger(ClusterNode.class.getName());
  static final String CTL = "ferry-ctl";
  static final String VIEW = "ferry-view";
  static final String FROM = "ferry-from";
  /** Pause before an input that was passed on twice is sent on once more. */
  static final long RETRY_MS = 100;

  private final Vertx vertx;
  private final String address;
  private final PerKeyFerry<String, Submission, ?, Object> ferry;
  private final BiConsumer<Message<Object>, AsyncResult<Object>> reply;
  private final Membership membership;
  private final Forwarder forwarder;
  private final String self;
  private final long maxHoldMs;
  private MessageConsumer<Object> nodeConsumer;

  private final Views views;
  private final Map<String, ArrayDeque<Pending>> handedIn = new LinkedHashMap<>();
  private final Map<String, ArrayDeque<Pending>> held = new LinkedHashMap<>();
  private final Set<String> handingOff = new HashSet<>();
  private int handOffsOpen;
  private boolean releaseSent;
  private Promise<Void> settledAfterLeave;

  private ClusterNode(Vertx vertx, String address, PerKeyFerry<String, Submission, ?, Object> ferry,
      long callTimeoutMs, BiConsumer<Message<Object>, AsyncResult<Object>> reply, Membership membership) {
    this.vertx = vertx;
    this.address = address;
    this.ferry = ferry;
    this.reply = reply;
    this.membership = membership;
    this.self = membership.self();
    this.forwarder = new Forwarder(vertx, address, callTimeoutMs);
    this.views = new Views(self);
    // A previous owner releases a key once its call in flight is over: bounded by the call timeout.
    this.maxHoldMs = 2 * callTimeoutMs;
    forwarder.onPathClear(key -> {
      if (!handingOff.contains(key)) {
        flush(key);
      }
    });
  }

  /** The cluster layer for a clustered Vert.x; the only entry point that loads Hazelcast classes. */
  @SuppressWarnings("unchecked")
  public static ClusterNode create(Vertx vertx, Context context, String address, Object perKeyFerry,
      long callTimeoutMs, BiConsumer<Message<Object>, AsyncResult<Object>> reply) {
    return new ClusterNode(vertx, address, (PerKeyFerry<String, Submission, ?, Object>) perKeyFerry,
        callTimeoutMs, reply, new HazelcastMembership(vertx, context, address));
  }

  public String nodeId() {
    return self;
  }

  /** Registers the node address, then joins the ownership view (in that order: releases need it). */
  public Future<Void> start() {
    // One instance per node and address (two would share its node id and announcement, ADR 0050):
    // FerryVerticle claims the address in this Vert.x before building anything (ADR 0054).
    nodeConsumer = vertx.eventBus().consumer(Forwarder.nodeAddress(address, self), this::onNode);
    dev.ferry.verticle.Discarded.answer(nodeConsumer, true, "node " + self);
    return nodeConsumer.completion().compose(v -> membership.start(this::onSnapshot));
  }

  /** An input that arrived at the public address (already parsed). */
  public void route(Message<Object> message, Submission input) {
    route(pending(message, input, 0, false));
  }

  private void onNode(Message<Object> m) {
    String ctl = m.headers().get(CTL);
    if ("release".equals(ctl)) {
      onRelease(m.headers().get(FROM), m.headers().get(VIEW));
      m.reply(null);
      return;
    }
    if ("view".equals(ctl)) {
      // For operators and tests: what this node routes by, and whether it still waits for releases.
      m.reply(new JsonObject().put("node", self).put("view", new JsonArray(views.view()))
          .put("settled", views.settled()).put("held", held.size() + handedIn.size()));
      return;
    }
    Submission input;
    try {
      input = Submission.parse(m.headers(), m.body());
    } catch (Submission.BadInput e) {
      m.fail(FerryError.BAD_INPUT.code(), e.getMessage());
      return;
    }
    int hop;
    try {
      hop = Integer.parseInt(m.headers().get(Forwarder.HOP));
    } catch (NumberFormatException e) {
      hop = 0; // a caller entering here directly, not a forward
    }
    Pending p = pending(m, input, hop, m.headers().contains(Forwarder.HANDOFF));
    p.sender = m.headers().get(FROM);
    route(p);
  }

  private Pending pending(Message<Object> m, Submission input, int hop, boolean handedOff) {
    Promise<Object> answer = Promise.promise();
    answer.future().onComplete(ar -> {
      if (ar.failed() && ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
        m.fail(re.failureCode(), re.getMessage()); // the owner's code and text, unchanged
      } else {
        reply.accept(m, ar);
      }
    });
    long deadline = input.timeoutMs > 0 ? System.nanoTime() + input.timeoutMs * 1_000_000 : Long.MAX_VALUE;
    return new Pending(input, hop, handedOff, deadline, answer);
  }

  private void route(Pending p) {
    String key = p.input.key;
    if (!views.known() || handingOff.contains(key)) {
      hold(p);
      return;
    }
    String owner = views.owner(key);
    String via = p.handedOff ? null : forwarder.pathOf(key);
    if (owner != null && via != null && !via.equals(owner)) {
      // Earlier inputs of this key are still on their way through the previous owner: follow them
      // (it passes these on behind them), or, if the key is now ours, wait for them to come back.
      if (owner.equals(self)) {
        hold(p);
      } else {
        forwarder.forward(via, p, false, self);
      }
      return;
    }
    if (owner == null) {
      p.answer.tryFail(new FerryException(FerryError.CLOSED, "no node of the cluster serves " + address));
    } else if (!p.retry && owner.equals(p.sender)) {
      // The node that sent it here is its owner by this node's view, and it thinks otherwise: one
      // of the two views is behind. Sending it straight back would bounce it (and let the sender's
      // later inputs overtake it): wait for the next view, or a short pause.
      hold(p, RETRY_MS);
    } else if (!owner.equals(self) && p.hop >= Forwarder.MAX_HOPS && !p.retry) {
      // Passed on twice already: views disagree and one of the nodes is behind. Rather than bounce
      // it at network speed, wait for a view change or a short pause, then send it on again.
      hold(p, RETRY_MS);
    } else if (!owner.equals(self)) {
      p.retry = false;
      // Reaching the previous owner after the key moved, an input is older than whatever its
      // sender's entry node now sends to the new owner directly: it goes with the hand-off class.
      forwarder.forward(owner, p, p.handedOff || views.ownedJustBefore(key, System.nanoTime(), maxHoldMs * 1_000_000), self);
    } else if (views.gated(key)) {
      hold(p);
    } else {
      long remaining = p.remainingMs(System.nanoTime());
      if (remaining < 0) {
        p.answer.tryFail(new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent"));
        return;
      }
      Future<Object> outcome = remaining > 0 ? ferry.submit(p.input, Duration.ofMillis(remaining)) : ferry.submit(p.input);
      outcome.onComplete(p.answer);
    }
  }

  private void hold(Pending p) {
    hold(p, Long.MAX_VALUE);
  }

  /** Holds {@code p} until flushed, or until {@code retryMs} pass (then routes it again). */
  private void hold(Pending p, long retryMs) {
    ArrayDeque<Pending> q = (p.handedOff ? handedIn : held).computeIfAbsent(p.input.key, k -> new ArrayDeque<>());
    q.add(p);
    long now = System.nanoTime();
    if (p.holdUntil == 0) {
      // Bounded from the first hold: routing again after a view change does not extend it.
      p.holdUntil = Math.min(p.deadline, now + maxHoldMs * 1_000_000);
    }
    long ms = Math.max(1, Math.min(retryMs, (p.holdUntil - now) / 1_000_000));
    p.holdTimer = vertx.setTimer(ms, t -> {
      if (!q.remove(p)) {
        return; // flushed meanwhile
      }
      p.holdTimer = -1;
      if (q.isEmpty()) {
        handedIn.remove(p.input.key, q);
        held.remove(p.input.key, q);
      }
      if (System.nanoTime() < p.holdUntil) {
        p.retry = true;
        route(p);
      } else {
        p.answer.tryFail(System.nanoTime() >= p.deadline
            ? new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent")
            : new FerryException(FerryError.CLOSED, "the key's owner could not be reached: membership did not settle in time"));
        checkLeft();
      }
    });
  }

  /** Routes the key's held inputs again, hand-offs first: they were accepted before the others. */
  private void flush(String key) {
    ArrayDeque<Pending> first = handedIn.remove(key);
    ArrayDeque<Pending> then = held.remove(key);
    for (ArrayDeque<Pending> q : new ArrayDeque[] {first, then}) {
      if (q != null) {
        for (Pending p : q) {
          vertx.cancelTimer(p.holdTimer);
          p.holdTimer = -1;
          route(p);
        }
      }
    }
  }

  private void flushAll() {
    Set<String> keys = new java.util.LinkedHashSet<>(handedIn.keySet());
    keys.addAll(held.keySet());
    for (String key : keys) {
      if (views.known() && !handingOff.contains(key)) {
        flush(key);
      }
    }
  }

  private void onSnapshot(Membership.Snapshot s) {
    forwarder.membersNow(s.members());
    if (views.adopt(s.members(), s.announced(), System.nanoTime())) {
      releaseSent = false;
      LOG.log(Level.DEBUG, "ferry: node {0} routes by [{1}]", self, views.id());
      handOffLostKeys();
    }
    flushAll();
    maybeRelease();
  }

  private void handOffLostKeys() {
    handOffsOpen++; // so that no release goes out before every lost key was looked at
    ferry.activeKeys().onSuccess(keys -> {
      for (String key : keys) {
        String owner = views.owner(key);
        if (owner == null || owner.equals(self) || !handingOff.add(key)) {
          continue; // ours, or no one to hand to (the last node drains instead), or already going
        }
        handOffsOpen++;
        ferry.handOff(key, this::handedOff).onComplete(v -> {
          handingOff.remove(key);
          handOffsOpen--;
          flush(key);
          maybeRelease();
        });
      }
      handOffsOpen--;
      maybeRelease();
    });
  }

  /** One waiting input of a key handed off here, routed to whoever owns the key now. */
  private Future<Object> handedOff(Submission input, Duration remaining) {
    Promise<Object> answer = Promise.promise();
    long deadline = remaining == null ? Long.MAX_VALUE : System.nanoTime() + remaining.toNanos();
    Pending p = new Pending(input, 0, true, deadline, answer);
    // Not route(): the key is still marked as handing off, and these inputs go before its held ones.
    String owner = views.owner(input.key);
    if (owner == null) {
      answer.fail(new FerryException(FerryError.CLOSED, "no node of the cluster serves " + address));
    } else if (owner.equals(self)) {
      hold(p); // ownership came back meanwhile: flushed, first, when the hand-off completes
    } else {
      forwarder.forward(owner, p, true, self);
    }
    return answer.future().recover(t -> Future.failedFuture(Forwarder.asFerryException(t)));
  }

  private void onRelease(String from, String forView) {
    if (from != null && forView != null && views.released(from, forView)) {
      flushAll();
    }
  }

  /**
   * Once no key this node does not own has a call or waiting input here, says so to every node
   * that may wait for it. Sent on each node's node address, after the hand-off forwards to it:
   * the same address from the same sender, so it arrives after them.
   */
  private void maybeRelease() {
    if (views.known() && !releaseSent && handOffsOpen == 0) {
      releaseSent = true;
      String id = views.id();
      DeliveryOptions o = new DeliveryOptions().addHeader(CTL, "release").addHeader(FROM, self).addHeader(VIEW, id);
      for (String node : views.releaseTargets()) {
        vertx.eventBus().request(Forwarder.nodeAddress(address, node), null, o).onFailure(t ->
            LOG.log(Level.WARNING, "ferry: release of view [{0}] not delivered to {1}: {2}", id, node, t.toString()));
      }
    }
    checkLeft();
  }

  /**
   * Graceful leave: withdraws this node from the view (the others stop routing here and take its
   * keys), hands every key over, and completes once every forward made here has been answered
   * (bounded by {@code maxWaitMs}). The caller should have stopped taking public requests first.
   */
  public Future<Void> leave(long maxWaitMs) {
    settledAfterLeave = Promise.promise();
    forwarder.onIdle(this::checkLeft);
    long timer = vertx.setTimer(Math.max(1, maxWaitMs), t -> {
      forwarder.failAll("this node left the cluster before the key's owner answered");
      settledAfterLeave.tryComplete();
    });
    return membership.withdraw()
        .compose(v -> {
          checkLeft();
          return settledAfterLeave.future();
        })
        .onComplete(ar -> vertx.cancelTimer(timer));
  }

  private void checkLeft() {
    if (settledAfterLeave != null && views.known() && !views.view().contains(self) && handOffsOpen == 0
        && held.isEmpty() && handedIn.isEmpty() && forwarder.idle()) {
      settledAfterLeave.tryComplete();
    }
  }

  /**
   * Unregisters the node address and stops listening to membership. Whatever this node still
   * holds (inputs that arrived after the leave settled, or a hold the undeploy would cancel) is
   * answered CLOSED first: an accepted input always gets its one reply.
   */
  public Future<Void> close() {
    for (Map<String, ArrayDeque<Pending>> waiting : List.of(handedIn, held)) {
      for (ArrayDeque<Pending> q : waiting.values()) {
        for (Pending p : q) {
          if (p.holdTimer >= 0) {
            vertx.cancelTimer(p.holdTimer);
            p.holdTimer = -1;
          }
          p.answer.tryFail(new FerryException(FerryError.CLOSED, "this node left the cluster"));
        }
      }
      waiting.clear();
    }
    forwarder.failAll("this node left the cluster before the key's owner answered");
    Future<Void> unregistered = nodeConsumer == null ? Future.succeededFuture() : nodeConsumer.unregister();
    return unregistered.eventually(membership::close);
  }
}
