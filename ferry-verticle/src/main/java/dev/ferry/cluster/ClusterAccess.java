package dev.ferry.cluster;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.impl.MessageConsumerImpl;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.RegistrationInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

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
 *       "may have been delivered" (ADR 0054);
 *   <li>taking this node's consumers of an address out of the cluster's registrations while they
 *       keep taking what still reaches them (through the cluster manager's SPI): the public API
 *       only unregisters a consumer everywhere at once, and a request that reaches a node over the
 *       cluster after that is dropped without any reply (ADR 0093);
 *   <li>Vert.x's own close hooks, so that closing Vert.x waits for an undeploy under way, and
 *       for a start under way before it leaves as an undeploy does;
 *   <li>closing a bridge or monitoring connection's channel at once (ADRs 0166, 0169): the public
 *       {@code close()} first waits until what was written before it has gone out, which a client
 *       that reads nothing never lets happen.
 * </ul>
 * Callable from any thread.
 */
public final class ClusterAccess {
  private ClusterAccess() {}

  /**
   * Closes {@code socket}'s channel at once, as Vert.x does at its own idle timeout; what was
   * already written and sent still reaches the client. The public {@code close()} waits until
   * everything written before it has gone out: a client that reads nothing kept its connection,
   * and what was queued for it, for ever. On the socket's event loop.
   */
  public static void closeNow(io.vertx.core.net.NetSocket socket) {
    if (socket instanceof io.vertx.core.internal.net.NetSocketInternal internal) {
      internal.channelHandlerContext().close();
    } else {
      socket.close();
    }
  }

  /** {@link #closeNow(io.vertx.core.net.NetSocket)} for a connection of Vert.x's HTTP server. */
  public static void closeNow(io.vertx.core.http.HttpConnection connection) {
    if (connection instanceof io.vertx.core.http.impl.HttpServerConnection internal) {
      internal.channelHandlerContext().close();
    } else {
      connection.close();
    }
  }

  /**
   * Holds a {@code vertx.close()} that begins before {@code owner}, a deployment's context, has
   * closed: Vert.x closes that context (runs its close hooks) once the verticle's {@code stop()}
   * completed, and then ends the undeploy in the same call, without another turn of an event
   * loop; the hold lets go one turn of the owner's loop after that close. Vert.x 5 runs its own
   * close hooks before it undeploys the verticles and closes the event bus, and does not wait
   * for an undeploy already under way (that deployment has left its list): without the hold, a verticle still waiting for a call in flight would lose its caller's reply
   * with the event bus, and an undeploy released only at the end of {@code stop()} could still
   * find the event loops gone before it completed. Vert.x has no public API for this; a Vert.x
   * already closing is not held. Any thread.
   */
  public static void holdCloseUntilClosed(Vertx vertx, Context owner) {
    Future<Void> ownerClosed = ((ContextInternal) owner).closeFuture().future();
    io.vertx.core.internal.CloseFuture closing = ((VertxInternal) vertx).closeFuture();
    // Let go one task later on the owner's loop: Vert.x's own listeners of that close (added after
    // stop(), so after this one) take the deployment out and tell the undeploy's caller in the
    // same task, and a close let go inline could shut the event loops before that caller's listener
    // runs. The loop itself stays up while the close is held.
    io.vertx.core.Closeable hold = completion -> ownerClosed.onComplete(ar ->
        ((ContextInternal) owner).nettyEventLoop().execute(completion::succeed));
    if (closing.add(hold)) {
      ownerClosed.onComplete(ar -> closing.remove(hold));
    }
  }

  /**
   * Has a {@code vertx.close()} that begins before {@code start} completed wait for {@code
   * leave}'s future before it goes on. Vert.x 5 undeploys only verticles whose start completed:
   * one still starting is neither waited for nor stopped, and Vert.x closes its event bus and
   * leaves the cluster under it. Vert.x runs its own close hooks first, before it undeploys and
   * while the event bus and the cluster still work, so a hook there can still leave gracefully.
   * The hook is taken out once {@code start} completes (a close that already began still runs
   * it: {@code leave} must then do nothing twice). False when Vert.x is closing already: nothing
   * holds that close, so the start must not go on. Any thread; {@code leave} is called on the
   * closing thread.
   */
  public static boolean holdCloseDuringStart(Vertx vertx, Future<?> start, Supplier<Future<?>> leave) {
    io.vertx.core.internal.CloseFuture closing = ((VertxInternal) vertx).closeFuture();
    io.vertx.core.Closeable hold = completion -> {
      Future<?> left;
      try {
        left = leave.get();
      } catch (RuntimeException e) {
        left = Future.failedFuture(e);
      }
      left.onComplete(ar -> completion.succeed());
    };
    if (!closing.add(hold)) {
      return false;
    }
    start.onComplete(ar -> closing.remove(hold));
    return true;
  }

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

  /**
   * Removes this node's cluster-wide registrations of {@code address} from the cluster manager,
   * so that other nodes stop sending its requests here once the removal reaches them, while the
   * consumers stay registered locally and keep handling whatever still arrives. Local-only
   * consumers are not touched. A later {@code unregister()} of those consumers finds nothing
   * left to remove in the cluster, which the cluster manager accepts. {@code vertx} must be
   * clustered.
   */
  public static Future<Void> withdrawRegistrations(Vertx vertx, String address) {
    ClusterManager manager = ((VertxInternal) vertx).clusterManager();
    String self = manager.getNodeId();
    Promise<List<RegistrationInfo>> registrations = Promise.promise();
    manager.getRegistrations(address, registrations);
    return registrations.future().compose(all -> {
      List<Future<Void>> removed = new ArrayList<>();
      for (RegistrationInfo r : all) {
        if (self.equals(r.nodeId()) && !r.localOnly()) {
          Promise<Void> done = Promise.promise();
          manager.removeRegistration(address, r, done);
          removed.add(done.future());
        }
      }
      return Future.all(removed).mapEmpty();
    });
  }
}
