package dev.ferry.verticle;

import dev.ferry.PerKeyConfig;
import dev.ferry.internal.ConfigCheck;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@link FerryVerticle}'s config, read strictly from its deployment JSON: every
 * violation (wrong type, out of range, missing downstream, unknown field, here or inside {@code
 * downstream}) is collected, and {@link #read} throws once naming all of them.
 */
public record VerticleConfig(
    String address,
    String metricsAddress,
    PerKeyConfig perKey,
    boolean headerOrder,
    long drainTimeoutMs,
    DownstreamConfig downstream,
    OpsConfig ops) {

  public static final String DEFAULT_ADDRESS = FerryClient.DEFAULT_ADDRESS;
  public static final String DEFAULT_METRICS_ADDRESS = "ferry.metrics";
  public static final long DEFAULT_DRAIN_TIMEOUT_MS = 10_000;
  /** Millisecond fields must fit in nanoseconds once converted (the engine keeps time in nanos). */
  static final long MAX_MS = dev.ferry.internal.Limits.MAX_MS;

  private static final Set<String> OWN_FIELDS =
      Set.of("address", "metricsAddress", "order", "downstream");

  /**
   * Where batches go: an event-bus address, or an HTTP url with its total timeout and its {@link
   * HttpSettings} (headers, TLS, answer size bound; null for the event bus).
   */
  public record DownstreamConfig(String type, String address, String url, long timeoutMs, HttpSettings httpSettings) {
    public boolean http() {
      return "http".equals(type);
    }
  }

  /** Every field name the verticle accepts at the top level. */
  public static Set<String> fieldNames() {
    Set<String> all = new HashSet<>(PerKeyConfig.jsonFieldNames());
    all.addAll(OWN_FIELDS);
    all.addAll(OpsConfig.FIELDS);
    return Set.copyOf(all);
  }

  /** Reads and validates; throws {@link dev.ferry.InvalidConfigException} naming every violation. */
  public static VerticleConfig read(JsonObject json) {
    JsonObject in = json == null ? new JsonObject() : json.copy();
    ConfigCheck check = new ConfigCheck();
    check.unknownFields(in, fieldNames());
    List<String> perKeyViolations = new ArrayList<>();
    PerKeyConfig perKey = PerKeyConfig.read(in, perKeyViolations);
    perKeyViolations.forEach(check::violation);

    String address = nonEmpty(check, "address", check.readString(in, "address"), DEFAULT_ADDRESS);
    String metrics = nonEmpty(check, "metricsAddress", check.readString(in, "metricsAddress"), DEFAULT_METRICS_ADDRESS);
    check.require(!address.equals(metrics), "metricsAddress", quote(metrics), "must differ from address");
    String order = check.readChoice(in, "order", "submission", "header");
    // drainTimeoutMs is a PerKeyConfig field: the ferry drains for it when the verticle undeploys.
    long callMs = (perKey != null ? perKey : PerKeyConfig.defaults()).callTimeout().toMillis();
    DownstreamConfig downstream = readDownstream(in, check, callMs, address);
    OpsConfig ops = OpsConfig.read(in, check);
    check.require(!ops.healthAddress().equals(address) && !ops.healthAddress().equals(metrics),
        "healthAddress", quote(ops.healthAddress()), "must differ from address and metricsAddress");
    if (downstream != null && !downstream.http()) {
      // Every batch would go to this node's own metrics or health consumer and fail as malformed.
      check.require(!downstream.address().equals(metrics) && !downstream.address().equals(ops.healthAddress()),
          "downstream.address", quote(downstream.address()),
          "must differ from metricsAddress and healthAddress (the ferry would call its own endpoint)");
    }

    check.throwIfAny("FerryVerticle config");
    return new VerticleConfig(address, metrics, perKey, "header".equals(order),
        perKey != null ? perKey.drainTimeout().toMillis() : DEFAULT_DRAIN_TIMEOUT_MS, downstream, ops);
  }

  private static DownstreamConfig readDownstream(JsonObject in, ConfigCheck check, long callMs, String address) {
    if (!in.containsKey("downstream") || in.getValue("downstream") == null) {
      check.violation("downstream: missing (required: {\"type\":\"eventbus\",\"address\":\"...\"} or {\"type\":\"http\",\"url\":\"http://...\"})");
      return null;
    }
    JsonObject d = check.readObject(in, "downstream");
    if (d == null) {
      return null;
    }
    Object type = d.getValue("type");
    if ("eventbus".equals(type)) {
      unknown(check, d, Set.of("type", "address"));
      Object a = d.getValue("address");
      boolean ok = a instanceof String s && !s.isEmpty();
      check.require(ok, "downstream.address", describe(a), "must be a non-empty string");
      check.require(!ok || !a.equals(address), "downstream.address", describe(a),
          "must differ from address (the ferry would call itself)");
      return ok ? new DownstreamConfig("eventbus", (String) a, null, callMs, null) : null;
    }
    if ("http".equals(type)) {
      unknown(check, d, HttpSettings.FIELDS);
      Object u = d.getValue("url");
      boolean ok = u instanceof String s && httpUrl(s);
      check.require(ok, "downstream.url", u instanceof String s && hasUserInfo(s) ? "\"...\"" : describe(u),
          "must be an absolute http:// or https:// URL with a host (and a port, if given, 1 to 65535), without"
          + " user info (the client would drop it: give credentials as downstream.headers.Authorization)");
      Long timeoutMs = null;
      Object t = d.getValue("timeoutMs");
      if (t != null) {
        // A whole number as every other ms field reads it: 5000.0 too (JSON from YAML or JavaScript).
        timeoutMs = new ConfigCheck().readLong(d, "timeoutMs");
        check.require(timeoutMs != null && timeoutMs >= 1 && timeoutMs <= MAX_MS,
            "downstream.timeoutMs", describe(t), "must be a whole number >= 1 and <= " + MAX_MS);
      }
      HttpSettings http = HttpSettings.read(d, check, ok && ((String) u).startsWith("https:"));
      return ok ? new DownstreamConfig("http", null, (String) u, timeoutMs != null ? timeoutMs : callMs, http) : null;
    }
    check.violation("downstream.type = " + describe(type) + ": must be \"eventbus\" or \"http\"");
    return null;
  }

  private static boolean httpUrl(String s) {
    try {
      URI uri = new URI(s);
      // A port past 65535 parses, and then failed every batch ("no connection") after a deploy that succeeded.
      // Port 0 parses too, and no connection can be made to it; user info parses, and the client
      // drops it (the batches went without credentials).
      return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null
          && uri.getPort() != 0 && uri.getPort() <= 65535 && uri.getRawUserInfo() == null;
    } catch (Exception e) {
      return false;
    }
  }

  /** Whether {@code s} is a url with user info: never quoted, it may hold a password. */
  private static boolean hasUserInfo(String s) {
    try {
      return new URI(s).getRawUserInfo() != null;
    } catch (Exception e) {
      return false;
    }
  }

  private static void unknown(ConfigCheck check, JsonObject d, Set<String> known) {
    HttpSettings.unknown(check, d, "downstream", known);
  }

  private static String nonEmpty(ConfigCheck check, String field, String value, String dflt) {
    if (value == null) {
      return dflt;
    }
    check.require(!value.isEmpty(), field, "\"\"", "must be a non-empty string");
    return value;
  }

  private static String quote(String s) {
    return s == null ? "null" : "\"" + s + "\"";
  }

  private static String describe(Object value) {
    return value instanceof String s ? quote(s) : String.valueOf(value);
  }
}
