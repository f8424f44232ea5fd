package dev.ferry.verticle;

import dev.ferry.internal.ConfigCheck;
import io.vertx.core.json.JsonObject;
import java.util.Set;

/**
 * The operational part of the verticle's config: where health answers, the optional HTTP endpoint
 * for Prometheus and health, the optional TCP event-bus bridge, and whether failures may log
 * payloads. Endpoints are off unless configured and bind to loopback unless told otherwise.
 *
 * @param healthAddress event-bus address answering this node's health (request/reply)
 * @param monitoring {@code /metrics} and {@code /health} over HTTP, or null when off
 * @param bridge the TCP event-bus bridge, or null when off
 * @param logPayloads whether a failed batch's log line may include its inputs (debug only)
 * @param metricsRegistry the name of the Vert.x Micrometer registry to put the meters in, or null
 *     for Vert.x's default registry (when metrics are on)
 */
public record OpsConfig(String healthAddress, Endpoint monitoring, Bridge bridge, boolean logPayloads,
    String metricsRegistry) {
  public static final String DEFAULT_HEALTH_ADDRESS = "ferry.health";
  public static final String LOOPBACK = "127.0.0.1";
  static final Set<String> FIELDS = Set.of("healthAddress", "monitoring", "bridge", "logPayloads", "metricsRegistry");

  /** A host and port to listen on. */
  public record Endpoint(String host, int port) {}

  /**
   * The TCP bridge: where it listens, which addresses beyond submit it lets in, the longest frame
   * (its JSON, in bytes) a client may send (ADR 0104), and how long a connection may go without a
   * whole frame from its client before it is closed (ADR 0166).
   */
  public record Bridge(Endpoint endpoint, boolean permitMetrics, boolean permitHealth, int maxFrameBytes,
      long idleTimeoutMs) {}

  static OpsConfig read(JsonObject in, ConfigCheck check) {
    String health = check.readString(in, "healthAddress");
    check.require(health == null || !health.isEmpty(), "healthAddress", "\"\"", "must be a non-empty string");
    Boolean logPayloads = check.readBoolean(in, "logPayloads");
    String registry = check.readString(in, "metricsRegistry");
    check.require(registry == null || !registry.isEmpty(), "metricsRegistry", "\"\"", "must be a non-empty string");
    Endpoint monitoring = null;
    JsonObject m = check.readObject(in, "monitoring");
    if (m != null) {
      checkFields(check, "monitoring", m, Set.of("host", "port"));
      monitoring = endpoint(check, "monitoring", m);
    }
    Bridge bridge = null;
    JsonObject b = check.readObject(in, "bridge");
    if (b != null) {
      checkFields(check, "bridge", b, Set.of("host", "port", "permitMetrics", "permitHealth", "maxFrameBytes",
          "idleTimeoutMs"));
      Endpoint at = endpoint(check, "bridge", b);
      ConfigCheck typed = new ConfigCheck();
      Boolean metrics = typed.readBoolean(b, "permitMetrics");
      Boolean healthToo = typed.readBoolean(b, "permitHealth");
      // Whatever its size (past a long too: 1e30), a value out of range names the field's rule,
      // not a type's range; refused, it reads as null and the default stands in.
      Long maxFrame = typed.readWhole(b, "maxFrameBytes", BridgeFrameLimit.MIN_MAX_FRAME_BYTES,
          BridgeFrameLimit.MAX_MAX_FRAME_BYTES,
          "must be " + BridgeFrameLimit.MIN_MAX_FRAME_BYTES + " to " + BridgeFrameLimit.MAX_MAX_FRAME_BYTES);
      Long idle = typed.readWhole(b, "idleTimeoutMs", BridgeFrameLimit.MIN_IDLE_TIMEOUT_MS,
          BridgeFrameLimit.MAX_IDLE_TIMEOUT_MS,
          "must be " + BridgeFrameLimit.MIN_IDLE_TIMEOUT_MS + " to " + BridgeFrameLimit.MAX_IDLE_TIMEOUT_MS);
      prefixed(check, "bridge", typed);
      bridge = new Bridge(at, Boolean.TRUE.equals(metrics), Boolean.TRUE.equals(healthToo),
          maxFrame == null ? BridgeFrameLimit.DEFAULT_MAX_FRAME_BYTES : maxFrame.intValue(),
          idle == null ? BridgeFrameLimit.DEFAULT_IDLE_TIMEOUT_MS : idle);
      // Vert.x lets servers of one instance share a host and port (port 0 excepted) and hands each
      // connection to one of them in turn: the HTTP endpoint would get half the bridge's clients,
      // and the bridge half the scrapes.
      check.require(monitoring == null || at.port() == 0 || at.port() != monitoring.port()
          || !at.host().equals(monitoring.host()), "bridge.port", at.port(),
          "must differ from monitoring.port on the same host (the two servers would take each other's connections)");
    }
    return new OpsConfig(health == null || health.isEmpty() ? DEFAULT_HEALTH_ADDRESS : health,
        monitoring, bridge, Boolean.TRUE.equals(logPayloads), registry == null || registry.isEmpty() ? null : registry);
  }

  /**
   * Adds {@code typed}'s violations to {@code check} under {@code field}: ConfigCheck names a field
   * by its key alone, and "port = ..." would not say whether the monitoring's or the bridge's.
   */
  private static void prefixed(ConfigCheck check, String field, ConfigCheck typed) {
    typed.violations().forEach(v -> check.violation(field + "." + v));
  }

  private static Endpoint endpoint(ConfigCheck check, String field, JsonObject json) {
    ConfigCheck typed = new ConfigCheck();
    String host = typed.readString(json, "host");
    // Any size (past a long too: 1e30) out of range names the port's rule, not a type's range.
    Long port = typed.readWhole(json, "port", 0, 65535, "must be 0-65535");
    prefixed(check, field, typed);
    check.require(host == null || !host.isEmpty(), field + ".host", "\"\"", "must be a non-empty string");
    // A null port is as absent (a template whose variable was unset), not port 0: that would bind
    // a port the system chooses, where no scraper or client configured for the intended one looks.
    if (json.getValue("port") == null) {
      check.violation(field + ".port: missing (required: 0-65535)");
    }
    return new Endpoint(host == null || host.isEmpty() ? LOOPBACK : host, port == null ? 0 : port.intValue());
  }

  private static void checkFields(ConfigCheck check, String field, JsonObject json, Set<String> known) {
    for (String f : json.fieldNames()) {
      if (!known.contains(f)) {
        check.violation(field + "." + f + ": unknown field (known: " + String.join(", ", new java.util.TreeSet<>(known)) + ")");
      }
    }
  }
}
