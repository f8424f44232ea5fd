package dev.ferry.cluster;

import dev.ferry.internal.Driver;
import dev.ferry.internal.VertxLoop;
import dev.ferry.verticle.FerryClient;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;

/**
 * The Vert.x side of a routing {@link FerryClient} (docs/adr/0057-the-routing-client.md): watches
 * the ownership view through {@link Membership} (without joining it), and performs the sends that
 * {@link ClientRouter} decides, on the nodes' node addresses. Everything runs on one
 * event-loop context (the caller's when it is one, a new one otherwise); {@link #submit} may be
 * called from any thread and hops there, in order.
 */
public final class RoutingClient {
  private final Vertx vertx;
  private final String address;
  private final VertxLoop loop;
  private final ClientRouter router;
  private final Membership membership;
  private final Future<Void> started;
  /** This client's name in its requests' origin header (ADR 0098), and their count so far. */
  private final String origin = java.util.UUID.randomUUID() + "#";
  private long submitted;

  private RoutingClient(Vertx vertx, String address) {
    this.vertx = vertx;
    this.address = address;
    this.loop = VertxLoop.forCaller(vertx);
    this.router = new ClientRouter(loop, this::send);
    this.membership = new HazelcastMembership(vertx, loop.context(), address, false);
    Promise<Void> up = Promise.promise();
    loop.execute(() -> membership.start(s -> router.snapshot(s.members(), s.announced())).onComplete(up));
    this.started = up.future();
  }

  /** A routing client for the ferry at {@code address} on a clustered Vert.x (Hazelcast). */
  public static RoutingClient create(Vertx vertx, String address) {
    return new RoutingClient(vertx, address);
  }

  /** Completes once the first view was read (requests made before wait for it, within their deadlines). */
  public Future<Void> started() {
    return started;
  }

  /**
   * Sends {@code body} to the owner of {@code key}. {@code headers} holds the request's headers
   * (key, id, order); {@code timeoutMs} is the caller's timeout-ms (0 for none), {@code
   * sendTimeoutMs} how long the caller waits for a reply.
   */
  public Future<Object> submit(String key, Object body, DeliveryOptions headers, long timeoutMs, long sendTimeoutMs) {
    Promise<Object> answer = Driver.callerPromise();
    loop.execute(() -> {
      long now = loop.nanoTime();
      router.submit(new ClientRouter.Request(key, new Payload(body, headers, origin + ++submitted),
          timeoutMs > 0 ? now + timeoutMs * 1_000_000 : Long.MAX_VALUE, now + sendTimeoutMs * 1_000_000, answer));
    });
    return answer.future();
  }

  /** Stops watching the view; requests in flight still get their replies. */
  public Future<Void> close() {
    Promise<Void> closed = Promise.promise();
    loop.execute(() -> membership.close().onComplete(closed));
    return closed.future();
  }

  /** What is sent, and its sender and place in the sender's order (the same on every resend). */
  private record Payload(Object body, DeliveryOptions headers, String origin) {}

  private void send(ClientRouter.Send s) {
    Payload p = (Payload) s.request.payload;
    DeliveryOptions o = new DeliveryOptions().setHeaders(io.vertx.core.MultiMap.caseInsensitiveMultiMap()
        .addAll(p.headers().getHeaders())).setSendTimeout(s.sendTimeoutMs);
    o.getHeaders().remove(FerryClient.TIMEOUT_MS_HEADER);
    o.getHeaders().set(ClusterNode.ORIGIN, p.origin());
    if (s.timeoutMs > 0) {
      o.addHeader(FerryClient.TIMEOUT_MS_HEADER, Long.toString(s.timeoutMs));
    }
    vertx.eventBus().request(FerryClient.nodeAddress(address, s.target), p.body(), o)
        .onComplete(ar -> router.sent(s, ar.map(Message::body)));
  }
}
