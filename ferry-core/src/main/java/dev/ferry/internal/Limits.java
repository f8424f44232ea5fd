package dev.ferry.internal;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Set;

/**
 * The bounds shared by every ferry (per key and stream), immutable and validated once.
 * {@link dev.ferry.PerKeyConfig} and {@link dev.ferry.FerryConfig} are thin public faces over it.
 */
public record Limits(
    int maxBatchSize,
    long maxBatchWeight,
    int maxInFlightBatches,
    int maxQueueing,
    long maxQueuedWeight,
    Duration maxBatchDelay,
    Duration callTimeout,
    Duration drainTimeout) {

  public static final long UNBOUNDED = Long.MAX_VALUE;

  /**
   * The engines' way to the limits inside a public config ({@link dev.ferry.FerryBounds} keeps
   * them package-private so that no public signature names this internal type). Installed once by
   * FerryBounds' class initialisation, which happens before any config exists.
   */
  public static final class Access {
    private static volatile java.util.function.Function<dev.ferry.FerryBounds, Limits> reader;
    private static volatile java.util.function.Function<dev.ferry.FerryBounds, SettingNames> namer;

    private Access() {}

    public static void install(java.util.function.Function<dev.ferry.FerryBounds, Limits> r,
        java.util.function.Function<dev.ferry.FerryBounds, SettingNames> n) {
      reader = r;
      namer = n;
    }

    public static Limits of(dev.ferry.FerryBounds bounds) {
      return reader.apply(bounds);
    }

    /** The names its user wrote the config's settings under (ADR 0185). */
    public static SettingNames names(dev.ferry.FerryBounds bounds) {
      return namer.apply(bounds);
    }
  }

  /** The longest duration in ms the engines can hold: they keep time in nanoseconds. */
  public static final long MAX_MS = Long.MAX_VALUE / 1_000_000;

  public static final Limits DEFAULTS =
      new Limits(100, UNBOUNDED, 16, 10_000, UNBOUNDED, Duration.ZERO, Duration.ofSeconds(30),
          Duration.ofSeconds(10));

  /** The JSON field names these limits read and write. */
  public static final Set<String> FIELDS =
      Set.of("maxBatchSize", "maxBatchWeight", "maxInFlightBatches", "maxQueueing",
          "maxQueuedWeight", "maxBatchDelayMs", "callTimeoutMs", "drainTimeoutMs");

  /** The names of a config read from JSON ({@link #read}): its fields' (ADR 0185). */
  public static final SettingNames JSON_NAMES = new SettingNames("callTimeoutMs");

  /** Records every violated rule; the caller throws once with all of them. */
  public void check(ConfigCheck check) {
    check.require(maxBatchSize >= 1, "maxBatchSize", maxBatchSize, "must be >= 1");
    check.require(maxBatchWeight >= 1, "maxBatchWeight", maxBatchWeight, "must be >= 1");
    check.require(maxInFlightBatches >= 1, "maxInFlightBatches", maxInFlightBatches, "must be >= 1");
    check.require(maxQueueing >= 1, "maxQueueing", maxQueueing, "must be >= 1");
    check.require(maxQueuedWeight >= 1, "maxQueuedWeight", maxQueuedWeight, "must be >= 1");
    Duration longest = Duration.ofMillis(MAX_MS);
    check.require(maxBatchDelay != null && !maxBatchDelay.isNegative() && maxBatchDelay.compareTo(longest) <= 0,
        "maxBatchDelay", maxBatchDelay, "must be >= 0 and <= " + MAX_MS + " ms");
    check.require(callTimeout != null && callTimeout.compareTo(Duration.ofMillis(1)) >= 0 && callTimeout.compareTo(longest) <= 0,
        "callTimeout", callTimeout, "must be >= 1 ms and <= " + MAX_MS + " ms");
    check.require(drainTimeout != null && !drainTimeout.isNegative() && drainTimeout.compareTo(longest) <= 0,
        "drainTimeout", drainTimeout, "must be >= 0 and <= " + MAX_MS + " ms");
  }

  /** Reads the shared fields from {@code json} over {@code base}; wrong types are recorded. */
  public static Limits read(JsonObject json, Limits base, ConfigCheck check) {
    Long size = readAtLeastOne(json, "maxBatchSize", Integer.MIN_VALUE, Integer.MAX_VALUE, check);
    Long batchWeight = readAtLeastOne(json, "maxBatchWeight", Long.MIN_VALUE, Long.MAX_VALUE, check);
    Long inFlight = readAtLeastOne(json, "maxInFlightBatches", Integer.MIN_VALUE, Integer.MAX_VALUE, check);
    Long queueing = readAtLeastOne(json, "maxQueueing", Integer.MIN_VALUE, Integer.MAX_VALUE, check);
    Long queuedWeight = readAtLeastOne(json, "maxQueuedWeight", Long.MIN_VALUE, Long.MAX_VALUE, check);
    Long delayMs = readMs(json, "maxBatchDelayMs", 0, check);
    Long callTimeoutMs = readMs(json, "callTimeoutMs", 1, check);
    Long drainTimeoutMs = readMs(json, "drainTimeoutMs", 0, check);
    return new Limits(
        size != null ? size.intValue() : base.maxBatchSize,
        batchWeight != null ? batchWeight : base.maxBatchWeight,
        inFlight != null ? inFlight.intValue() : base.maxInFlightBatches,
        queueing != null ? queueing.intValue() : base.maxQueueing,
        queuedWeight != null ? queuedWeight : base.maxQueuedWeight,
        delayMs != null ? Duration.ofMillis(delayMs) : base.maxBatchDelay,
        callTimeoutMs != null ? Duration.ofMillis(callTimeoutMs) : base.callTimeout,
        drainTimeoutMs != null ? Duration.ofMillis(drainTimeoutMs) : base.drainTimeout);
  }

  /**
   * A field whose rule is >= 1 and whose type holds {@code min} to {@code max}: a value within the
   * type is judged by {@link #check} ("must be >= 1"); one past it, on either side, is refused
   * naming the field's whole rule, the top its type sets included (3000000000 is >= 1, yet no
   * maxBatchSize).
   */
  private static Long readAtLeastOne(JsonObject json, String field, long min, long max, ConfigCheck check) {
    return check.readWhole(json, field, min, max, "must be >= 1 and <= " + max);
  }

  /**
   * A millisecond field, checked here under its JSON name; an out-of-range value (past a long's
   * range too: 1e30) is recorded with the field's rule and null returned, so the default stands in
   * and the rule is not reported twice.
   */
  private static Long readMs(JsonObject json, String field, long min, ConfigCheck check) {
    return check.readWhole(json, field, min, MAX_MS, "must be >= " + min + " and <= " + MAX_MS);
  }

  /** Writes the fields under their JSON names; unbounded weights are left out. */
  public JsonObject writeTo(JsonObject json) {
    json.put("maxBatchSize", maxBatchSize);
    if (maxBatchWeight != UNBOUNDED) {
      json.put("maxBatchWeight", maxBatchWeight);
    }
    json.put("maxInFlightBatches", maxInFlightBatches).put("maxQueueing", maxQueueing);
    if (maxQueuedWeight != UNBOUNDED) {
      json.put("maxQueuedWeight", maxQueuedWeight);
    }
    return json.put("maxBatchDelayMs", Deadlines.ceilMillis(maxBatchDelay)).put("callTimeoutMs", Deadlines.ceilMillis(callTimeout))
        .put("drainTimeoutMs", Deadlines.ceilMillis(drainTimeout));
  }

  /** A mutable draft of limits; the public config builders validate what it builds. */
  public static final class Draft {
    public int maxBatchSize = DEFAULTS.maxBatchSize;
    public long maxBatchWeight = DEFAULTS.maxBatchWeight;
    public int maxInFlightBatches = DEFAULTS.maxInFlightBatches;
    public int maxQueueing = DEFAULTS.maxQueueing;
    public long maxQueuedWeight = DEFAULTS.maxQueuedWeight;
    public Duration maxBatchDelay = DEFAULTS.maxBatchDelay;
    public Duration callTimeout = DEFAULTS.callTimeout;
    public Duration drainTimeout = DEFAULTS.drainTimeout;
    /** Whether {@link #maxInFlightBatches} was set by the user (its default may depend on other fields). */
    public boolean maxInFlightBatchesSet;

    public Draft() {}

    public Draft(Limits from) {
      maxBatchSize = from.maxBatchSize;
      maxBatchWeight = from.maxBatchWeight;
      maxInFlightBatches = from.maxInFlightBatches;
      maxQueueing = from.maxQueueing;
      maxQueuedWeight = from.maxQueuedWeight;
      maxBatchDelay = from.maxBatchDelay;
      callTimeout = from.callTimeout;
      drainTimeout = from.drainTimeout;
      maxInFlightBatchesSet = true;
    }

    public Limits toLimits() {
      return new Limits(maxBatchSize, maxBatchWeight, maxInFlightBatches, maxQueueing,
          maxQueuedWeight, maxBatchDelay, callTimeout, drainTimeout);
    }
  }
}
