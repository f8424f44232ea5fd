package dev.ferry.verticle;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.internal.Deadlines;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import java.time.Duration;
import java.util.Objects;

/**
 * Submits inputs to a {@link FerryVerticle} over the event bus and turns its failure codes back
 * into {@link FerryException}s, so a Java caller sees the same kinds as with a local ferry.
 *
 * <p>Mapping: a recipient failure with one of our codes becomes its kind ({@link
 * FerryError#ofCode}); NO_HANDLERS (no ferry at the address, or one that finished undeploying)
 * becomes CLOSED, as does ERROR (the receiving node could not decode the message, so no ferry saw
 * it), as does a submit on a closed Vert.x (nothing sent); an event-bus TIMEOUT becomes FAILED with the ReplyException as cause, since the
 * input may or may not have been sent and TIMEOUT promises that it was not
 * (docs/adr/0023-client-timeout-is-failed.md); anything else becomes FAILED. Thread-safe.
 */
public final class FerryClient {
  /** Where a node takes inputs unless configured otherwise. */
  public static final String DEFAULT_ADDRESS = "ferry.submit";
  /** The request headers of the submit protocol (see the verticle guide). */
  public static final String KEY_HEADER = "key";
  public static final String ID_HEADER = "id";
  public static final String TIMEOUT_MS_HEADER = "timeout-ms";
  public static final String ORDER_HEADER = "order";
  /** The longest key a node accepts, in characters. */
  public static final int MAX_KEY_LENGTH = 1024;
  /**
   * The longest {@code id} a node accepts, in characters. A node holds each waiting input's id, and
   * neither the count nor the weight bound sees it (the weight is the body's), so without a bound of
   * its own an id could make a node hold any amount of memory (review BE).
   */
  public static final int MAX_ID_LENGTH = 1024;

  private final Vertx vertx;
  private final String address;
  /** Set for a routing client: sends each input to its key's owner (docs/adr/0057). */
  private final dev.ferry.cluster.RoutingClient routing;
  /**
   * Set by {@link #close()} on a plain client: a later submit fails CLOSED at once, as a routing
   * client's does (ADR 0136). Volatile: submits come from any thread.
   */
  private volatile boolean closed;

  private FerryClient(Vertx vertx, String address) {
    this(vertx, address, null);
  }

  private FerryClient(Vertx vertx, String address, dev.ferry.cluster.RoutingClient routing) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.address = Objects.requireNonNull(address, "address");
    this.routing = routing;
  }

  /** A routing client for the default address; see {@link #routing(Vertx, String)}. */
  public static FerryClient routing(Vertx vertx) {
    return routing(vertx, DEFAULT_ADDRESS);
  }

  /**
   * A client that sends each input straight to its key's owner node, for a clustered Vert.x (with
   * or without a FerryVerticle of its own). It watches the nodes' ownership view (the same view
   * and rendezvous function they route by) and keeps one sender's per-key order for inputs in
   * flight at once, through joins, leaves and rolling restarts: a key's inputs follow the node
   * its earlier ones are still in flight at, and an input answered NO_HANDLERS (never delivered)
   * is sent again, in its place, within its deadline. Nothing that may have been delivered is
   * sent twice. Not clustered: a plain client. {@link #close()} stops watching the view; made in a
   * verticle, the client closes with it (ADR 0136).
   * (docs/guide/clustering.md, ADR 0057)
   */
  public static FerryClient routing(Vertx vertx, String address) {
    if (!vertx.isClustered()) {
      return create(vertx, address);
    }
    return new FerryClient(vertx, address, dev.ferry.cluster.RoutingClient.create(vertx, address));
  }

  /**
   * Closes the client: later submits fail CLOSED at once, nothing sent; inputs already sent keep
   * their own answer. A routing client also answers CLOSED the inputs it has not sent yet and stops
   * watching the view (ADR 0136). Any thread, any number of times.
   */
  public Future<Void> close() {
    closed = true;
    return routing == null ? Future.succeededFuture() : routing.close();
  }

  /** A client for the default address {@code ferry.submit}. */
  public static FerryClient create(Vertx vertx) {
    return create(vertx, DEFAULT_ADDRESS);
  }

  public static FerryClient create(Vertx vertx, String address) {
    return new FerryClient(vertx, address);
  }

  /**
   * A client that enters at this node's own address rather than the public one, for a clustered
   * Vert.x whose node runs {@link FerryVerticle}. The event bus spreads requests to the public
   * address round robin over the nodes, so two inputs of one sender may reach a key's owner by
   * different paths and in either order; entering at one node gives all of this client's inputs
   * one path, so each key's inputs keep the order they were sent in. Not clustered: this client.
   * Clustered, a client of its own: closing this one does not close it, nor the reverse.
   */
  public FerryClient atThisNode() {
    if (!vertx.isClustered()) {
      return this;
    }
    String nodeId = dev.ferry.cluster.ClusterAccess.nodeId(vertx);
    return new FerryClient(vertx, nodeAddress(address, nodeId));
  }

  /** The address at which node {@code nodeId} takes inputs for the ferry at {@code address}. */
  public static String nodeAddress(String address, String nodeId) {
    return address + ".node." + nodeId;
  }

  /** Submits {@code body} (any JSON value) under {@code key}; completes with its outcome value. */
  public <T> Future<T> submit(String key, Object body) {
    return submit(key, body, new SubmitOptions());
  }

  public <T> Future<T> submit(String key, Object body, SubmitOptions options) {
    Objects.requireNonNull(options, "options");
    if (closed && routing == null) {
      return Future.failedFuture(new FerryException(FerryError.CLOSED, "the client is closed, nothing was sent"));
    }
    String badKey = Submission.clientKeyRefusal(key);
    if (badKey != null) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, badKey));
    }
    if (options.id != null && options.id.length() > MAX_ID_LENGTH) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, Submission.idTooLong(options.id)));
    }
    DeliveryOptions delivery = new DeliveryOptions().addHeader(KEY_HEADER, key);
    if (options.id != null) {
      delivery.addHeader(ID_HEADER, options.id);
    }
    if (options.timeout != null) {
      delivery.addHeader(TIMEOUT_MS_HEADER, Long.toString(options.timeoutMs()));
    }
    if (options.order != null) {
      delivery.addHeader(ORDER_HEADER, Long.toString(options.order));
    }
    delivery.setSendTimeout(options.sendTimeoutMs());
    if (routing != null) {
      // The routing client checks the body itself (one walk, not two).
      long timeoutMs = options.timeoutMs();
      @SuppressWarnings("unchecked")
      Future<T> routed = (Future<T>) routing.submit(key, body, delivery, timeoutMs, delivery.getSendTimeout());
      return routed.transform(ar -> ar.succeeded() ? Future.succeededFuture(ar.result())
          : Future.failedFuture(toFerryException(ar.cause())));
    }
    // Checked here too, as the node will (ADR 0128): clustered, a body the event bus cannot write
    // to another node is not failed by the event bus, only never delivered, so the caller would
    // learn of it only at its send timeout, as an outcome unknown.
    String why = Submission.notJson(body);
    if (why != null) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, why));
    }
    Future<io.vertx.core.eventbus.Message<T>> reply;
    try {
      reply = vertx.eventBus().request(address, body, delivery);
    } catch (IllegalArgumentException noCodec) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT,
          "the body is not a JSON value: " + noCodec.getMessage()));
    } catch (IllegalStateException notJson) {
      if (!(body instanceof io.vertx.core.json.JsonObject || body instanceof io.vertx.core.json.JsonArray)) {
        throw notJson;
      }
      // A JsonObject or JsonArray holding a value of no JSON type (checked above, so put there by
      // another thread meanwhile): Vert.x copies the body as it is sent, and refuses ("Illegal type
      // in Json"). Nothing was sent; a Future, like every failure.
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT,
          "the body is not a JSON value: " + notJson.getMessage()));
    } catch (java.util.ConcurrentModificationException changing) {
      // Another thread changes the body as Vert.x copies it to send it: nothing was sent.
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, Submission.CHANGING));
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      // The Vert.x instance is closed (its event loops refuse work): nothing was sent. Answered
      // as a Future like every other failure, not thrown at a caller racing the shutdown.
      return Future.failedFuture(new FerryException(FerryError.CLOSED,
          "the Vert.x instance is closed, nothing was sent: " + closed.getMessage(), closed));
    }
    return reply.transform(ar -> ar.succeeded()
        ? Future.succeededFuture(ar.result().body())
        : Future.failedFuture(toFerryException(ar.cause())));
  }

  /** The {@link FerryException} for a failed request to a ferry (see the class comment). */
  public static FerryException toFerryException(Throwable failure) {
    if (failure instanceof FerryException e) {
      return e;
    }
    if (failure instanceof ReplyException re) {
      switch (re.failureType()) {
        case RECIPIENT_FAILURE: {
          FerryError kind = FerryError.ofCode(re.failureCode());
          if (kind != null) {
            return new FerryException(kind, re.getMessage());
          }
          break;
        }
        case NO_HANDLERS:
          return new FerryException(FerryError.CLOSED, "no ferry at the address: " + re.getMessage(), re);
        case ERROR:
          // Vert.x 5 raises ERROR only when the receiving node cannot decode the message, before
          // any consumer sees it: never applied, as the cluster router reads it too (ADR 0115).
          return new FerryException(FerryError.CLOSED,
              "the ferry's node could not read the message, never applied: " + re.getMessage(), re);
        case TIMEOUT:
          return new FerryException(FerryError.FAILED,
              "no reply in time; the input may or may not have been sent: " + re.getMessage(), re);
        default:
          break;
      }
    }
    return new FerryException(FerryError.FAILED, String.valueOf(failure.getMessage()), failure);
  }

  /** Per-submission options: all optional. Not thread-safe; build one per call or share unchanged. */
  public static final class SubmitOptions {
    private String id;
    private Duration timeout;
    private Long order;
    private Duration sendTimeout;

    /** Passed to the downstream with the input. */
    public SubmitOptions id(String id) {
      this.id = id;
      return this;
    }

    /**
     * The deadline for the input to leave in a batch ({@code timeout-ms}); after it, TIMEOUT.
     * Without a {@link #sendTimeout}, the reply is then awaited for this plus 30 s (the default
     * {@code callTimeoutMs}), never less than 30 s.
     *
     * @throws IllegalArgumentException if it is longer than the {@link #sendTimeout} set
     */
    public SubmitOptions timeout(Duration timeout) {
      this.timeout = fitting(wholeMs("timeout", timeout), sendTimeout);
      return this;
    }

    /** The {@code order} header, used when the ferry is configured with {@code "order": "header"}. */
    public SubmitOptions order(long order) {
      this.order = order;
      return this;
    }

    /**
     * How long to wait for the reply on the event bus (default 30 s, or {@code timeout} plus 30 s);
     * past it the Future fails with FAILED. Keep it above {@code timeout} plus the ferry's {@code
     * callTimeoutMs}.
     *
     * @throws IllegalArgumentException if it is shorter than the {@link #timeout} set
     */
    public SubmitOptions sendTimeout(Duration sendTimeout) {
      fitting(timeout, wholeMs("sendTimeout", sendTimeout));
      this.sendTimeout = sendTimeout;
      return this;
    }

    /**
     * A send timeout shorter than the deadline has the caller give up (FAILED, "may or may not
     * have been sent") while its input still waits and may yet be sent: a retry would apply it
     * twice. Refused when the second of the two is set, whichever it is.
     */
    private static Duration fitting(Duration timeout, Duration sendTimeout) {
      if (timeout != null && sendTimeout != null && sendTimeout.compareTo(timeout) < 0) {
        throw new IllegalArgumentException("sendTimeout (" + sendTimeout.toMillis() + " ms) is shorter than timeout ("
            + timeout.toMillis() + " ms): the caller would give up while its input may still be sent; keep"
            + " sendTimeout above timeout plus the ferry's callTimeoutMs");
      }
      return timeout;
    }

    /** The send timeout in force: the one set, else the default, raised to {@code timeout} + the default. */
    long sendTimeoutMs() {
      if (sendTimeout != null) {
        return Deadlines.ceilMillis(sendTimeout);
      }
      long dflt = DeliveryOptions.DEFAULT_TIMEOUT;
      return timeout == null ? dflt : Math.min(VerticleConfig.MAX_MS, timeoutMs() + dflt);
    }

    /** The {@code timeout-ms} header's value, or 0 without a timeout. */
    long timeoutMs() {
      return timeout == null ? 0 : Deadlines.ceilMillis(timeout);
    }

    /**
     * Checked when set, naming the option: a duration the header or the event bus cannot carry
     * (under 1 ms, or beyond what fits in nanoseconds) would otherwise fail later, elsewhere, or
     * as an ArithmeticException.
     */
    private static Duration wholeMs(String option, Duration d) {
      if (d != null && (d.compareTo(Duration.ofMillis(1)) < 0 || d.compareTo(Duration.ofMillis(VerticleConfig.MAX_MS)) > 0)) {
        throw new IllegalArgumentException(option + " must be at least 1 ms and at most " + VerticleConfig.MAX_MS + " ms, got " + d);
      }
      return d;
    }
  }
}
