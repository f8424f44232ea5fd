package dev.ferry.cluster;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.impl.MessageConsumerImpl;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;

/**
 * ferry-verticle's only door to Vert.x internal API (docs/adr/0092-no-internal-type-in-the-public-api.md),
 * kept in this one class so an upgrade has one place to look:
 * <ul>
 *   <li>the cluster manager of a clustered Vert.x, which Vert.x 5 exposes only through {@code
 *       VertxInternal.clusterManager()} (no public accessor, and the launcher builds the Vert.x,
 *       so the application never holds the manager itself);
 *   <li>the hook a consumer calls for each request it discards once unregistered ({@code
 *       MessageConsumerImpl.discardHandler}, marked "internal API" there): the public API has no
 *       way to answer such a request, which Vert.x otherwise fails with a TIMEOUT that reads as
 *       "may have been delivered" (ADR 0054).
 * </ul>
 * Callable from any thread.
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

  /**
   * Has {@code consumer} pass each request it discards (it arrived, or was still queued, after
   * {@code unregister()}) to {@code discarded}, which may be called on any thread. False when this
   * Vert.x's consumers have no such hook: then Vert.x's own answer stays.
   */
  public static <T> boolean onDiscarded(MessageConsumer<T> consumer, Handler<Message<T>> discarded) {
    if (consumer instanceof MessageConsumerImpl<T> impl) {
      impl.discardHandler(discarded);
      return true;
    }
    return false;
  }
}
