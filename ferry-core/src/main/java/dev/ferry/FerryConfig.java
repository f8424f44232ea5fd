package dev.ferry;

import dev.ferry.internal.ConfigCheck;
import dev.ferry.internal.Limits;
import io.vertx.core.json.JsonObject;
import java.util.Objects;
import java.util.Set;

/**
 * The bounds of a stream ferry ({@link Ferry#make} and {@link Ferry#keyed}): immutable,
 * validated once when built. Same fields and defaults as {@link PerKeyConfig}, less {@code
 * directIdleKeys} (one stream has no idle keys).
 */
public final class FerryConfig extends FerryBounds {
  private FerryConfig(Limits limits, dev.ferry.internal.SettingNames names) {
    super(limits, names);
  }

  public static FerryConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Reads a config from JSON ({@code maxBatchDelayMs}, {@code callTimeoutMs} and {@code drainTimeoutMs} in ms); unknown fields are errors. */
  public static FerryConfig fromJson(JsonObject json) {
    // Named here, with the way to the defaults: the reader's own NullPointerException said neither.
    Objects.requireNonNull(json, "json is null; FerryConfig.defaults() gives the defaults");
    ConfigCheck check = new ConfigCheck();
    check.unknownFields(json, Limits.FIELDS);
    Limits limits = Limits.read(json, Limits.DEFAULTS, check);
    limits.check(check);
    check.throwIfAny("FerryConfig");
    return new FerryConfig(limits, Limits.JSON_NAMES);
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
    b.names = names;
    return b;
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
  public static final class Builder extends FerryBounds.Builder<Builder> {
    private Builder() {}

    @Override
    Builder self() {
      return this;
    }

    public FerryConfig build() {
      Limits limits = validated("FerryConfig");
      return new FerryConfig(limits, names);
    }
  }
}
