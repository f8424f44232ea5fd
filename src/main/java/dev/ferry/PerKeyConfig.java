package dev.ferry;

import dev.ferry.internal.ConfigCheck;
import dev.ferry.internal.Limits;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * The bounds of a {@link Ferry#perKey per-key ferry}: immutable, validated once when built.
 *
 * <p>Defaults: {@code maxBatchSize} 100, {@code maxBatchWeight} unbounded, {@code
 * maxInFlightBatches} 16, {@code maxQueueing} 10000, {@code maxQueuedWeight} unbounded, {@code
 * maxBatchDelay} zero (batches form on completion, no timer), {@code directIdleKeys} true, {@code
 * callTimeout} 30 s. An invalid config never builds: {@link InvalidConfigException} names every
 * violated field with its value and rule.
 */
public final class PerKeyConfig {
  private static final Set<String> JSON_FIELDS = jsonFields();

  private final Limits limits;
  private final boolean directIdleKeys;

  private PerKeyConfig(Limits limits, boolean directIdleKeys) {
    this.limits = limits;
    this.directIdleKeys = directIdleKeys;
  }

  public static PerKeyConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads a config from JSON with the field names {@code maxBatchSize}, {@code maxBatchWeight},
   * {@code maxInFlightBatches}, {@code maxQueueing}, {@code maxQueuedWeight}, {@code
   * maxBatchDelayMs}, {@code directIdleKeys} and {@code callTimeoutMs}; absent fields take their
   * defaults. A wrong type, a value out of range and an unknown field are all errors.
   */
  public static PerKeyConfig fromJson(JsonObject json) {
    ConfigCheck check = new ConfigCheck();
    check.unknownFields(json, JSON_FIELDS);
    PerKeyConfig config = read(json, check);
    check.throwIfAny("PerKeyConfig");
    return config;
  }

  /**
   * Reads the per-key fields from {@code json} into {@code check} without throwing: for callers
   * (the verticle) that validate more fields and report every violation in one error. Unknown
   * fields are the caller's to check. Returns {@code null} when a violation was recorded.
   */
  public static PerKeyConfig read(JsonObject json, ConfigCheck check) {
    Limits limits = Limits.read(json, Limits.DEFAULTS, check);
    Boolean direct = check.readBoolean(json, "directIdleKeys");
    PerKeyConfig config = new PerKeyConfig(limits, direct == null || direct);
    config.limits.check(check);
    return check.ok() ? config : null;
  }

  /** The JSON field names this config reads. */
  public static Set<String> jsonFieldNames() {
    return JSON_FIELDS;
  }

  public JsonObject toJson() {
    return limits.writeTo(new JsonObject()).put("directIdleKeys", directIdleKeys);
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.draft = new Limits.Draft(limits);
    b.directIdleKeys = directIdleKeys;
    return b;
  }

  public int maxBatchSize() { return limits.maxBatchSize(); }
  public long maxBatchWeight() { return limits.maxBatchWeight(); }
  public int maxInFlightBatches() { return limits.maxInFlightBatches(); }
  public int maxQueueing() { return limits.maxQueueing(); }
  public long maxQueuedWeight() { return limits.maxQueuedWeight(); }
  public Duration maxBatchDelay() { return limits.maxBatchDelay(); }
  public Duration callTimeout() { return limits.callTimeout(); }
  public boolean directIdleKeys() { return directIdleKeys; }

  /** Whether idle keys are really called directly: asked for, and no batch delay to honour. */
  public boolean directCallsEnabled() {
    return directIdleKeys && limits.maxBatchDelay().isZero();
  }

  /** The shared limits, for the engine. */
  public Limits limits() {
    return limits;
  }

  @Override
  public String toString() {
    return "PerKeyConfig" + toJson().encode();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PerKeyConfig c && c.limits.equals(limits) && c.directIdleKeys == directIdleKeys;
  }

  @Override
  public int hashCode() {
    return limits.hashCode() * 31 + Boolean.hashCode(directIdleKeys);
  }

  private static Set<String> jsonFields() {
    Set<String> fields = new HashSet<>(Limits.FIELDS);
    fields.add("directIdleKeys");
    return Set.copyOf(fields);
  }

  /** Builds a {@link PerKeyConfig}; {@link #build()} validates every field at once. */
  public static final class Builder {
    private Limits.Draft draft = new Limits.Draft();
    private boolean directIdleKeys = true;

    private Builder() {}

    /** Most inputs one batch carries; at least 1. */
    public Builder maxBatchSize(int value) { draft.maxBatchSize = value; return this; }
    /** Most weight one batch carries (a single heavier input still travels alone); at least 1. */
    public Builder maxBatchWeight(long value) { draft.maxBatchWeight = value; return this; }
    /** Most batch calls of busy keys in flight at once (direct calls not counted); at least 1. */
    public Builder maxInFlightBatches(int value) { draft.maxInFlightBatches = value; return this; }
    /** Most inputs waiting in lanes; beyond it submissions are rejected at once; at least 1. */
    public Builder maxQueueing(int value) { draft.maxQueueing = value; return this; }
    /** Most total weight waiting in lanes; at least 1. */
    public Builder maxQueuedWeight(long value) { draft.maxQueuedWeight = value; return this; }
    /** Zero (default): batches form on completion. Positive: wait for company; turns direct calls off. */
    public Builder maxBatchDelay(Duration value) { draft.maxBatchDelay = value; return this; }
    /** A call not completed by then fails its callers with FAILED; at least 1 ms. */
    public Builder callTimeout(Duration value) { draft.callTimeout = value; return this; }
    /** Whether an idle key's input is called at once, as a batch of one (default true). */
    public Builder directIdleKeys(boolean value) { directIdleKeys = value; return this; }

    public PerKeyConfig build() {
      ConfigCheck check = new ConfigCheck();
      Limits limits = draft.toLimits();
      limits.check(check);
      check.throwIfAny("PerKeyConfig");
      return new PerKeyConfig(limits, directIdleKeys);
    }
  }
}
