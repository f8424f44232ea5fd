package dev.ferry;

import dev.ferry.internal.Limits;
import dev.ferry.internal.SettingNames;
import java.time.Duration;

/**
 * The bounds every ferry has, shared by {@link PerKeyConfig} and {@link FerryConfig}: immutable,
 * validated when built. Each field's default and rule are on {@link Builder}.
 */
public abstract sealed class FerryBounds permits PerKeyConfig, FerryConfig {
  final Limits limits;
  /**
   * The names its user wrote the settings under: the builder's, or the JSON fields' for a config
   * read from JSON, so that a message names the setting as its reader wrote it (ADR 0185). Not part
   * of the config's value (equals and hashCode leave it out).
   */
  final SettingNames names;

  static {
    // The engines read the validated limits through dev.ferry.internal, never through a public
    // method that would put an internal type in the public API.
    Limits.Access.install(bounds -> bounds.limits, bounds -> bounds.names);
  }

  FerryBounds(Limits limits, SettingNames names) {
    this.limits = limits;
    this.names = names;
  }

  public final int maxBatchSize() { return limits.maxBatchSize(); }
  public final long maxBatchWeight() { return limits.maxBatchWeight(); }
  public final int maxInFlightBatches() { return limits.maxInFlightBatches(); }
  public final int maxQueueing() { return limits.maxQueueing(); }
  public final long maxQueuedWeight() { return limits.maxQueuedWeight(); }
  public final Duration maxBatchDelay() { return limits.maxBatchDelay(); }
  public final Duration callTimeout() { return limits.callTimeout(); }
  public final Duration drainTimeout() { return limits.drainTimeout(); }

  /**
   * Sets the shared bounds; {@code build()} validates every field at once and names each one
   * violated, with its value and rule.
   *
   * @param <B> the concrete builder, returned by every setter
   */
  public abstract static sealed class Builder<B extends Builder<B>> permits PerKeyConfig.Builder, FerryConfig.Builder {
    Limits.Draft draft = new Limits.Draft();
    /**
     * The names of the config this builder came from ({@code toBuilder}), kept until the setting
     * they name is set here: a call timeout read from JSON is still the one written there.
     */
    SettingNames names = SettingNames.BUILDER;

    Builder() {}

    abstract B self();

    /** The drafted limits, or an {@link InvalidConfigException} naming every violated field. */
    final Limits validated(String what) {
      dev.ferry.internal.ConfigCheck check = new dev.ferry.internal.ConfigCheck();
      Limits limits = draft.toLimits();
      limits.check(check);
      check.throwIfAny(what);
      return limits;
    }

    /** Most inputs one batch carries; at least 1 (default 100). */
    public final B maxBatchSize(int value) { draft.maxBatchSize = value; return self(); }
    /** Most weight one batch carries (a single heavier input still travels alone); at least 1 (default unbounded). */
    public final B maxBatchWeight(long value) { draft.maxBatchWeight = value; return self(); }
    /**
     * Most calls in flight at once; at least 1. For make and keyed: the batch slots (default 16).
     * For perKey with {@link Dispatch#ADAPTIVE} (the default): the ceiling of the learned call
     * limit, every call counted (default 256); with {@link Dispatch#FIXED_SLOTS}: the fixed number
     * of batch slots, and the bound on direct calls (default 16).
     */
    public final B maxInFlightBatches(int value) {
      draft.maxInFlightBatches = value;
      draft.maxInFlightBatchesSet = true;
      return self();
    }
    /** Most inputs waiting; beyond it submissions are rejected at once; at least 1 (default 10000). */
    public final B maxQueueing(int value) { draft.maxQueueing = value; return self(); }
    /** Most total weight waiting; at least 1 (default unbounded). */
    public final B maxQueuedWeight(long value) { draft.maxQueuedWeight = value; return self(); }
    /** Zero (default): batches form on completion. Positive: wait for company (per key: turns direct calls off). */
    public final B maxBatchDelay(Duration value) { draft.maxBatchDelay = value; return self(); }
    /** A call not completed by then fails its callers with FAILED; at least 1 ms (default 30 s). */
    public final B callTimeout(Duration value) {
      draft.callTimeout = value;
      names = SettingNames.BUILDER; // written here now, under this builder's name
      return self();
    }
    /**
     * When the ferry's owner closes (the verticle whose context it is bound to undeploys, or its
     * Vert.x closes): how long waiting inputs may still be sent before every caller still waiting
     * is answered CLOSED (never sent) and every caller of a call still in flight FAILED (sent, it
     * may have been applied: ADR 0064); at least 0 (default 10 s).
     */
    public final B drainTimeout(Duration value) { draft.drainTimeout = value; return self(); }
  }
}
