package dev.ferry.verticle;

import dev.ferry.InvalidConfigException;
import dev.ferry.PerKeyConfig;
import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * The {@link FerryVerticle}'s options as a typed data object, the Vert.x way: a JSON constructor,
 * {@link #toJson()}, setters returning {@code this}. The JSON is exactly the verticle's config
 * (docs/guide/verticle.md, conf/ferry.json), so {@code new FerryVerticleOptions(json).toJson()}
 * gives back {@code json}, and the verticle deployed with either behaves the same.
 *
 * <p>Setters do not check; {@link #validate()} (and the deployment) checks everything at once and
 * names every bad field, like the JSON config. A getter of an option never set returns its
 * default. A field of the JSON this class has no typed accessor for (or one of the wrong type) is
 * kept as is, so that validation reports it and {@code toJson()} loses nothing. Not thread-safe:
 * build it, then hand it over.
 */
public final class FerryVerticleOptions {
  private String address;
  private String metricsAddress;
  private String dispatch;
  private Integer pinnedLimit;
  private Integer maxBatchSize;
  private Long maxBatchWeight;
  private Integer maxInFlightBatches;
  private Integer maxQueueing;
  private Long maxQueuedWeight;
  private Long maxBatchDelayMs;
  private Boolean directIdleKeys;
  private String order;
  private Long callTimeoutMs;
  private Long drainTimeoutMs;
  private JsonObject downstream;
  private String healthAddress;
  private JsonObject monitoring;
  private JsonObject bridge;
  private Boolean logPayloads;
  private String metricsRegistry;
  /** Fields without a typed accessor here, or of a type the accessor does not take. */
  private final JsonObject other = new JsonObject();

  public FerryVerticleOptions() {}

  /** A copy. */
  public FerryVerticleOptions(FerryVerticleOptions that) {
    this(that.toJson());
  }

  /** From the verticle's JSON config; never throws (see {@link #validate()}). */
  public FerryVerticleOptions(JsonObject json) {
    for (String field : json.fieldNames()) {
      Object v = json.getValue(field);
      if (!read(field, v)) {
        other.put(field, v instanceof JsonObject o ? o.copy() : v);
      }
    }
  }

  /** Takes {@code v} into its typed field; false when there is none or the type differs. */
  private boolean read(String field, Object v) {
    switch (field) {
      case "address": return v instanceof String s && set(() -> address = s);
      case "metricsAddress": return v instanceof String s && set(() -> metricsAddress = s);
      case "dispatch": return v instanceof String s && set(() -> dispatch = s);
      case "pinnedLimit": return isInt(v) && set(() -> pinnedLimit = whole(v).intValue());
      case "maxBatchSize": return isInt(v) && set(() -> maxBatchSize = whole(v).intValue());
      case "maxBatchWeight": return isLong(v) && set(() -> maxBatchWeight = whole(v));
      case "maxInFlightBatches": return isInt(v) && set(() -> maxInFlightBatches = whole(v).intValue());
      case "maxQueueing": return isInt(v) && set(() -> maxQueueing = whole(v).intValue());
      case "maxQueuedWeight": return isLong(v) && set(() -> maxQueuedWeight = whole(v));
      case "maxBatchDelayMs": return isLong(v) && set(() -> maxBatchDelayMs = whole(v));
      case "directIdleKeys": return v instanceof Boolean b && set(() -> directIdleKeys = b);
      case "order": return v instanceof String s && set(() -> order = s);
      case "callTimeoutMs": return isLong(v) && set(() -> callTimeoutMs = whole(v));
      case "drainTimeoutMs": return isLong(v) && set(() -> drainTimeoutMs = whole(v));
      case "downstream": return v instanceof JsonObject o && set(() -> downstream = o.copy());
      case "healthAddress": return v instanceof String s && set(() -> healthAddress = s);
      case "monitoring": return v instanceof JsonObject o && set(() -> monitoring = o.copy());
      case "bridge": return v instanceof JsonObject o && set(() -> bridge = o.copy());
      case "logPayloads": return v instanceof Boolean b && set(() -> logPayloads = b);
      case "metricsRegistry": return v instanceof String s && set(() -> metricsRegistry = s);
      default: return false;
    }
  }

  private static boolean set(Runnable assignment) {
    assignment.run();
    return true;
  }

  /**
   * A whole number as the config reader takes it (ConfigCheck.readLong): 10.0, a BigDecimal or a
   * BigInteger too. Otherwise the getter answered the default while the verticle deployed with the
   * value.
   */
  private static boolean isLong(Object v) {
    return whole(v) != null;
  }

  private static boolean isInt(Object v) {
    Long value = whole(v);
    return value != null && value == value.intValue();
  }

  /** {@code v} as the config reader reads it, or null where that refuses it. */
  private static Long whole(Object v) {
    return dev.ferry.internal.ConfigCheck.wholeNumber(v);
  }

  /** The verticle's JSON config: every option set, nothing else. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    put(json, "address", address);
    put(json, "metricsAddress", metricsAddress);
    put(json, "dispatch", dispatch);
    put(json, "pinnedLimit", pinnedLimit);
    put(json, "maxBatchSize", maxBatchSize);
    put(json, "maxBatchWeight", maxBatchWeight);
    put(json, "maxInFlightBatches", maxInFlightBatches);
    put(json, "maxQueueing", maxQueueing);
    put(json, "maxQueuedWeight", maxQueuedWeight);
    put(json, "maxBatchDelayMs", maxBatchDelayMs);
    put(json, "directIdleKeys", directIdleKeys);
    put(json, "order", order);
    put(json, "callTimeoutMs", callTimeoutMs);
    put(json, "drainTimeoutMs", drainTimeoutMs);
    put(json, "downstream", downstream == null ? null : downstream.copy());
    put(json, "healthAddress", healthAddress);
    put(json, "monitoring", monitoring == null ? null : monitoring.copy());
    put(json, "bridge", bridge == null ? null : bridge.copy());
    put(json, "logPayloads", logPayloads);
    put(json, "metricsRegistry", metricsRegistry);
    return other.copy().mergeIn(json);
  }

  private static void put(JsonObject json, String field, Object value) {
    if (value != null) {
      json.put(field, value);
    }
  }

  /**
   * Checks every option at once, as the deployment does.
   *
   * @throws InvalidConfigException naming every bad field, with its value and rule
   */
  public FerryVerticleOptions validate() {
    VerticleConfig.read(toJson());
    return this;
  }

  private static PerKeyConfig defaults() {
    return PerKeyConfig.defaults();
  }

  // --- getters return the default when an option was never set ---

  public String getAddress() { return address != null ? address : VerticleConfig.DEFAULT_ADDRESS; }
  public String getMetricsAddress() { return metricsAddress != null ? metricsAddress : VerticleConfig.DEFAULT_METRICS_ADDRESS; }
  /** {@code "adaptive"} (default) or {@code "fixed-slots"} (docs/guide/per-key.md). */
  public String getDispatch() { return dispatch != null ? dispatch : PerKeyConfig.DEFAULT_DISPATCH.jsonName(); }
  /** A call limit fixed by hand instead of learned, or 0 for none (the default). */
  public int getPinnedLimit() { return pinnedLimit != null ? pinnedLimit : defaults().pinnedLimit(); }
  public int getMaxBatchSize() { return maxBatchSize != null ? maxBatchSize : defaults().maxBatchSize(); }
  public long getMaxBatchWeight() { return maxBatchWeight != null ? maxBatchWeight : defaults().maxBatchWeight(); }
  /** Set, or the default of the dispatch mode in force: a ceiling of 256 with adaptive, 16 slots with fixed slots. */
  public int getMaxInFlightBatches() {
    if (maxInFlightBatches != null) {
      return maxInFlightBatches;
    }
    // The mode's default, from PerKeyConfig itself (an unknown mode fails validation elsewhere).
    dev.ferry.Dispatch mode = dev.ferry.Dispatch.fromJson(getDispatch());
    return PerKeyConfig.builder().dispatch(mode == null ? PerKeyConfig.DEFAULT_DISPATCH : mode).build().maxInFlightBatches();
  }
  public int getMaxQueueing() { return maxQueueing != null ? maxQueueing : defaults().maxQueueing(); }
  public long getMaxQueuedWeight() { return maxQueuedWeight != null ? maxQueuedWeight : defaults().maxQueuedWeight(); }
  public long getMaxBatchDelayMs() { return maxBatchDelayMs != null ? maxBatchDelayMs : defaults().maxBatchDelay().toMillis(); }
  public boolean isDirectIdleKeys() { return directIdleKeys != null ? directIdleKeys : defaults().directCallsEnabled(); }
  public String getOrder() { return order != null ? order : "submission"; }
  public long getCallTimeoutMs() { return callTimeoutMs != null ? callTimeoutMs : defaults().callTimeout().toMillis(); }
  public long getDrainTimeoutMs() { return drainTimeoutMs != null ? drainTimeoutMs : VerticleConfig.DEFAULT_DRAIN_TIMEOUT_MS; }
  /** The downstream's JSON ({@code {"type": "eventbus", ...}} or {@code {"type": "http", ...}}); null until set. */
  public JsonObject getDownstream() { return downstream == null ? null : downstream.copy(); }
  public String getHealthAddress() { return healthAddress != null ? healthAddress : OpsConfig.DEFAULT_HEALTH_ADDRESS; }
  /** The monitoring endpoint's JSON ({@code {"host": ..., "port": ...}}), or null when off. */
  public JsonObject getMonitoring() { return monitoring == null ? null : monitoring.copy(); }
  /** The TCP bridge's JSON, or null when off. */
  public JsonObject getBridge() { return bridge == null ? null : bridge.copy(); }
  public boolean isLogPayloads() { return logPayloads != null && logPayloads; }
  /** The Vert.x Micrometer registry name for the meters, or null for the default registry. */
  public String getMetricsRegistry() { return metricsRegistry; }

  // --- setters return this ---

  public FerryVerticleOptions setAddress(String address) { this.address = address; return this; }
  public FerryVerticleOptions setMetricsAddress(String metricsAddress) { this.metricsAddress = metricsAddress; return this; }
  /** {@code "adaptive"} or {@code "fixed-slots"}. */
  public FerryVerticleOptions setDispatch(String dispatch) { this.dispatch = dispatch; return this; }
  public FerryVerticleOptions setPinnedLimit(int pinnedLimit) { this.pinnedLimit = pinnedLimit; return this; }
  public FerryVerticleOptions setMaxBatchSize(int maxBatchSize) { this.maxBatchSize = maxBatchSize; return this; }
  public FerryVerticleOptions setMaxBatchWeight(long maxBatchWeight) { this.maxBatchWeight = maxBatchWeight; return this; }
  public FerryVerticleOptions setMaxInFlightBatches(int maxInFlightBatches) { this.maxInFlightBatches = maxInFlightBatches; return this; }
  public FerryVerticleOptions setMaxQueueing(int maxQueueing) { this.maxQueueing = maxQueueing; return this; }
  public FerryVerticleOptions setMaxQueuedWeight(long maxQueuedWeight) { this.maxQueuedWeight = maxQueuedWeight; return this; }
  public FerryVerticleOptions setMaxBatchDelayMs(long maxBatchDelayMs) { this.maxBatchDelayMs = maxBatchDelayMs; return this; }
  public FerryVerticleOptions setDirectIdleKeys(boolean directIdleKeys) { this.directIdleKeys = directIdleKeys; return this; }
  /** {@code "submission"} or {@code "header"}. */
  public FerryVerticleOptions setOrder(String order) { this.order = order; return this; }
  public FerryVerticleOptions setCallTimeoutMs(long callTimeoutMs) { this.callTimeoutMs = callTimeoutMs; return this; }
  public FerryVerticleOptions setDrainTimeoutMs(long drainTimeoutMs) { this.drainTimeoutMs = drainTimeoutMs; return this; }
  /** The downstream as JSON, for fields the typed setters below do not cover. */
  public FerryVerticleOptions setDownstream(JsonObject downstream) { this.downstream = downstream == null ? null : downstream.copy(); return this; }
  /** An event-bus downstream at {@code address}. */
  public FerryVerticleOptions setEventBusDownstream(String address) {
    return setDownstream(new JsonObject().put("type", "eventbus").put("address", address));
  }
  /** An HTTP downstream: batches are POSTed to {@code url}. */
  public FerryVerticleOptions setHttpDownstream(String url) {
    return setDownstream(new JsonObject().put("type", "http").put("url", url));
  }
  public FerryVerticleOptions setHealthAddress(String healthAddress) { this.healthAddress = healthAddress; return this; }
  /** Turns on {@code /metrics} and {@code /health} over HTTP at host:port (needs vertx-web and Micrometer). */
  public FerryVerticleOptions setMonitoring(String host, int port) {
    this.monitoring = new JsonObject().put("host", host).put("port", port);
    return this;
  }
  public FerryVerticleOptions setMonitoring(JsonObject monitoring) { this.monitoring = monitoring == null ? null : monitoring.copy(); return this; }
  /** Turns on the TCP event-bus bridge (needs vertx-tcp-eventbus-bridge); see docs/operations.md for its fields. */
  public FerryVerticleOptions setBridge(JsonObject bridge) { this.bridge = bridge == null ? null : bridge.copy(); return this; }
  public FerryVerticleOptions setLogPayloads(boolean logPayloads) { this.logPayloads = logPayloads; return this; }
  public FerryVerticleOptions setMetricsRegistry(String metricsRegistry) { this.metricsRegistry = metricsRegistry; return this; }

  @Override
  public boolean equals(Object o) {
    return o instanceof FerryVerticleOptions that && toJson().equals(that.toJson());
  }

  @Override
  public int hashCode() {
    return Objects.hash(toJson());
  }

  @Override
  public String toString() {
    return "FerryVerticleOptions" + toJson().encode();
  }
}
