package dev.ferry.verticle;

import dev.ferry.Ferry;
import dev.ferry.internal.LogText;
import dev.ferry.internal.Probe;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What a node offers to the people running it: meters, a health check (event bus, and HTTP with
 * Prometheus when asked), and the optional TCP event-bus bridge for non-JVM clients. Runs only on
 * the verticle's context: it is started and stopped there, its probe is called there, and its HTTP
 * server is created there, so a scrape reads the ferry's state on the ferry's own loop.
 *
 * <p>Micrometer, Prometheus, Web and the bridge are optional jars: their code lives in
 * {@link MeterSupport} and {@link BridgeSupport}, loaded only when {@link OptionalJars} found them,
 * so this class loads with vertx-core and vertx-health-check alone.
 */
public final class Operations {
  /** Consecutive failed batches after which the node reports itself degraded. */
  static final int DEGRADED_AFTER = 5;
  /**
   * The clock health reads ({@link System#nanoTime()}, the engine's too); a test may set another
   * (virtual time for the rule in time, ADR 0172) and puts this one back.
   */
  static volatile java.util.function.LongSupplier clock = System::nanoTime;
  private static final System.Logger LOG = System.getLogger(Operations.class.getName());

  private final Vertx vertx;
  private final VerticleConfig settings;
  private final HealthChecks health;
  /** The node id put in each answer when clustered (docs/operations.md#health), else null. */
  private final String node;
  private final List<Runnable> meters = new ArrayList<>(2);
  private final List<Supplier<Future<?>>> stops = new ArrayList<>();
  /**
   * starting (until the verticle's start completed: its submit consumer registered, clustered its
   * join done), up, draining, closed.
   */
  private String phase = "starting";
  /** The calls health judges the downstream by (ADRs 0060, 0164, 0172); on the verticle's context. */
  private final HealthWatch calls;
  /** What the submit address's consumers hand their messages to (see {@link #entry()}). */
  private Handler<Message<Object>> entry;
  /** The bridge, or null. */
  private BridgeSupport bridge;
  /** Publishes to the submit or node address dropped (see {@link #droppedPublish}). */
  private long publishesDropped;
  /** The addresses a dropped publish was already logged for: each is logged once. */
  private final Set<String> publishLogged = new HashSet<>(2);
  /** The port the monitoring endpoint listens on (the one the system chose for port 0), or -1. */
  private int monitoringPort = -1;

  private Operations(Vertx vertx, VerticleConfig settings, String node) {
    this.vertx = vertx;
    this.settings = settings;
    this.node = node;
    this.health = HealthChecks.create(vertx);
    this.calls = new HealthWatch(settings.perKey().callTimeout().toNanos());
  }

  /**
   * Starts everything the config asks for; fails if an endpoint cannot listen. {@code submitEntry}
   * handles the bridge's inputs of the submit address when clustered (they enter at this node);
   * {@code node} is this node's id when clustered, put in the health data, else null.
   */
  public static Future<Operations> start(Vertx vertx, VerticleConfig settings, Ferry<?, ?> ferry,
      Handler<Message<Object>> submitEntry, String node) {
    Operations ops = new Operations(vertx, settings, node);
    ops.entry = submitEntry;
    // A port already taken fails the start: undo whatever did start.
    Future<Void> begun;
    try {
      begun = ops.begin(ferry, submitEntry);
    } catch (RuntimeException e) { // a named metrics registry that does not exist
      begun = Future.failedFuture(e);
    }
    return begun.map(ops).recover(e -> ops.stop().transform(v -> Future.failedFuture(e)));
  }

  private Future<Void> begin(Ferry<?, ?> ferry, Handler<Message<Object>> submitEntry) {
    String name = settings.address();
    if (ferry instanceof Probe.Observable observable) {
      Runnable stopObserving = observable.observe(new Probe() {
        @Override
        public void batchStarted(boolean direct, int size, long weight, long[] waitsNanos) {
          // The inputs' waits matter only for a call that starts on an empty wire during a stall:
          // were they waiting when it emptied (ADR 0172)?
          long longest = 0;
          if (calls.needsWaits()) {
            for (long w : waitsNanos) {
              longest = Math.max(longest, w);
            }
          }
          calls.started(clock.getAsLong(), longest);
        }

        // A failed call counts when its callers are failed: at its end, or at callTimeoutMs for a
        // call still in flight then, which may end only at the downstream's own, longer timeout
        // (or never). Counted at its end, a downstream that hangs read UP meanwhile (ADR 0164).
        @Override
        public void batchFailed(Object key, List<?> inputs, Throwable cause) {
          calls.failed(clock.getAsLong());
        }

        // A call's end only ends the streak when it went well: a failed one was counted above,
        // at its timeout or as it ended.
        @Override
        public void batchFinished(long latencyNanos, boolean failed) {
          calls.ended(clock.getAsLong(), !failed);
        }

        // A call past its timeout held the wire while inputs waited, until this transition: the
        // stall is judged then too, not only when someone asks (ADR 0171).
        @Override
        public void heldUp() {
          calls.heldUp(clock.getAsLong());
        }
      });
      stops.add(() -> {
        stopObserving.run();
        return Future.succeededFuture();
      });
    }
    health.register("ferry", promise -> promise.complete(status(ferry)));

    // The registry the application named, else Vert.x's own when metrics are on; a private
    // Prometheus registry when only our endpoint asks for one. Without Micrometer on the class
    // path (and nothing in the config asking for it) there are no meters.
    Object scraped = null;
    if (OptionalJars.metricsAvailable(OptionalJars::present)) {
      scraped = MeterSupport.bind(ferry, name, settings.ops().metricsRegistry(),
          settings.ops().monitoring() != null, meters);
    }

    MessageConsumer<Object> healthConsumer = vertx.eventBus().consumer(settings.ops().healthAddress(),
        msg -> health.checkStatus().onComplete(ar -> msg.reply(ar.succeeded()
            ? ar.result().toJson()
            : named(new JsonObject().put("status", "DOWN").put("error", String.valueOf(ar.cause())), node))));
    stops.add(healthConsumer::unregister);
    List<Future<?>> started = new ArrayList<>();
    started.add(healthConsumer.completion());
    if (settings.ops().monitoring() != null) {
      started.add(MeterSupport.listen(vertx, settings.ops().monitoring(), scraped, health)
          .recover(e -> Future.failedFuture(cannotListen("monitoring", settings.ops().monitoring(), e)))
          .onSuccess(server -> {
            stops.add(server::close);
            monitoringPort = server.actualPort();
            // Said once, with the port bound: with port 0 there is no other way to learn it.
            LOG.log(Level.INFO, "ferry at \"{0}\": monitoring on http://{1}:{2,number,#} (/metrics, /health)",
                LogText.escape(name), settings.ops().monitoring().host(), monitoringPort);
          }));
    }
    if (settings.ops().bridge() != null) {
      if (settings.ops().bridge().endpoint().port() == 0) {
        LOG.log(Level.WARNING, "ferry at \"{0}\": bridge.port 0 binds a port the system chooses, and Vert.x's TCP"
            + " bridge does not report which: clients cannot find it; give a port", LogText.escape(name));
      }
      BridgeSupport bridge = new BridgeSupport(vertx, settings, settings.ops().bridge(), submitEntry,
          settings.drainTimeoutMs() + 2 * settings.perKey().callTimeout().toMillis());
      entry = bridge.entry();
      this.bridge = bridge;
      started.add(bridge.listen()
          .recover(e -> Future.failedFuture(cannotListen("bridge", settings.ops().bridge().endpoint(), e)))
          .onSuccess(stops::add));
    }
    return Future.all(started).mapEmpty();
  }

  /**
   * A listen failure that names its field: Netty's "Address already in use" or "Failed to resolve"
   * alone did not say whether the monitoring endpoint or the bridge was to blame.
   */
  private static IllegalStateException cannotListen(String field, OpsConfig.Endpoint at, Throwable cause) {
    return new IllegalStateException(field + " (" + at.host() + ":" + at.port() + "): cannot listen: " + cause, cause);
  }

  /** The port the monitoring endpoint listens on (the one the system chose for port 0), or -1 without one. */
  public int monitoringPort() {
    return monitoringPort;
  }

  /**
   * The handler for the public consumer of the submit address: the verticle's own, except that
   * with a clustered bridge it also counts the bridge's inputs answered, since Vert.x hands the
   * bridge's local sends to that consumer too (BridgeSupport#entry).
   */
  public Handler<Message<Object>> entry() {
    return entry;
  }

  /**
   * The public consumer of the submit address discarded {@code m} (it was being unregistered) and
   * answered it: if it was the bridge's, the bridge counts it answered. Any thread.
   */
  public void discarded(Message<Object> m) {
    BridgeSupport b = bridge;
    if (b != null) {
      b.discarded(m);
    }
  }

  /**
   * True when {@code m} is a publish, which is no submission: clustered, every node's consumer
   * would take it and apply it once per node, and it has no reply address, so nobody could be
   * answered. It is dropped unanswered, counted ({@code publishesDropped} in the health data) and
   * logged at WARN once per address. On the verticle's context.
   */
  boolean droppedPublish(Message<?> m) {
    if (m.isSend()) {
      return false;
    }
    publishesDropped++;
    if (publishLogged.add(m.address())) {
      LOG.log(Level.WARNING, "ferry: a publish to \"{0}\" is not a submission and was dropped"
          + " (send or request instead); further ones are only counted (publishesDropped in the health data)",
          LogText.escape(m.address()));
    }
    return true;
  }

  /**
   * Failed batches in a row after one more call ended. It stops at the int's top: a downstream
   * down long enough under load (2^31 failed calls: weeks at a thousand a second) would otherwise
   * wrap it negative and turn the node's health UP while every call fails.
   */
  static int streak(int inARow, boolean failed) {
    return !failed ? 0 : inARow == Integer.MAX_VALUE ? inARow : inARow + 1;
  }

  /**
   * {@code answer} with field {@code node} set to {@code node} when clustered: every node serves the
   * same health and metrics addresses, and an answer must say whose figures it holds. Standalone
   * ({@code node} null) the field is left out: there is one node, and no id to give.
   */
  public static JsonObject named(JsonObject answer, String node) {
    return node == null ? answer : answer.put("node", node);
  }

  /** This node's health; on the verticle's context. */
  Status status(Ferry<?, ?> ferry) {
    JsonObject data = named(new JsonObject().put("address", settings.address()), node);
    if (publishesDropped > 0) {
      data.put("publishesDropped", publishesDropped);
    }
    // The engine's count (ADR 0170), in every state: a drain held by a hung call is where an
    // operator asks (review AQ), and calls given up at the owner's close leave it at 0.
    // One snapshot for the whole answer: on this context nothing moves while it is made.
    dev.ferry.FerryMetrics m = ferry.metrics();
    if (m.callsPastTimeout() > 0) {
      data.put("callsPastTimeout", m.callsPastTimeout());
    }
    if (!"up".equals(phase)) {
      return Status.KO(data.put("state", phase));
    }
    long now = clock.getAsLong();
    // Whether a call past its timeout holds the wire with inputs waiting is asked only at the end
    // of a whole stall.
    if (calls.degraded(now, () -> m.callsPastTimeout() > 0 && m.queuedInputs() > 0)) {
      return Status.KO(data.put("state", "degraded").put("failedBatchesInARow", calls.inARow())
          .put("failingForMs", java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(calls.stalledNanos(now))));
    }
    return Status.OK(data.put("state", "up").put("metrics", m.toJson()));
  }

  /** The verticle's start completed: the node takes and serves inputs. */
  public void started() {
    if ("starting".equals(phase)) {
      phase = "up";
    }
  }

  /** The node stopped accepting and is sending what waits. */
  public void draining() {
    phase = "draining";
  }

  /** Stops the endpoints and removes the meters; health reports closed until then. */
  public Future<Void> stop() {
    phase = "closed";
    monitoringPort = -1;
    // A binding whose registry throws as it removes a meter (a listener) still removed them all
    // (FerryMeterBinder#close); its throw must not keep the endpoints below open: reported once
    // everything is stopped.
    RuntimeException unbound = null;
    for (Runnable meter : meters) {
      try {
        meter.run();
      } catch (RuntimeException e) {
        if (unbound == null) {
          unbound = e;
        } else {
          unbound.addSuppressed(e);
        }
      }
    }
    meters.clear();
    List<Future<?>> stopped = new ArrayList<>();
    stops.forEach(stop -> stopped.add(stop.get()));
    stops.clear();
    RuntimeException failure = unbound;
    return Future.join(stopped).<Void>mapEmpty()
        .compose(v -> failure == null ? Future.succeededFuture() : Future.failedFuture(failure));
  }
}
