package dev.ferry.cluster;

import io.vertx.core.Future;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Who is in the cluster, as seen by one node: the live members and, among them, the nodes whose
 * FerryVerticle at this address announced itself. Implementations deliver every change to the
 * listener on the verticle's context, in the order they observed them. The only place that knows
 * the cluster manager (Hazelcast today), so that the routing logic stays plain Vert.x.
 */
interface Membership {

  /**
   * Live members, announced Ferry nodes, and Ferry nodes that withdrew their announcement but have
   * not closed yet (leaving: they may still hold calls), as Vert.x node ids; and per Ferry node, the
   * life of its ferry ({@link Router#life}, ADR 0142; absent for a node that announces none). All
   * immutable.
   */
  record Snapshot(Set<String> members, Set<String> announced, Set<String> leaving, Map<String, String> lives) {
    Snapshot(Set<String> members, Set<String> announced, Set<String> leaving) {
      this(members, announced, leaving, Map.of());
    }
  }

  /** This node's Vert.x node id. */
  String self();

  /**
   * Starts listening, announces this node with its ferry's {@code life} (null for a watcher that
   * never announces), and completes once the first snapshot was delivered.
   */
  Future<Void> start(String life, Consumer<Snapshot> listener);

  /**
   * Withdraws the announcement (the node is then leaving until {@link #close}); completes once the
   * snapshot without this node was delivered.
   */
  Future<Void> withdraw();

  /** Removes this node from the Ferry nodes altogether and stops listening. */
  Future<Void> close();
}
