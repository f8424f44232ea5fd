package dev.ferry.cluster;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Sends inputs to other nodes' node addresses and relays what comes back. A recipient failure (the
 * owner's 4xx/5xx) comes back as the {@link ReplyException} itself, to be passed on unchanged; an
 * owner that cannot be reached (no handlers, send timeout, left the cluster) becomes CLOSED (503).
 * Used on the verticle's context only.
 */
final class Forwarder {
  static final String HOP = "ferry-hop";
  static final String HANDOFF = "ferry-handoff";
  /**
   * Forwarded at once at most twice (entry node to owner, and once more if views disagreed);
   * beyond that, only after a pause (ClusterNode holds it), so that disagreeing views never make
   * an input bounce at network speed.
   */
  static final int MAX_HOPS = 2;

  private final Vertx vertx;
  private final String address;
  private final long callTimeoutMs;
  /** Forwards not yet answered, per target node: failed at once if that node leaves the cluster. */
  private final Map<String, Set<Promise<Object>>> open = new HashMap<>();
  private Runnable onIdle = () -> {};
  /**
   * Per key, the node its inputs were last forwarded to while some are still unanswered. New
   * inputs of the key follow the same path until it drains, even if the owner changed: the old
   * owner passes them on behind the older ones, so one sender's order survives the change.
   */
  private final Map<String, Path> paths = new HashMap<>();
  private java.util.function.Consumer<String> onPathClear = k -> {};

  private static final class Path {
    final String target;
    int open;

    Path(String target) {
      this.target = target;
    }
  }

  /** The node with forwards of {@code key} still open, or null. */
  String pathOf(String key) {
    Path p = paths.get(key);
    return p == null ? null : p.target;
  }

  /** Runs {@code r} with a key whose last open forward was answered. */
  void onPathClear(java.util.function.Consumer<String> r) {
    this.onPathClear = r;
  }

  Forwarder(Vertx vertx, String address, long callTimeoutMs) {
    this.vertx = vertx;
    this.address = address;
    this.callTimeoutMs = callTimeoutMs;
  }

  static String nodeAddress(String address, String nodeId) {
    return dev.ferry.verticle.FerryClient.nodeAddress(address, nodeId);
  }

  void forward(String owner, Pending p, boolean handedOff, String self) {
    long remaining = p.remainingMs(System.nanoTime());
    if (remaining < 0) {
      p.answer.tryFail(new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent"));
      return;
    }
    Submission s = p.input;
    // The owner may hold an input (join hand-off), queue it until its deadline, then call: the
    // reply can take up to about the deadline plus a couple of call timeouts.
    DeliveryOptions o = new DeliveryOptions()
        .setSendTimeout(remaining + 3 * callTimeoutMs)
        .addHeader(Submission.KEY, s.key)
        .addHeader(HOP, Integer.toString(Math.min(p.hop + 1, MAX_HOPS)));
    if (s.id != null) {
      o.addHeader(Submission.ID, s.id);
    }
    if (s.order != Long.MAX_VALUE) {
      o.addHeader(Submission.ORDER, Long.toString(s.order));
    }
    if (remaining > 0) {
      // timeout-ms counts from arrival: the owner gets what is left of the caller's deadline.
      o.addHeader(Submission.TIMEOUT_MS, Long.toString(remaining));
    }
    o.addHeader(ClusterNode.FROM, self);
    if (handedOff) {
      o.addHeader(HANDOFF, "1");
    }
    Set<Promise<Object>> toOwner = open.computeIfAbsent(owner, n -> new LinkedHashSet<>());
    toOwner.add(p.answer);
    Path existing = paths.computeIfAbsent(s.key, k -> new Path(owner));
    // Not on the path: a hand-off sent straight to the new owner, older than anything on the path.
    Path path = existing.target.equals(owner) ? existing : null;
    if (path != null) {
      path.open++;
    }
    vertx.eventBus().request(nodeAddress(address, owner), s.body, o).onComplete(ar -> {
      toOwner.remove(p.answer);
      if (toOwner.isEmpty()) {
        open.remove(owner, toOwner);
      }
      if (path != null && --path.open == 0 && paths.remove(s.key, path)) {
        onPathClear.accept(s.key);
      }
      if (ar.succeeded()) {
        p.answer.tryComplete(ar.result().body());
      } else if (ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
        p.answer.tryFail(re);
      } else {
        p.answer.tryFail(new FerryException(FerryError.CLOSED,
            "the key's owner could not be reached: " + ar.cause().getMessage()));
      }
      if (open.isEmpty()) {
        onIdle.run();
      }
    });
  }

  /** Fails at once every forward open to a node that is no longer a member. */
  void membersNow(Set<String> members) {
    for (Map.Entry<String, Set<Promise<Object>>> e : Map.copyOf(open).entrySet()) {
      if (!members.contains(e.getKey())) {
        for (Promise<Object> p : Set.copyOf(e.getValue())) {
          p.tryFail(new FerryException(FerryError.CLOSED,
              "the key's owner " + e.getKey() + " left the cluster before answering"));
        }
        open.remove(e.getKey());
      }
    }
    for (Map.Entry<String, Path> e : Map.copyOf(paths).entrySet()) {
      if (!members.contains(e.getValue().target) && paths.remove(e.getKey(), e.getValue())) {
        onPathClear.accept(e.getKey());
      }
    }
    if (open.isEmpty()) {
      onIdle.run();
    }
  }

  boolean idle() {
    return open.isEmpty();
  }

  /** Runs {@code r} whenever the last open forward was answered. */
  void onIdle(Runnable r) {
    this.onIdle = r;
  }

  /** Fails every open forward (leaving gave up waiting for them). */
  void failAll(String why) {
    for (Set<Promise<Object>> set : Map.copyOf(open).values()) {
      for (Promise<Object> p : Set.copyOf(set)) {
        p.tryFail(new FerryException(FerryError.CLOSED, why));
      }
    }
    open.clear();
  }

  /** A recipient failure as the FerryException of the same code and text (for hand-off relays). */
  static Throwable asFerryException(Throwable t) {
    if (t instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
      FerryError kind = FerryError.ofCode(re.failureCode());
      return new FerryException(kind == null ? FerryError.FAILED : kind, re.getMessage());
    }
    return t;
  }
}
