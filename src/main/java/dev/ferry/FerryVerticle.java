package dev.ferry;

import dev.ferry.cluster.ClusterNode;
import dev.ferry.downstream.Downstream;
import dev.ferry.internal.Limits;
import dev.ferry.downstream.EventBusDownstream;
import dev.ferry.downstream.HttpDownstream;
import dev.ferry.verticle.BatchOutcomes;
import dev.ferry.verticle.Discarded;
import dev.ferry.verticle.Operations;
import dev.ferry.verticle.Submission;
import dev.ferry.verticle.VerticleConfig;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;

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
 * drainTimeoutMs}, what remains gets 503, and {@link #stop()} completes after the last call. The
 * consumer is unregistered only after the drain, so that late arrivals get a 503 from the ferry
 * rather than NO_HANDLERS (docs/adr/0021-unregister-after-drain.md).
 */
public class FerryVerticle extends VerticleBase {
  private static final System.Logger LOG = System.getLogger(FerryVerticle.class.getName());

  private VerticleConfig settings;
  private Downstream downstream;
  private Ferry<Submission, Object> ferry;
  private MessageConsumer<Object> submissions;
  private MessageConsumer<Object> metrics;
  private Operations operations;
  /** Set iff Vert.x is clustered: routes each input to its key's owner (docs/guide/clustering.md). */
  private ClusterNode cluster;
  /** This instance's claim on its address in this Vert.x (ADR 0054); null until claimed. */
  private String claim;

  /** Vert.x-wide map address -> claim of the FerryVerticle serving it. */
  private static final String ADDRESSES = "__ferry.addresses";

  @Override
  public Future<?> start() {
    if (context.getInstanceCount() > 1) {
      // Each instance would own a ferry of its own and the event bus would spread a key's inputs
      // over them: two calls in flight for one key. One instance owns every key.
      return Future.failedFuture(new InvalidConfigException("FerryVerticle deployment", List.of(
          "instances = " + context.getInstanceCount() + ": must be 1 (one verticle owns every key on a node)")));
    }
    try {
      settings = VerticleConfig.read(config());
    } catch (InvalidConfigException e) {
      return Future.failedFuture(e);
    }
    // Two verticles at one address would each own every key: the event bus would spread a key's
    // inputs over both (two calls in flight), and their meters share one name. Claimed before
    // anything is built, so a refused instance touches nothing of the one already serving.
    String mine = context.deploymentID() + "/" + System.identityHashCode(this);
    Object other = vertx.sharedData().getLocalMap(ADDRESSES).putIfAbsent(settings.address(), mine);
    if (other != null) {
      return Future.failedFuture(new InvalidConfigException("FerryVerticle deployment", List.of(
          "address = " + settings.address() + ": another FerryVerticle already serves it in this Vert.x instance"
              + " (one instance per address and node)")));
    }
    claim = mine;
    downstream = createDownstream();
    // Inputs are weighed (one JSON encoding each) only when a weight bound needs it; otherwise
    // each weighs 1 and queuedWeight counts inputs (docs/adr/0024).
    boolean weighed = settings.perKey().maxBatchWeight() != Limits.UNBOUNDED
        || settings.perKey().maxQueuedWeight() != Limits.UNBOUNDED;
    ferry = Ferry.perKey(context, settings.perKey(), (Submission s) -> s.key, weighed ? Submission::weight : null,
        settings.headerOrder() ? Comparator.comparingLong((Submission s) -> s.order) : null,
        this::callDownstream, BatchOutcomes::extract);
    if (vertx.isClustered()) {
      try {
        // Until it has joined the ownership view, the cluster layer holds what arrives.
        cluster = ClusterNode.create(vertx, context, settings.address(), ferry,
            settings.perKey().callTimeout().toMillis(), FerryVerticle::reply);
      } catch (RuntimeException unsupported) {
        // A cluster manager other than Hazelcast, say: release what was built, fail the deploy.
        ferry.close();
        downstream.close();
        release();
        return Future.failedFuture(unsupported);
      }
    }
    return Operations.start(vertx, settings, ferry).compose(ops -> {
      operations = ops;
      submissions = vertx.eventBus().consumer(settings.address(), this::onSubmit);
      answerDiscarded(submissions);
      metrics = vertx.eventBus().consumer(settings.metricsAddress(),
          m -> m.reply(ferry.metrics().toJson()));
      return Future.all(submissions.completion(), metrics.completion(),
          cluster == null ? Future.succeededFuture() : cluster.start());
    }).onFailure(e -> {
      // Vert.x does not call stop() after a failed start: release what was made.
      ferry.close();
      downstream.close();
      if (operations != null) {
        operations.stop();
      }
      if (cluster != null) {
        cluster.close();
      }
      release();
    });
  }

  private void release() {
    if (claim != null) {
      vertx.sharedData().getLocalMap(ADDRESSES).remove(settings.address(), claim);
      claim = null;
    }
  }

  private void answerDiscarded(MessageConsumer<Object> consumer) {
    // Clustered: not delivered, send again (another node serves); alone: this ferry is closed.
    Discarded.answer(consumer, cluster != null, "the ferry at " + settings.address());
  }

  @Override
  public Future<?> stop() {
    if (ferry == null) {
      return Future.succeededFuture();
    }
    if (operations != null) {
      operations.draining();
    }
    // Clustered, the public address is left first: other nodes take new inputs, and this node's
    // keys move to their new owners before the (then empty) drain (docs/adr/0052-graceful-leave.md).
    Future<?> left = cluster == null ? Future.succeededFuture() : submissions.unregister()
        .eventually(() -> cluster.leave(settings.drainTimeoutMs() + 2 * settings.perKey().callTimeout().toMillis()));
    return left.eventually(() -> ferry.drain(Duration.ofMillis(settings.drainTimeoutMs())))
        .eventually(() -> submissions == null ? Future.succeededFuture() : submissions.unregister())
        .eventually(() -> metrics == null ? Future.succeededFuture() : metrics.unregister())
        .eventually(() -> operations == null ? Future.succeededFuture() : operations.stop())
        .eventually(() -> cluster == null ? Future.succeededFuture() : cluster.close())
        .eventually(() -> downstream.close())
        .onComplete(ar -> release());
  }

  private Downstream createDownstream() {
    VerticleConfig.DownstreamConfig d = settings.downstream();
    if (d.http()) {
      // Room for every slot plus some direct calls of idle keys; more wait for a connection.
      int pool = settings.perKey().maxInFlightBatches() + 16;
      return new HttpDownstream(vertx, d.url(), d.timeoutMs(), pool);
    }
    return new EventBusDownstream(vertx, d.address(), settings.perKey().callTimeout().toMillis());
  }

  private Future<JsonArray> callDownstream(String key, List<Submission> batch) {
    return BatchOutcomes.call(downstream, key, batch).onFailure(cause -> {
      // Once per failed batch: the key, the size and the cause. Payloads only when the operator
      // asked for them (logPayloads), and then at debug level.
      LOG.log(Level.WARNING, "ferry: batch of {0} input(s) for key \"{1}\" failed: {2}",
          batch.size(), key, String.valueOf(cause));
      if (settings.ops().logPayloads()) {
        LOG.log(Level.DEBUG, "ferry: inputs of the failed batch for key \"{0}\": {1}",
            key, batch.stream().map(s -> String.valueOf(s.body)).toList());
      }
    });
  }

  private void onSubmit(Message<Object> message) {
    Submission input;
    try {
      input = Submission.parse(message.headers(), message.body());
    } catch (Submission.BadInput e) {
      message.fail(FerryError.BAD_INPUT.code(), e.getMessage());
      return;
    }
    if (cluster != null) {
      cluster.route(message, input);
      return;
    }
    Future<Object> outcome = input.timeoutMs > 0
        ? ferry.submit(input, Duration.ofMillis(input.timeoutMs))
        : ferry.submit(input);
    outcome.onComplete(ar -> reply(message, ar));
  }

  private static void reply(Message<Object> message, AsyncResult<Object> ar) {
    if (ar.succeeded()) {
      try {
        message.reply(ar.result());
      } catch (RuntimeException e) {
        // A value the event bus has no codec for (a huge JSON number, say): still one reply.
        message.fail(FerryError.FAILED.code(), "the outcome cannot travel on the event bus: " + e.getMessage());
      }
      return;
    }
    if (ar.cause() instanceof FerryException e) {
      message.fail(e.code(), e.getMessage());
    } else {
      message.fail(FerryError.FAILED.code(), String.valueOf(ar.cause()));
    }
  }
}
