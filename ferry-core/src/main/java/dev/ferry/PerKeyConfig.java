package dev.ferry;

import dev.ferry.internal.ConfigCheck;
import dev.ferry.internal.Limits;
import dev.ferry.internal.SettingNames;
import io.vertx.core.json.JsonObject;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The bounds of a {@link Ferry#perKey per-key ferry}: immutable, validated once when built.
 *
 * <p>Defaults: {@code dispatch} {@link Dispatch#ADAPTIVE adaptive} (ADR 0016), {@code
 * pinnedLimit} none (adaptive only: the call limit is learned), {@code maxBatchSize} 100, {@code
 * maxBatchWeight} unbounded, {@code maxInFlightBatches} 256 (the ceiling of the learned limit) with
 * adaptive dispatch and 16 (the seeds' batch slots) with {@code "fixed-slots"}, {@code maxQueueing} 10000, {@code maxQueuedWeight} unbounded, {@code
 * maxBatchDelay} zero (batches form on completion, no timer), {@code directIdleKeys} true, {@code
 * callTimeout} 30 s, {@code drainTimeout} 10 s. An invalid config never builds: {@link InvalidConfigException} names every
 * violated field with its value and rule.
 */
public final class PerKeyConfig extends FerryBounds {
  private static final Set<String> JSON_FIELDS = jsonFields();

  /** The default {@code maxInFlightBatches} with fixed slots (the seeds' mode, opt-in since ADR 0016): 16 batch slots. */
  public static final int DEFAULT_MAX_IN_FLIGHT = 16;
  /**
   * The default {@code maxInFlightBatches} with adaptive dispatch (the default mode): the ceiling of
   * a learned limit, high enough for a large pool.
   */
  public static final int DEFAULT_ADAPTIVE_CEILING = 256;
  /** The dispatch mode when none is given: adaptive (ADR 0016; fixed slots from ADR 0013 until then). */
  public static final Dispatch DEFAULT_DISPATCH = Dispatch.ADAPTIVE;
  private static final Limits FIXED_DEFAULTS = defaults(Dispatch.FIXED_SLOTS);
  private static final Limits ADAPTIVE_DEFAULTS = defaults(Dispatch.ADAPTIVE);

  private final boolean directIdleKeys;
  private final Dispatch dispatch;
  private final int pinnedLimit;

  private PerKeyConfig(Limits limits, SettingNames names, boolean directIdleKeys, Dispatch dispatch, int pinnedLimit) {
    super(limits, names);
    this.directIdleKeys = directIdleKeys;
    this.dispatch = dispatch;
    this.pinnedLimit = pinnedLimit;
  }

  public static PerKeyConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads a config from JSON with the field names {@code dispatch} ({@code "adaptive"} or {@code
   * "fixed-slots"}), {@code pinnedLimit}, {@code maxBatchSize}, {@code maxBatchWeight}, {@code
   * maxInFlightBatches}, {@code maxQueueing}, {@code maxQueuedWeight}, {@code maxBatchDelayMs},
   * {@code directIdleKeys}, {@code callTimeoutMs} and {@code drainTimeoutMs}; absent fields take their defaults. A wrong
   * type, a value out of range and an unknown field are all errors.
   */
  public static PerKeyConfig fromJson(JsonObject json) {
    // Named here, with the way to the defaults: the reader's own NullPointerException said neither.
    Objects.requireNonNull(json, "json is null; PerKeyConfig.defaults() gives the defaults");
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
    // A value it does not take is recorded, and the default stands in for it meanwhile.
    String mode = check.readChoice(json, "dispatch", Dispatch.ADAPTIVE.jsonName(), Dispatch.FIXED_SLOTS.jsonName());
    Dispatch dispatch = mode == null ? DEFAULT_DISPATCH : Dispatch.fromJson(mode);
    Limits limits = Limits.read(json, dispatch == Dispatch.ADAPTIVE ? ADAPTIVE_DEFAULTS : FIXED_DEFAULTS, check);
    Boolean direct = check.readBoolean(json, "directIdleKeys");
    // Past an int the value cannot be held, so it is refused here with the rule check() names
    // (not the int's range), and 0 stands in.
    Long pinned = check.readWhole(json, "pinnedLimit", Integer.MIN_VALUE, Integer.MAX_VALUE, pinnedRule(limits, check));
    PerKeyConfig config = new PerKeyConfig(limits, Limits.JSON_NAMES, direct == null || direct, dispatch, pinned == null ? 0 : pinned.intValue());
    config.check(check);
    return check.ok() ? config : null;
  }

  /** The JSON field names this config reads. */
  public static Set<String> jsonFieldNames() {
    return JSON_FIELDS;
  }

  private void check(ConfigCheck check) {
    limits.check(check);
    check.require(pinnedLimit == 0 || dispatch == Dispatch.ADAPTIVE, "pinnedLimit", pinnedLimit,
        "only with dispatch \"adaptive\" (fixed-slots uses maxInFlightBatches)");
    // 0 (learn it) is always allowed, and a positive one is held only to a ceiling the operator gave
    // and we accepted: against a refused maxInFlightBatches a default stands in, and judging
    // pinnedLimit by that default would refuse a value the operator's own ceiling allows.
    boolean ceilingKnown = !check.refused("maxInFlightBatches") && limits.maxInFlightBatches() >= 1;
    check.require(pinnedLimit == 0 || (pinnedLimit >= 1
        && (!ceilingKnown || pinnedLimit <= limits.maxInFlightBatches())), "pinnedLimit", pinnedLimit,
        pinnedRule(limits, check));
  }

  /**
   * The rule, quoting the ceiling only when it is one we accept: not a default standing in for a
   * refused one, nor one below 1 (refused by its rule only once the fields are read, after a
   * pinnedLimit past an int has had this rule written for it).
   */
  private static String pinnedRule(Limits limits, ConfigCheck check) {
    String ceiling = check.refused("maxInFlightBatches") || limits.maxInFlightBatches() < 1
        ? "maxInFlightBatches"
        : "maxInFlightBatches (" + limits.maxInFlightBatches() + ")";
    return "must be >= 1 and <= " + ceiling + ", or 0/absent to learn the limit";
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("dispatch", dispatch.jsonName());
    if (pinnedLimit > 0) {
      json.put("pinnedLimit", pinnedLimit);
    }
    return limits.writeTo(json).put("directIdleKeys", directIdleKeys);
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.draft = new Limits.Draft(limits);
    b.names = names;
    b.directIdleKeys = directIdleKeys;
    b.dispatch = dispatch;
    b.pinnedLimit = pinnedLimit;
    return b;
  }

  /**
   * Adaptive: idle keys go first (while busy keys wait, about as many inputs as the last busy call
   * carried, never more calls) and are sent at
   * once while the limit allows. Fixed slots: idle keys are called at once, outside the batch
   * slots, while fewer than {@code maxInFlightBatches} such calls are out.
   */
  public boolean directIdleKeys() {
    return directIdleKeys;
  }

  /** The dispatch mode (ADR 0011, 0013, 0016). */
  public Dispatch dispatch() {
    return dispatch;
  }

  /** The call limit fixed by the config, or 0 when it is learned (adaptive dispatch only). */
  public int pinnedLimit() {
    return pinnedLimit;
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
    return o instanceof PerKeyConfig c && c.limits.equals(limits) && c.directIdleKeys == directIdleKeys
        && c.dispatch == dispatch && c.pinnedLimit == pinnedLimit;
  }

  @Override
  public int hashCode() {
    return ((limits.hashCode() * 31 + Boolean.hashCode(directIdleKeys)) * 31 + dispatch.hashCode()) * 31 + pinnedLimit;
  }

  private static Limits defaults(Dispatch dispatch) {
    Limits.Draft draft = new Limits.Draft();
    draft.maxInFlightBatches = maxInFlightDefault(dispatch);
    return draft.toLimits();
  }

  /** {@code maxInFlightBatches} when it is not set: the mode decides (ADR 0013, 0016). */
  private static int maxInFlightDefault(Dispatch dispatch) {
    return dispatch == Dispatch.ADAPTIVE ? DEFAULT_ADAPTIVE_CEILING : DEFAULT_MAX_IN_FLIGHT;
  }

  private static Set<String> jsonFields() {
    Set<String> fields = new HashSet<>(Limits.FIELDS);
    fields.add("directIdleKeys");
    fields.add("dispatch");
    fields.add("pinnedLimit");
    return Set.copyOf(fields);
  }

  /** Builds a {@link PerKeyConfig}; {@link #build()} validates every field at once. */
  public static final class Builder extends FerryBounds.Builder<Builder> {
    private boolean directIdleKeys = true;
    private Dispatch dispatch = DEFAULT_DISPATCH;
    private int pinnedLimit;

    private Builder() {
      draft.maxInFlightBatches = maxInFlightDefault(DEFAULT_DISPATCH);
    }

    @Override
    Builder self() {
      return this;
    }

    /** Whether idle keys go first, their input called at once while the bound allows (default true). */
    public Builder directIdleKeys(boolean value) {
      directIdleKeys = value;
      return this;
    }

    /**
     * The dispatch mode (default {@link Dispatch#ADAPTIVE}, ADR 0016; {@link Dispatch#FIXED_SLOTS}
     * for the seeds' rule). Unless {@code maxInFlightBatches} is set, it also picks that default: a
     * ceiling of 256 for the adaptive limit, or 16 slots.
     */
    public Builder dispatch(Dispatch value) {
      dispatch = value;
      return this;
    }

    /**
     * Fixes the call limit of adaptive dispatch instead of learning it: 1 to {@code
     * maxInFlightBatches}; 0 (default) learns it.
     */
    public Builder pinnedLimit(int value) {
      pinnedLimit = value;
      return this;
    }

    public PerKeyConfig build() {
      ConfigCheck check = new ConfigCheck();
      // A local: a failed build must leave the builder as the user set it, null included, so that
      // building it again fails again rather than quietly picking the default.
      Dispatch mode = dispatch;
      if (mode == null) {
        check.violation("dispatch = null: must be ADAPTIVE or FIXED_SLOTS");
        mode = DEFAULT_DISPATCH;
      }
      if (!draft.maxInFlightBatchesSet) {
        draft.maxInFlightBatches = maxInFlightDefault(mode);
      }
      PerKeyConfig config = new PerKeyConfig(draft.toLimits(), names, directIdleKeys, mode, pinnedLimit);
      config.check(check);
      check.throwIfAny("PerKeyConfig");
      return config;
    }
  }
}
