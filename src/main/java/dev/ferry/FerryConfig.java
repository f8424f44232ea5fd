package dev.ferry;

import dev.ferry.internal.ConfigCheck;
import dev.ferry.internal.Limits;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Set;

/**
 * The bounds of a single-queue ferry ({@link Ferry#make} and {@link Ferry#keyed}): immutable,
 * validated once when built. Same fields and defaults as {@link PerKeyConfig}, less {@code
 * directIdleKeys} (one stream has no idle keys).
 */
public final class FerryConfig {
  private final Limits limits;

  private FerryConfig(Limits limits) {
    this.limits = limits;
  }

  public static FerryConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Reads a config from JSON ({@code maxBatchDelayMs} and {@code callTimeoutMs} in ms); unknown fields are errors. */
  public static FerryConfig fromJson(JsonObject json) {
    ConfigCheck check = new ConfigCheck();
    check.unknownFields(json, Limits.FIELDS);
    Limits limits = Limits.read(json, Limits.DEFAULTS, check);
    limits.check(check);
    check.throwIfAny("FerryConfig");
    return new FerryConfig(limits);
  }

  public static Set<String> jsonFieldNames() {
    return Limits.FIELDS;
  }

  public JsonObject toJson() {
    return limits.writeTo(new JsonObject());
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.draft = new Limits.Draft(limits);
    return b;
  }

  public int maxBatchSize() { return limits.maxBatchSize(); }
  public long maxBatchWeight() { return limits.maxBatchWeight(); }
  public int maxInFlightBatches() { return limits.maxInFlightBatches(); }
  public int maxQueueing() { return limits.maxQueueing(); }
  public long maxQueuedWeight() { return limits.maxQueuedWeight(); }
  public Duration maxBatchDelay() { return limits.maxBatchDelay(); }
  public Duration callTimeout() { return limits.callTimeout(); }

  public Limits limits() {
    return limits;
  }

  @Override
  public String toString() {
    return "FerryConfig" + toJson().encode();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FerryConfig c && c.limits.equals(limits);
  }

  @Override
  public int hashCode() {
    return limits.hashCode();
  }

  /** Builds a {@link FerryConfig}; {@link #build()} validates every field at once. */
  public static final class Builder {
    private Limits.Draft draft = new Limits.Draft();

    private Builder() {}

    public Builder maxBatchSize(int value) { draft.maxBatchSize = value; return this; }
    public Builder maxBatchWeight(long value) { draft.maxBatchWeight = value; return this; }
    public Builder maxInFlightBatches(int value) { draft.maxInFlightBatches = value; return this; }
    public Builder maxQueueing(int value) { draft.maxQueueing = value; return this; }
    public Builder maxQueuedWeight(long value) { draft.maxQueuedWeight = value; return this; }
    public Builder maxBatchDelay(Duration value) { draft.maxBatchDelay = value; return this; }
    public Builder callTimeout(Duration value) { draft.callTimeout = value; return this; }

    public FerryConfig build() {
      ConfigCheck check = new ConfigCheck();
      Limits limits = draft.toLimits();
      limits.check(check);
      check.throwIfAny("FerryConfig");
      return new FerryConfig(limits);
    }
  }
}
