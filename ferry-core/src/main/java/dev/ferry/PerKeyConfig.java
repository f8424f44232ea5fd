package dev.ferry;

import dev.ferry.internal.ConfigCheck;
import dev.ferry.internal.Limits;
import io.vertx.core.json.JsonObject;
import java.util.HashSet;
import java.util.List;
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
public final class PerKeyConfig extends FerryBounds {
  private static final Set<String> JSON_FIELDS = jsonFields();

  private final boolean directIdleKeys;

  private PerKeyConfig(Limits limits, boolean directIdleKeys) {
    super(limits);
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
   * Reads the per-key fields from {@code json} without throwing, adding one line per violated
   * field to {@code violations}: for callers (the verticle, an application's own config) that
   * validate more fields and report every violation in one error. Unknown fields are the caller's
   * to check. Returns {@code null} when a violation was found.
   */
  public static PerKeyConfig read(JsonObject json, List<String> violations) {
    ConfigCheck check = new ConfigCheck();
    PerKeyConfig config = read(json, check);
    violations.addAll(check.violations());
    return config;
  }

  private static PerKeyConfig read(JsonObject json, ConfigCheck check) {
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

  public boolean directIdleKeys() {
    return directIdleKeys;
  }

  /** Whether idle keys are really called directly: asked for, and no batch delay to honour. */
  public boolean directCallsEnabled() {
    return directIdleKeys && limits.maxBatchDelay().isZero();
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
  public static final class Builder extends FerryBounds.Builder<Builder> {
    private boolean directIdleKeys = true;

    private Builder() {}

    @Override
    Builder self() {
      return this;
    }

    /** Whether an idle key's input is called at once, as a batch of one (default true). */
    public Builder directIdleKeys(boolean value) {
      directIdleKeys = value;
      return this;
    }

    public PerKeyConfig build() {
      Limits limits = validated("PerKeyConfig");
      return new PerKeyConfig(limits, directIdleKeys);
    }
  }
}
