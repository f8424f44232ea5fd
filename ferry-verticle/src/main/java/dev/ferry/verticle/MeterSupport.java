package dev.ferry.verticle;

import dev.ferry.Ferry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.healthchecks.HealthCheckHandler;
import io.vertx.micrometer.PrometheusScrapingHandler;
import io.vertx.micrometer.backends.BackendRegistries;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Everything of {@link Operations} that touches Micrometer, Prometheus or Vert.x Web, kept apart
 * so that Operations loads without those optional jars: this class is only loaded once
 * {@link OptionalJars} has found them. Runs on the verticle's context, like Operations.
 */
final class MeterSupport {
  /**
   * How long a monitoring connection may go without a byte either way before the server closes
   * it: without it a client that connects and never sends (or never closes a kept-alive
   * connection) held its connection for ever. Above the usual scrape intervals (15 s to 1 min), so
   * a scraper's kept-alive connection lives from one scrape to the next.
   */
  static final long IDLE_TIMEOUT_MS = 120_000;
  /**
   * {@link #IDLE_TIMEOUT_MS}, lowered by tests that watch an idle connection closed; also the
   * bound on the time to a whole request ({@link QuietDeadline}, ADR 0169).
   */
  static volatile long idleTimeoutMs = IDLE_TIMEOUT_MS;

  private MeterSupport() {}

  /**
   * Binds the ferry's meters where the application wants them: the registry it named
   * ({@code metricsRegistry}, looked up in Vert.x's Micrometer backends), else Vert.x's default
   * registry when metrics are on; plus a private Prometheus registry when the monitoring endpoint
   * needs one. Adds one closer per binding to {@code closers}; returns the registry to scrape, or
   * null.
   *
   * @throws IllegalStateException when a named registry does not exist
   */
  static Object bind(Ferry<?, ?> ferry, String name, String registryName, boolean scrape, List<Runnable> closers) {
    MeterRegistry shared;
    if (registryName != null) {
      shared = BackendRegistries.getNow(registryName);
      if (shared == null) {
        throw new IllegalStateException("metricsRegistry = \"" + registryName + "\": no Micrometer registry of that"
            + " name; create Vert.x with MicrometerMetricsOptions().setRegistryName(\"" + registryName + "\")");
      }
    } else {
      shared = BackendRegistries.getDefaultNow();
    }
    PrometheusMeterRegistry scraped = shared instanceof PrometheusMeterRegistry p ? p : null;
    if (shared != null) {
      try {
        closers.add(FerryMeterBinder.bind(ferry, shared, name)::close);
      } catch (FerryMeterBinder.NameTaken taken) {
        // The registry is Vert.x-wide by name, shared by every Vert.x instance of the JVM that
        // names it (the default one included): a ferry at the same address in another instance.
        throw new IllegalStateException("address = \"" + name + "\": a ferry of that name already has its meters in the"
            + " Micrometer registry " + registryText(registryName)
            + ", which every Vert.x instance of this JVM naming it shares: give this ferry another address, or its"
            + " Vert.x another registry (metricsRegistry)", taken);
      } catch (RuntimeException refused) {
        // The registry refused one of the meters for its own reason (Prometheus: a meter of that
        // name and another type, say; often an IllegalArgumentException too): that reason, which
        // says nothing of another ferry.
        throw new IllegalStateException("the Micrometer registry " + registryText(registryName)
            + " refused the ferry's meters: " + refused.getMessage(), refused);
      }
    }
    if (scrape && scraped == null) {
      scraped = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      closers.add(FerryMeterBinder.bind(ferry, scraped, name)::close);
    }
    return scraped;
  }

  private static String registryText(String registryName) {
    return registryName != null ? "\"" + registryName + "\" (metricsRegistry)" : "of Vert.x (the default one)";
  }

  /** {@code /metrics} (Prometheus text) and {@code /health} over HTTP. */
  static Future<HttpServer> listen(Vertx vertx, OpsConfig.Endpoint at, Object scraped, HealthChecks health) {
    Router router = Router.router(vertx);
    // HEAD as GET (RFC 9110 9.3.2): uptime checkers and load balancers probe with it, and a 405
    // would read as a node down. Vert.x leaves the body out of a HEAD answer.
    router.route("/metrics").method(HttpMethod.GET).method(HttpMethod.HEAD)
        .handler(PrometheusScrapingHandler.create((PrometheusMeterRegistry) scraped));
    router.route("/health").method(HttpMethod.GET).method(HttpMethod.HEAD)
        .handler(HealthCheckHandler.createWithHealthChecks(health));
    long limit = idleTimeoutMs;
    HttpServerOptions options = new HttpServerOptions()
        .setIdleTimeout((int) limit).setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
    // Vert.x's idle timeout is reset by each message read: each piece of a body, each HTTP/2 frame
    // (a PING). A connection must also bring a whole request within the same bound (ADR 0169),
    // counted from when Vert.x hands it to the server, then from its previous request's end. Vert.x
    // hands it over late (with h2c on, its default: an HTTP/1.x connection at its first request's
    // head, an HTTP/2 one at the client's first settings); until then nothing is decoded and the
    // idle timeout bounds the wait, so a first request is whole within twice the bound of the
    // opening (review AL). A scraper's kept-alive connection asks again far inside the bound.
    // The server was created on the verticle's context: its connections and this map live on that
    // event loop.
    java.util.Map<HttpConnection, QuietDeadline> deadlines = new java.util.HashMap<>();
    return vertx.createHttpServer(options)
        .connectionHandler(c -> {
          // At once when it passes, as at Vert.x's idle timeout: close() waits for what was written
          // to go out.
          QuietDeadline d = new QuietDeadline(vertx, limit, () -> dev.ferry.cluster.ClusterAccess.closeNow(c));
          deadlines.put(c, d);
          c.closeHandler(v -> {
            QuietDeadline closed = deadlines.remove(c);
            if (closed != null) {
              closed.stop();
            }
          });
        })
        .requestHandler(req -> {
          QuietDeadline d = deadlines.get(req.connection());
          if (d != null) {
            if (req.isEnded()) {
              d.touch();
            } else {
              // No route reads a body: this handler stays the request's.
              req.endHandler(v -> d.touch());
            }
          }
          router.handle(req);
        })
        .listen(at.port(), at.host());
  }
}
