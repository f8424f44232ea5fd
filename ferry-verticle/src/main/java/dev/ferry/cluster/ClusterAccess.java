package dev.ferry.cluster;

import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;

/**
 * ferry-verticle's only door to Vert.x internal API: the cluster manager of a clustered Vert.x,
 * which Vert.x 5 exposes only through {@code VertxInternal.clusterManager()} (no public accessor,
 * and the launcher builds the Vert.x, so the application never holds the manager itself). Kept in
 * this one class so an upgrade has one place to look. Callable from any thread.
 */
public final class ClusterAccess {
  private ClusterAccess() {}

  /** The cluster manager, or null when {@code vertx} is not clustered. */
  public static ClusterManager clusterManager(Vertx vertx) {
    return vertx.isClustered() ? ((VertxInternal) vertx).clusterManager() : null;
  }

  /** This node's id in the cluster; {@code vertx} must be clustered. */
  public static String nodeId(Vertx vertx) {
    return ((VertxInternal) vertx).clusterManager().getNodeId();
  }
}
