package dev.ferry.cluster;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.internal.Driver;
import dev.ferry.internal.VertxLoop;
import dev.ferry.verticle.FerryClient;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.RejectedExecutionException;

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
  /**
   * Set by the first {@link #close} on its caller's thread, so that a submit after close (on any
   * thread that saw it) is answered CLOSED at once, without a hop; a submit that raced it to the
   * loop is answered CLOSED there by the router (ADR 0136).
   */
  private volatile boolean closing;
  /** Completed once the membership stopped; each {@link #close} returns a Future that follows it. */
  private final Promise<Void> closed = Promise.promise();
  /** Removes the hook that closes this client with its context's owner (see the constructor). */
  private final Runnable unhook;

  private RoutingClient(Vertx vertx, String address, java.util.function.Function<io.vertx.core.Context, Membership> makeMembership) {
    this.vertx = vertx;
    this.address = address;
    this.loop = VertxLoop.forCaller(vertx);
    this.router = new ClientRouter(loop, this::send);
    this.membership = makeMembership.apply(loop.context());
    Promise<Void> up = Promise.promise();
    loop.execute(() -> this.membership.start(null, s -> router.snapshot(s.members(), s.announced())).onComplete(up));
    this.started = up.future();
    // Closed with the owner of its loop (the verticle it was made in, else the Vert.x instance):
    // that takes its timers and event loop with it, and a request waiting for a node would never
    // be answered (ADR 0136).
    this.unhook = loop.onOwnerClose(this::ownerClosed);
  }

  /** A routing client for the ferry at {@code address} on a clustered Vert.x (Hazelcast). */
  public static RoutingClient create(Vertx vertx, String address) {
    return new RoutingClient(vertx, address, context -> new HazelcastMembership(vertx, context, address, false));
  }

  /** As {@link #create}, with the membership given (tests: a fixed view on an unclustered Vert.x). */
  static RoutingClient create(Vertx vertx, String address, Membership membership) {
    return new RoutingClient(vertx, address, context -> membership);
  }

  /** Keys with requests in flight or waiting (tests: 0 once everything was answered). */
  Future<Integer> activeKeys() {
    Promise<Integer> n = Promise.promise();
    loop.execute(() -> n.complete(router.activeKeys()));
    return n.future();
  }

  /** Completes once the first view was read (requests made before wait for it, within their deadlines). */
  public Future<Void> started() {
    return started;
  }

  /**
   * Sends {@code body} to the owner of {@code key}. {@code headers} holds the request's headers
   * (key, id, order), taken as they are at the call: a {@code key} header other than {@code key},
   * under any spelling of its name, or an {@code id} over {@link FerryClient#MAX_ID_LENGTH}, is
   * {@code BAD_INPUT} with nothing sent, and a missing one is {@code key}; {@code timeoutMs} is the caller's timeout-ms (0 for none), {@code
   * sendTimeoutMs} how long the caller waits for a reply.
   */
  public Future<Object> submit(String key, Object body, DeliveryOptions headers, long timeoutMs, long sendTimeoutMs) {
    if (closing) {
      return Future.failedFuture(new FerryException(FerryError.CLOSED, ClientRouter.CLOSED_TEXT));
    }
    // A value of no JSON type (a POJO): the event bus cannot write it to another node and only
    // never delivers it, so its caller would learn of it at the send timeout, as an outcome
    // unknown (ADR 0128). FerryClient checks it too; this client may be used without it.
    String noJson = dev.ferry.verticle.Submission.notJson(body);
    if (noJson != null) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, noJson));
    }
    // As FerryClient answers it: a null key threw on the loop (its caller never answered), and an
    // ill-formed one, routed by its hash here, would arrive as another key (ADR 0154).
    String badKey = dev.ferry.verticle.Submission.clientKeyRefusal(key);
    if (badKey != null) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, badKey));
    }
    // The headers as they are now (sent later, from the loop, where a caller changing them would
    // race the copy), checked as FerryClient checks its options (review BG). This client routes by
    // {@code key} and the node batches by the key header: one key, or an input routed by one and
    // batched under another, in neither's order. A missing key header is the key routed by; no
    // header at all (DeliveryOptions' headers are null until one is added) threw on the loop, its
    // caller never answered.
    io.vertx.core.MultiMap sent = io.vertx.core.MultiMap.caseInsensitiveMultiMap();
    if (headers != null && headers.getHeaders() != null) {
      sent.addAll(headers.getHeaders());
    }
    boolean keyGiven = false;
    for (java.util.Map.Entry<String, String> h : sent) {
      if (FerryClient.KEY_HEADER.equalsIgnoreCase(h.getKey())) {
        keyGiven = true;
        if (!key.equals(h.getValue())) {
          return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, "the \"key\" header is \""
              + shortened(h.getValue()) + "\" but the key routed by is \"" + shortened(key) + "\": give one key"));
        }
      } else if (FerryClient.ID_HEADER.equalsIgnoreCase(h.getKey()) && h.getValue() != null
          && h.getValue().length() > FerryClient.MAX_ID_LENGTH) {
        return Future.failedFuture(new FerryException(FerryError.BAD_INPUT,
            dev.ferry.verticle.Submission.idTooLong(h.getValue())));
      }
    }
    if (!keyGiven) {
      sent.add(FerryClient.KEY_HEADER, key);
    }
    DeliveryOptions sentHeaders = new DeliveryOptions().setHeaders(sent);
    Object taken;
    try {
      // Taken as it is now, on the caller's thread: it is sent later, from the loop, and again
      // after a NO_HANDLERS, while the caller may change it (a JsonObject reused for the next
      // input) or, from another thread, change it as it is copied. Copied as Vert.x copies a
      // plain client's body when it sends it, so that a value of no JSON type inside is refused
      // here, before anything is routed: thrown from the send, it left its caller unanswered.
      taken = body instanceof JsonObject o ? o.copy() : body instanceof JsonArray a ? a.copy() : body;
    } catch (IllegalStateException notJson) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT,
          "the body is not a JSON value: " + notJson.getMessage()));
    } catch (java.util.ConcurrentModificationException changing) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, dev.ferry.verticle.Submission.CHANGING));
    }
    Promise<Object> answer = Driver.callerPromise();
    try {
      loop.execute(() -> {
        long now = loop.nanoTime();
        // Saturated: the longest durations FerryClient accepts (Limits.MAX_MS) overflowed past
        // nanoTime, and the input was answered TIMEOUT or CLOSED at once, never sent. A deadline
        // beyond the loop's time is none, as the node takes it (Submission).
        router.submit(new ClientRouter.Request(key, new Payload(taken, sentHeaders, origin + ++submitted),
            timeoutMs > 0 ? after(now, timeoutMs) : Long.MAX_VALUE, after(now, sendTimeoutMs), answer));
      });
    } catch (RejectedExecutionException closed) {
      // The Vert.x instance is closed: nothing was sent. A failed Future, as from the plain client.
      return Future.failedFuture(new FerryException(FerryError.CLOSED,
          "the Vert.x instance is closed, nothing was sent: " + closed.getMessage(), closed));
    }
    return answer.future();
  }

  /** Text from a header for a refusal: escaped, cut at 64 characters. */
  private static String shortened(String text) {
    String escaped = dev.ferry.internal.LogText.escape(text);
    return escaped.length() > 64 ? escaped.substring(0, 64) + "..." : escaped;
  }

  /** {@code now} plus {@code ms} in nanoseconds, or Long.MAX_VALUE past it. */
  private static long after(long now, long ms) {
    return dev.ferry.internal.Deadlines.after(now, java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(Math.max(0, ms)));
  }

  /**
   * Closes the client (ADR 0136): a later submit is answered CLOSED at once, nothing sent; a request
   * not sent yet is answered CLOSED now; a request on the wire gets its own answer (it may have
   * been applied), or CLOSED if it comes back not delivered. Stops watching the view. Any thread,
   * any number of times: each call's Future completes once the view's listeners are removed, on
   * its caller's context when it has one (as the answers of {@link #submit} do).
   */
  public Future<Void> close() {
    // A Future of the caller's own, on its context, tried (not handed the promise itself): a caller
    // may complete it to stop waiting, and the close's own task must not throw for that.
    Future<Void> mine = Driver.onCallersContext(closed.future());
    closing = true;
    try {
      loop.execute(() -> {
        closeOnLoop();
        unhookWhenQuiet();
      });
    } catch (RejectedExecutionException gone) {
      // The Vert.x instance is closed: its timers and listeners went with it, nothing to stop.
      closed.tryComplete();
    }
    return mine;
  }

  /** The owner of the loop closes: so does this client, and the owner waits for it. */
  private void ownerClosed(Runnable done) {
    closing = true;
    try {
      loop.execute(() -> {
        Future<Void> stopped = closeOnLoop();
        router.abandon();
        stopped.onComplete(ar -> done.run());
      });
    } catch (RejectedExecutionException gone) {
      closed.tryComplete();
      done.run();
    }
  }

  /**
   * Once closed, the owner's close hook is dropped (a closed client is not kept by a long-lived
   * Vert.x) when nothing is on the wire any more: until then the hook still answers what is, should
   * the Vert.x close before their replies come. On the loop.
   */
  private void unhookWhenQuiet() {
    if (router.closed() && router.onTheWire() == 0) {
      unhook.run();
    }
  }

  private Future<Void> closeOnLoop() {
    if (!router.closed()) {
      router.close();
      membership.close().onComplete(ar -> {
        if (ar.succeeded()) {
          closed.tryComplete();
        } else {
          closed.tryFail(ar.cause());
        }
      });
    }
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
        .onComplete(ar -> {
          router.sent(s, ar.map(Message::body));
          unhookWhenQuiet();
        });
  }
}
