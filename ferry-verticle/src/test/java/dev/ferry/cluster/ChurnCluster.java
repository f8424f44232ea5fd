package dev.ferry.cluster;

import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A cluster of routers in virtual time, driven step by step, for tests that churn its membership:
 * ferries deployed, closed and deployed again under one node id, snapshots fed by hand, forwards
 * and releases carried on a wire the test delivers. Each node's downstream records its calls and
 * keeps them open until the test completes them.
 */
abstract class ChurnCluster {
  final VirtualLoop loop = new VirtualLoop();
  /** Routers by node id (a node's current ferry); releases reach whichever router has the id now. */
  final Map<String, Router> cluster = new HashMap<>();
  final ArrayDeque<Runnable> wire = new ArrayDeque<>();
  /** Every downstream call, "node key [bodies]", in call order. */
  final List<String> calls = new ArrayList<>();
  /** Calls still open, per key: at most one at any moment. */
  final Map<String, Integer> openPerKey = new HashMap<>();
  final List<String> violations = new ArrayList<>();
  /** Every release sent, "from>to view", in order. */
  final List<String> released = new ArrayList<>();
  /** Each release is delivered twice. */
  boolean releasesTwice;
  /** Releases "from>to" on a slow wire: held here until the test lets them go. */
  final Set<String> slow = new java.util.HashSet<>();
  final List<Runnable> held = new ArrayList<>();
  /** The open calls' promises, in call order. */
  final List<Promise<List<Object>>> open = new ArrayList<>();

  PerKeyFerry<String, Submission, List<Object>, Object> ferry(String node) {
    return new PerKeyFerry<>(loop, dev.ferry.PerKeyConfig.builder().callTimeout(java.time.Duration.ofMillis(1_000)).build(),
        (Submission in) -> in.key, null, null, (key, inputs) -> {
          calls.add(node + " " + key + " " + inputs.stream().map(in -> in.body).toList());
          if (openPerKey.merge(key, 1, Integer::sum) > 1) {
            violations.add("two calls in flight for " + key + ": " + calls);
          }
          Promise<List<Object>> call = Promise.promise();
          call.future().onComplete(ar -> openPerKey.merge(key, -1, Integer::sum));
          open.add(call);
          return call.future();
        }, (in, ok) -> in.body);
  }

  /** A node's ferry (a new router: a new deployment, the same id if {@code self} was used before). */
  Router router(String self) {
    Router[] me = new Router[1];
    Router r = new Router(loop, self, ferry(self), 1_000, ClusterNode.maxHoldMs(1_000, 1_000), new Router.Links() {
      @Override
      public void forward(Router.Forward f) {
        wire.add(() -> RouterTesting.deliver(cluster.get(self), cluster.get(f.target), f));
      }

      @Override
      public void release(String node, String viewId) {
        released.add(self + ">" + node + " " + viewId);
        for (int i = releasesTwice ? 2 : 1; i > 0; i--) {
          (slow.contains(self + ">" + node) ? held : wire).add(() -> {
            Router to = cluster.get(node);
            if (to != null) {
              to.released(self, me[0].life(), viewId);
            }
          });
        }
      }
    });
    me[0] = r;
    cluster.put(self, r);
    return r;
  }

  /** Delivers every message sent, and those they cause. */
  void deliver() {
    RouterTesting.drain(loop, wire);
  }

  static void snapshot(Set<String> members, Set<String> announced, Set<String> leaving, Router... routers) {
    for (Router r : routers) {
      r.snapshot(members, announced, leaving);
    }
  }

  /** A snapshot as HazelcastMembership reads it: each open ferry with the life it announced. */
  void snapshotWithLives(Set<String> members, Set<String> announced, Set<String> leaving, Router... routers) {
    Map<String, String> lives = new HashMap<>();
    for (String n : announced) {
      lives.put(n, cluster.get(n).life());
    }
    for (String n : leaving) {
      lives.put(n, cluster.get(n).life());
    }
    for (Router r : routers) {
      r.snapshot(members, announced, leaving, lives);
    }
  }
}
