package dev.ferry.verticle;

import dev.ferry.Ferry;
import dev.ferry.internal.Probe;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.bridge.BridgeOptions;
import io.vertx.ext.bridge.PermittedOptions;
import io.vertx.ext.eventbus.bridge.tcp.TcpEventBusBridge;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.healthchecks.HealthCheckHandler;
import io.vertx.micrometer.PrometheusScrapingHandler;
import io.vertx.micrometer.backends.BackendRegistries;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * What a node offers to the people running it: meters, a health check (event bus, and HTTP with
 * Prometheus when asked), and the optional TCP event-bus bridge for non-JVM clients. Runs only on
 * the verticle's context: it is started and stopped there, its probe is called there, and its HTTP
 * server is created there, so a scrape reads the ferry's state on the ferry's own loop.
 */
public final class Operations {
  /** Consecutive failed batches after which the node reports itself degraded. */
  static final int DEGRADED_AFTER = 5;

  private final Vertx vertx;
  private final VerticleConfig settings;
  private final HealthChecks health;
  private final List<FerryMeterBinder> meters = new ArrayList<>(2);
  private final List<Supplier<Future<?>>> stops = new ArrayList<>();
  private String phase = "up";
  private int failuresInARow;

  private Operations(Vertx vertx, VerticleConfig settings) {
    this.vertx = vertx;
    this.settings = settings;
    this.health = HealthChecks.create(vertx);
  }

  /** Starts everything the config asks for; fails if an endpoint cannot listen. */
  public static Future<Operations> start(Vertx vertx, VerticleConfig settings, Ferry<?, ?> ferry) {
    Operations ops = new Operations(vertx, settings);
    // A port already taken fails the start: undo whatever did start.
    return ops.begin(ferry).map(ops).recover(e -> ops.stop().transform(v -> Future.failedFuture(e)));
  }

  private Future<Void> begin(Ferry<?, ?> ferry) {
    String name = settings.address();
    if (ferry instanceof Probe.Observable observable) {
      Runnable stopObserving = observable.observe(new Probe() {
        @Override
        public void batchFinished(long latencyNanos, boolean failed) {
          failuresInARow = failed ? failuresInARow + 1 : 0;
        }
      });
      stops.add(() -> {
        stopObserving.run();
        return Future.succeededFuture();
      });
    }
    health.register("ferry", promise -> promise.complete(status(ferry)));

    // Vert.x's own registry when metrics are on for this instance; a private Prometheus registry
    // when only our endpoint asks for one.
    MeterRegistry shared = BackendRegistries.getDefaultNow();
    PrometheusMeterRegistry scraped = shared instanceof PrometheusMeterRegistry p ? p : null;
    if (shared != null) {
      meters.add(FerryMeterBinder.bind(ferry, shared, name));
    }
    if (settings.ops().monitoring() != null && scraped == null) {
      scraped = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      meters.add(FerryMeterBinder.bind(ferry, scraped, name));
    }

    MessageConsumer<Object> healthConsumer = vertx.eventBus().consumer(settings.ops().healthAddress(),
        msg -> health.checkStatus().onComplete(ar -> msg.reply(ar.succeeded()
            ? ar.result().toJson()
            : new JsonObject().put("status", "DOWN").put("error", String.valueOf(ar.cause())))));
    stops.add(healthConsumer::unregister);
    List<Future<?>> started = new ArrayList<>();
    started.add(healthConsumer.completion());
    if (settings.ops().monitoring() != null) {
      started.add(listenHttp(settings.ops().monitoring(), scraped));
    }
    if (settings.ops().bridge() != null) {
      started.add(listenBridge(settings.ops().bridge()));
    }
    return Future.all(started).mapEmpty();
  }

  private Future<HttpServer> listenHttp(OpsConfig.Endpoint at, PrometheusMeterRegistry registry) {
    Router router = Router.router(vertx);
    router.get("/metrics").handler(PrometheusScrapingHandler.create(registry));
    router.get("/health").handler(HealthCheckHandler.createWithHealthChecks(health));
    return vertx.createHttpServer().requestHandler(router).listen(at.port(), at.host())
        .onSuccess(server -> stops.add(server::close));
  }

  private Future<TcpEventBusBridge> listenBridge(OpsConfig.Bridge b) {
    // Only what a client needs may come in: submit (and metrics or health when asked). Replies
    // to a client's own requests travel back without any outbound permission.
    BridgeOptions options = new BridgeOptions()
        .addInboundPermitted(new PermittedOptions().setAddress(settings.address()));
    if (b.permitMetrics()) {
      options.addInboundPermitted(new PermittedOptions().setAddress(settings.metricsAddress()));
    }
    if (b.permitHealth()) {
      options.addInboundPermitted(new PermittedOptions().setAddress(settings.ops().healthAddress()));
    }
    return TcpEventBusBridge.create(vertx, options).listen(b.endpoint().port(), b.endpoint().host())
        .onSuccess(bridge -> stops.add(bridge::close));
  }

  private Status status(Ferry<?, ?> ferry) {
    JsonObject data = new JsonObject().put("address", settings.address());
    if (!"up".equals(phase)) {
      return Status.KO(data.put("state", phase));
    }
    if (failuresInARow >= DEGRADED_AFTER) {
      return Status.KO(data.put("state", "degraded").put("failedBatchesInARow", failuresInARow));
    }
    return Status.OK(data.put("state", "up").put("metrics", ferry.metrics().toJson()));
  }

  /** The node stopped accepting and is sending what waits. */
  public void draining() {
    phase = "draining";
  }

  /** Stops the endpoints and removes the meters; health reports closed until then. */
  public Future<Void> stop() {
    phase = "closed";
    meters.forEach(FerryMeterBinder::close);
    meters.clear();
    List<Future<?>> stopped = new ArrayList<>();
    stops.forEach(stop -> stopped.add(stop.get()));
    stops.clear();
    return Future.join(stopped).mapEmpty();
  }
}
