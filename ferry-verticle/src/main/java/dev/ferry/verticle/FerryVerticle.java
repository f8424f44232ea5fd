package dev.ferry.verticle;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.InvalidConfigException;
import dev.ferry.cluster.ClusterNode;
import dev.ferry.downstream.Downstream;
import dev.ferry.internal.LogText;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.internal.Probe;
import dev.ferry.internal.VertxLoop;
import dev.ferry.downstream.EventBusDownstream;
import dev.ferry.downstream.HttpDownstream;
import dev.ferry.internal.Limits;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A per-key ferry on the event bus: inputs arrive at {@code address} (header {@code key}), leave in
 * per-key batches to the configured downstream, and each caller is answered with its own outcome
 * or a failure code (see {@link FerryError#code()}). {@code metricsAddress} answers with a
 * {@link FerryMetrics} snapshot as JSON.
 *
 * <p>One instance owns every lane on its own event loop: the ferry is bound to this verticle's
 * context, and both consumers are registered from it, so all state is touched from one thread.
 *
 * <p>Undeploying drains: new submissions get 503, waiting inputs are still sent for up to {@code
 * drainTimeoutMs}, what remains gets 503, and {@link #stop()} completes after the last call in
 * flight ended (each within its timeout: undeploy takes at most {@code drainTimeoutMs} plus the
 * call timeout, and never cuts a call, ADR 0064). The
 * consumer is unregistered only after the drain, so that late arrivals get a 503 from the ferry
 * rather than NO_HANDLERS (docs/adr/0021-unregister-after-drain.md).
 */
public class FerryVerticle extends VerticleBase {
  private static final System.Logger LOG = System.getLogger(FerryVerticle.class.getName());

  private VerticleConfig settings;
  private Downstream downstream;
  private PerKeyFerry<String, Submission, JsonArray, Object> ferry;
  /** Counts an input answered 504 after its batch left its lane (ADR 0062): one object, not one per batch. */
  private Runnable countTimedOut;
  private MessageConsumer<Object> submissions;
  private MessageConsumer<Object> metrics;
  private Operations operations;
  /** Replies with {@link LocalCodec} (no copy of the outcome); null when Vert.x is clustered. */
  private DeliveryOptions localReply;
  /** Set iff Vert.x is clustered: routes each input to its key's owner (docs/guide/clustering.md). */
  private ClusterNode cluster;
  /**
   * {@code cluster}'s node id, named in the health and metrics answers (null standalone); volatile:
   * {@link #healthProcedure} may read it on any thread once the event loop is gone.
   */
  private volatile String node;
  /** This instance's claim on its address in this Vert.x (ADR 0054); null until claimed. */
  private String claim;
  /** The leave that {@link #stop()} began (it runs once, however often it is asked); null before. */
  private Future<?> stopped;

  /** The most HTTP connections to the downstream: the TCP ports one client address can use. */
  static final int MAX_HTTP_CONNECTIONS = 65_535;

  /** Vert.x-wide map address -> claim of the FerryVerticle with an endpoint there. */
  private static final String ADDRESSES = "__ferry.addresses";
  /** Vert.x-wide map [host]:port -> claim of the FerryVerticle whose monitoring or bridge listens there. */
  private static final String PORTS = "__ferry.ports";
  /** Given to the constructor, or null: then the deployment's JSON config is read. */
  private final FerryVerticleOptions options;

  /** Reads its options from the deployment's config (deployment by name, the launcher's -conf). */
  public FerryVerticle() {
    this.options = null;
  }

  /** Takes its options from {@code options} (a copy); the deployment's config is then ignored. */
  public FerryVerticle(FerryVerticleOptions options) {
    this.options = new FerryVerticleOptions(options);
  }

  /**
   * Refuses a second deployment of this same instance while it is deployed: Vert.x would hand it
   * that deployment's context before start() could refuse it, and the running ferry would then
   * answer to another deployment's ID (an undeploy by {@link #deploymentID()} fails) and run its
   * health procedure on another event loop.
   */
  @Override
  public void init(io.vertx.core.Vertx vertx, Context context) {
    if (claim != null) {
      throw new IllegalStateException("this FerryVerticle instance is already deployed (" + deploymentID()
          + "): deploy a new instance");
    }
    super.init(vertx, context);
  }

  @Override
  public Future<?> start() {
    // This deployment's stop() runs once; an instance undeployed may be deployed again (the
    // guide), and that deployment's stop() must run too.
    stopped = null;
    // What the previous deployment built (stopped, closed) is not this one's: left in place, the
    // health procedure answered with its "closed" until this start built new Operations.
    operations = null;
    ferry = null;
    downstream = null;
    submissions = null;
    metrics = null;
    cluster = null;
    node = null;
    localReply = null;
    if (context.getInstanceCount() > 1) {
      // Each instance would own a ferry of its own and the event bus would spread a key's inputs
      // over them: two calls in flight for one key. One instance owns every key.
      return Future.failedFuture(new InvalidConfigException("FerryVerticle deployment", List.of(
          "instances = " + context.getInstanceCount() + ": must be 1 (one verticle owns every key on a node)")));
    }
    if (!context.isEventLoopContext()) {
      // A worker (or virtual-thread) deployment runs handlers on pool threads: the lanes' state,
      // kept without locks, must stay on one event loop. Refused by the deployment's own option,
      // not deep in the engine with a context's internal class name.
      return Future.failedFuture(new InvalidConfigException("FerryVerticle deployment", List.of(
          "threadingModel = " + context.threadingModel()
              + ": must be EVENT_LOOP (the default; the ferry's lanes live on one event loop, without locks)")));
    }
    try {
      settings = VerticleConfig.read(options != null ? options.toJson() : config());
    } catch (InvalidConfigException e) {
      return Future.failedFuture(e);
    }
    List<String> missingJars = OptionalJars.missing(settings, vertx.isClustered(), OptionalJars::present);
    if (!missingJars.isEmpty()) {
      return Future.failedFuture(new InvalidConfigException("FerryVerticle deployment", missingJars));
    }
    // Two verticles at one address would each own every key: the event bus would spread a key's
    // inputs over both (two calls in flight), and their meters share one name. Their metrics or
    // health endpoints at one address would answer requests in turn, each with its own ferry's
    // figures (two ferries left at the default ferry.metrics, say); one's endpoint at the other's
    // address would answer inputs with a metrics snapshot. So all three are claimed, before
    // anything is built, so that a refused instance touches nothing of the one already serving.
    String mine = context.deploymentID() + "/" + System.identityHashCode(this);
    List<String> taken = claim(mine);
    if (!taken.isEmpty()) {
      return Future.failedFuture(new InvalidConfigException("FerryVerticle deployment", taken));
    }
    claim = mine;
    // A vertx.close() while this start is under way would neither wait for it nor call stop():
    // clustered, the node would vanish with what other nodes sent it since it registered (held
    // until it joins) unanswered. So the close waits here until the start ended, and a ferry that
    // started leaves as an undeploy makes it leave (ADR 0155). Taken before anything is built: a
    // close that began already (before this start ran, or while it ran on another thread) would
    // not wait, and nothing may then be registered on a Vert.x going away.
    Promise<Void> ended = Promise.promise();
    if (!dev.ferry.cluster.ClusterAccess.holdCloseDuringStart(vertx, ended.future(), () -> {
      Promise<Object> left = Promise.promise();
      context.runOnContext(v -> ended.future().transform(ar -> ar.succeeded() ? stop() : Future.succeededFuture())
          .onComplete(ar -> left.complete()));
      return left.future();
    })) {
      release();
      return Future.failedFuture(new IllegalStateException("Vert.x is closing: the FerryVerticle did not start"));
    }
    Future<?> started;
    try {
      started = startClaimed();
    } catch (RuntimeException | Error e) {
      // Vert.x does not call stop() after a failed start: whatever threw, the claim and what was
      // built are released here, or the address stays refused until Vert.x closes.
      abandon();
      ended.fail(e);
      return Future.failedFuture(e);
    }
    started.<Void>mapEmpty().onComplete(ended);
    return started;
  }

  /** The rest of {@link #start()}, once the address is claimed; may throw (see the caller). */
  private Future<?> startClaimed() {
    // Unclustered, every caller and consumer is in this JVM: JSON crosses the bus uncopied.
    localReply = vertx.isClustered() ? null : LocalCodec.register(vertx);
    downstream = createDownstream();
    // Inputs are weighed (one JSON encoding each) only when a weight bound needs it; otherwise
    // each weighs 1 and queuedWeight counts inputs (docs/adr/0024).
    boolean weighed = settings.perKey().maxBatchWeight() != Limits.UNBOUNDED
        || settings.perKey().maxQueuedWeight() != Limits.UNBOUNDED;
    // Built directly rather than through Ferry.perKey: onSubmit answers through the ferry's
    // handle-based submit, with no Future per input (ADR 0097).
    ferry = new PerKeyFerry<>(new VertxLoop(context), settings.perKey(), (Submission s) -> s.key,
        weighed ? Submission::weight : null,
        settings.headerOrder() ? Submission.HEADER_ORDER : null,
        this::callDownstream, BatchOutcomes::extract);
    ferry.observe(new FailedBatchLog());
    countTimedOut = ferry::countTimedOutAfterLeaving;
    if (vertx.isClustered()) {
      try {
        // Until it has joined the ownership view, the cluster layer holds what arrives.
        cluster = ClusterNode.create(vertx, context, settings.address(), ferry,
            settings.perKey().callTimeout().toMillis(), settings.drainTimeoutMs(), settings.perKey().maxQueueing(),
            FerryVerticle::reply);
        node = cluster.self();
      } catch (RuntimeException unsupported) {
        // A cluster manager other than Hazelcast, say: release what was built, fail the deploy.
        abandon();
        return Future.failedFuture(unsupported);
      }
    }
    // TLS files are read by the client only at its first connection: read here, so that one that
    // cannot be loaded fails the deploy, naming its field, rather than every batch with 502.
    Future<List<String>> tlsFiles = settings.downstream().http()
        ? settings.downstream().httpSettings().unreadableTlsFiles(vertx) : Future.succeededFuture(List.of());
    return tlsFiles.compose(bad -> bad.isEmpty() ? Future.succeededFuture()
        : Future.failedFuture(new InvalidConfigException("FerryVerticle config", bad)))
        .compose(v -> Operations.start(vertx, settings, ferry, this::onSubmit, node())).compose(ops -> {
      operations = ops;
      if (cluster != null) {
        cluster.dropPublishes(ops::droppedPublish);
      }
      submissions = vertx.eventBus().consumer(settings.address(), ops.entry());
      answerDiscarded(submissions);
      metrics = vertx.eventBus().consumer(settings.metricsAddress(),
          m -> m.reply(Operations.named(ferry.metrics().toJson(), node())));
      return Future.all(submissions.completion(), metrics.completion(),
          cluster == null ? Future.succeededFuture() : cluster.start());
    }).onSuccess(v -> operations.started()).onFailure(e -> abandon());
  }

  /** This node's id when clustered (the one the cluster routes by), else null. */
  private String node() {
    return node;
  }

  /** Releases whatever a failed start built (Vert.x does not call stop() after one), claim last. */
  private void abandon() {
    if (ferry != null) {
      ferry.close();
    }
    if (downstream != null) {
      downstream.close();
    }
    if (operations != null) {
      operations.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
    release();
  }

  /** This instance's endpoint addresses by field name: the ones {@link #claim} takes. */
  private Map<String, String> endpoints() {
    return Map.of("address", settings.address(), "metricsAddress", settings.metricsAddress(),
        "healthAddress", settings.ops().healthAddress());
  }

  /**
   * This instance's listening ports by field name ({@code monitoring}, {@code bridge}), as
   * {@code [host]:port}: the ones {@link #claim} takes. Port 0 is left out: each server asking for
   * it gets a port of its own.
   */
  private Map<String, String> ports() {
    Map<String, String> out = new LinkedHashMap<>();
    OpsConfig ops = settings.ops();
    if (ops.monitoring() != null && ops.monitoring().port() > 0) {
      out.put("monitoring", "[" + ops.monitoring().host() + "]:" + ops.monitoring().port());
    }
    if (ops.bridge() != null && ops.bridge().endpoint().port() > 0) {
      out.put("bridge", "[" + ops.bridge().endpoint().host() + "]:" + ops.bridge().endpoint().port());
    }
    return out;
  }

  /**
   * Claims every endpoint address and listening port for {@code mine}, or none: returns a
   * violation for each one another FerryVerticle of this Vert.x holds (then those claimed here are
   * given back). Ports are claimed because Vert.x does not refuse a second server of one instance
   * at a host and port in use: it shares them, handing each connection to one server or the other
   * in turn, so half the scrapes would read the other ferry.
   */
  private List<String> claim(String mine) {
    io.vertx.core.shareddata.LocalMap<String, Object> addresses = vertx.sharedData().getLocalMap(ADDRESSES);
    io.vertx.core.shareddata.LocalMap<String, Object> ports = vertx.sharedData().getLocalMap(PORTS);
    List<String> taken = new java.util.ArrayList<>();
    for (String field : List.of("address", "metricsAddress", "healthAddress")) {
      String address = endpoints().get(field);
      if (addresses.putIfAbsent(address, mine) != null) {
        taken.add(field + " = " + address + ("address".equals(field)
            ? ": another FerryVerticle already serves it in this Vert.x instance (one instance per address and node)"
            : ": another FerryVerticle already uses it for one of its endpoints in this Vert.x instance"
                + " (each ferry needs its own address, metricsAddress and healthAddress)"));
      }
    }
    ports().forEach((field, port) -> {
      if (ports.putIfAbsent(port, mine) != null) {
        taken.add(field + " = " + port + ": another FerryVerticle of this Vert.x instance listens there (Vert.x would"
            + " share the port, handing each connection to either ferry in turn): give each ferry its own port");
      }
    });
    if (!taken.isEmpty()) {
      endpoints().values().forEach(address -> addresses.remove(address, mine));
      ports().values().forEach(port -> ports.remove(port, mine));
    }
    return taken;
  }

  private void release() {
    if (claim != null) {
      io.vertx.core.shareddata.LocalMap<String, Object> addresses = vertx.sharedData().getLocalMap(ADDRESSES);
      endpoints().values().forEach(address -> addresses.remove(address, claim));
      io.vertx.core.shareddata.LocalMap<String, Object> ports = vertx.sharedData().getLocalMap(PORTS);
      ports().values().forEach(port -> ports.remove(port, claim));
      claim = null;
    }
  }

  private void answerDiscarded(MessageConsumer<Object> consumer) {
    // Clustered: not delivered, send again (another node serves); alone: this ferry is closed.
    // The bridge's inputs among them are answered too: the bridge counts them (BridgeSupport).
    Discarded.answer(consumer, cluster != null, "the ferry at " + settings.address(), operations::discarded);
  }

  @Override
  public Future<?> stop() {
    if (stopped == null) {
      stopped = leaveAndDrain();
    }
    return stopped;
  }

  /** {@link #stop()}'s one run: a vertx.close() during the start may have begun it already. */
  private Future<?> leaveAndDrain() {
    if (ferry == null) {
      return Future.succeededFuture();
    }
    if (operations != null) {
      operations.draining();
    }
    // A vertx.close() that begins now would not wait for this undeploy: held until it is over
    // (this context closed, after stop()), so that callers of calls in flight still get their
    // reply and the undeploy completes before the event loops go (ADR 0064).
    dev.ferry.cluster.ClusterAccess.holdCloseUntilClosed(vertx, context);
    // Clustered, the node leaves the view first and keeps answering or forwarding whatever reaches
    // it until every other node routes without it; its keys move to their new owners before the
    // (then empty) drain, and it stops consuming last (docs/adr/0056-a-leave-that-fails-nobody.md).
    // With a bridge, the public consumer (out of the cluster's registrations from the leave's
    // start) stays until the bridge closed: Vert.x hands the bridge's local sends to it as to the
    // bridge's own consumer, and one unregistered under them answers NO_HANDLERS ("resend", out of
    // the client's order; ADR 0094).
    boolean bridged = cluster != null && settings.ops().bridge() != null;
    Supplier<Future<?>> stopPublic = bridged ? Future::succeededFuture : submissions::unregister;
    Future<?> left = cluster == null ? Future.succeededFuture()
        : cluster.leave(settings.drainTimeoutMs() + 2 * settings.perKey().callTimeout().toMillis(), stopPublic);
    return left.eventually(this::drain)
        .eventually(() -> submissions == null || bridged ? Future.succeededFuture() : submissions.unregister())
        .eventually(() -> metrics == null ? Future.succeededFuture() : metrics.unregister())
        .eventually(() -> operations == null ? Future.succeededFuture() : operations.stop())
        .eventually(() -> submissions != null && bridged ? submissions.unregister() : Future.succeededFuture())
        .eventually(() -> cluster == null ? Future.succeededFuture() : cluster.close())
        .eventually(() -> downstream.close())
        .onComplete(ar -> release());
  }

  /**
   * Sends what waits for up to {@code drainTimeoutMs}; then closes the ferry: what still waits gets
   * 503, and calls still in flight run on until they end, each within its own timeout (the
   * downstream's, {@code callTimeoutMs} by default), so that their callers get their real outcome
   * and a redeployed verticle never sends a key's next call while this one's is still running
   * (docs/adr/0064-undeploy-waits-for-calls-in-flight.md). The downstream is closed only after the
   * last call ended, with nothing left open.
   */
  private Future<Void> drain() {
    return ferry.drain(Duration.ofMillis(settings.drainTimeoutMs()));
  }

  /**
   * The port the monitoring endpoint listens on, once the deployment succeeded: the configured
   * {@code monitoring.port}, or the one the system chose for port 0 (also logged at start). -1
   * without monitoring, before the start completed, or after the undeploy. Read it on this
   * verticle's context or after the deployment's Future completed.
   */
  public int monitoringPort() {
    Operations ops = operations;
    return ops == null ? -1 : ops.monitoringPort();
  }

  /**
   * This node's health check as a procedure for the application's own {@link HealthChecks}:
   * register it once the deployment succeeded, {@code checks.register("ferry",
   * verticle.healthProcedure())}. OK while up; KO before the start completed, while draining, once
   * closed, or while the downstream is in trouble (repeated failed batches, or a stall: ADR 0172).
   * Callable from any thread: the status is read on this verticle's context.
   */
  public Handler<Promise<Status>> healthProcedure() {
    return promise -> {
      Context owner = context;
      if (owner == null) {
        promise.tryComplete(Status.KO(new JsonObject().put("state", "not deployed")));
        return;
      }
      try {
        owner.runOnContext(v -> promise.tryComplete(operations == null
            ? Status.KO(Operations.named(new JsonObject().put("state", "starting"), node()))
            : operations.status(ferry)));
      } catch (java.util.concurrent.RejectedExecutionException gone) {
        // The node's Vert.x is closed, its event loop gone: so is the ferry (it undeployed with it).
        promise.tryComplete(Status.KO(Operations.named(new JsonObject().put("state", "closed"), node())));
      }
    };
  }

  private Downstream createDownstream() {
    VerticleConfig.DownstreamConfig d = settings.downstream();
    if (d.http()) {
      // Room for every call Ferry may have out: the limit's ceiling (adaptive), or the batch slots
      // plus as many direct calls (fixed slots). Connections open lazily, so a high ceiling costs nothing.
      dev.ferry.PerKeyConfig perKey = settings.perKey();
      long calls = perKey.dispatch() == dev.ferry.Dispatch.FIXED_SLOTS ? 2L * perKey.maxInFlightBatches()
          : perKey.pinnedLimit() > 0 ? perKey.pinnedLimit() : perKey.maxInFlightBatches();
      // Vert.x sizes a slot array by the pool's maximum up front: a maxInFlightBatches near
      // Integer.MAX_VALUE failed every batch (no array that large). One client address cannot
      // hold more connections to one host and port than there are ports, so none is lost.
      int pool = (int) Math.min(calls, MAX_HTTP_CONNECTIONS);
      HttpSettings http = d.httpSettings();
      return new HttpDownstream(vertx, d.url(), d.timeoutMs(), http.maxResponseBytes(), http.clientOptions(),
          http.headers(), pool, http.keepAliveTimeoutMs());
    }
    // Unclustered, every consumer is in this JVM: the batch crosses the bus without being copied.
    return new EventBusDownstream(vertx, d.address(), settings.perKey().callTimeout().toMillis(),
        localReply == null ? null : LocalCodec.NAME);
  }

  private Future<JsonArray> callDownstream(String key, List<Submission> batch) {
    return BatchOutcomes.call(vertx, downstream, key, batch, countTimedOut);
  }

  /**
   * Logs each failed batch once, when the ferry fails its callers: a call that failed, or one past
   * {@code callTimeoutMs} (whose callers got 502 then, even if the call answers well later: logged
   * from the downstream's failure alone, such a batch was never logged).
   */
  private final class FailedBatchLog implements Probe {
    @Override
    public void batchFailed(Object key, List<?> inputs, Throwable cause) {
      // The key, the size and the cause. Payloads only when the operator asked for them
      // (logPayloads), and then at debug level. Keys, causes (a downstream's failure text) and
      // payloads come from outside: escaped, so that none can break the line and forge a record
      // (LogText).
      LOG.log(Level.WARNING, "ferry: batch of {0} input(s) for key \"{1}\" failed: {2}",
          inputs.size(), LogText.escape(key), LogText.escape(cause));
      if (settings.ops().logPayloads()) {
        LOG.log(Level.DEBUG, "ferry: inputs of the failed batch for key \"{0}\": {1}",
            LogText.escape(key),
            LogText.escape(inputs.stream().map(s -> String.valueOf(((Submission) s).body)).toList()));
      }
    }
  }

  private void onSubmit(Message<Object> message) {
    if (operations.droppedPublish(message)) {
      return; // a publish is no submission: once per node clustered, and nobody to answer
    }
    Submission input;
    try {
      // A client's: the nodes' own headers are refused here, clustered or not (ADR 0103).
      input = Submission.parseFromClient(message.headers(), message.body());
    } catch (Submission.BadInput e) {
      message.fail(FerryError.BAD_INPUT.code(), e.getMessage());
      return;
    }
    if (cluster != null) {
      cluster.route(message, input);
      return;
    }
    // The Submission is the caller's answer handle: the ferry completes it on this loop, once, and
    // it replies; no Future or listener per input (ADR 0097).
    input.answerTo((value, failure) -> {
      if (failure == null && (value instanceof JsonObject || value instanceof JsonArray)) {
        // The caller is in this JVM and the outcome is its alone: hand it over uncopied. Other
        // values are immutable, and the default codecs never copy them.
        message.reply(value, localReply);
      } else {
        reply(message, value, failure);
      }
    });
    ferry.submit(input, TimeUnit.MILLISECONDS.toNanos(input.timeoutMs), input);
  }

  private static void reply(Message<Object> message, AsyncResult<Object> ar) {
    reply(message, ar.succeeded() ? ar.result() : null, ar.succeeded() ? null : ar.cause());
  }

  private static void reply(Message<Object> message, Object value, Throwable failure) {
    if (failure == null) {
      try {
        message.reply(value);
      } catch (RuntimeException e) {
        // A value the event bus has no codec for (a huge JSON number, say): still one reply.
        message.fail(FerryError.FAILED.code(), "the outcome cannot travel on the event bus: "
            + dev.ferry.internal.LogText.message(e));
      }
      return;
    }
    if (failure instanceof FerryException e) {
      message.fail(e.code(), e.getMessage());
    } else {
      message.fail(FerryError.FAILED.code(), String.valueOf(failure));
    }
  }
}
