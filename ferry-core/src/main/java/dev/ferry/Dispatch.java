package dev.ferry;

/**
 * How a {@link Ferry#perKey per-key ferry} decides which key calls next and how many calls are out
 * (ADR 0011): the {@code dispatch} field of {@link PerKeyConfig}.
 */
public enum Dispatch {
  /**
   * The default (ADR 0016). Every call, an idle key's first one included, counts against one limit learned from the
   * downstream's latency (at most {@code maxInFlightBatches}, or fixed by {@code pinnedLimit}).
   * Idle keys go first, but while busy keys wait they send about as many inputs as the last busy
   * call carried, never more calls (ADR 0014); busy keys are served oldest waiting input first.
   */
  ADAPTIVE("adaptive"),
  /**
   * The seeds' rule, opt-in (the default from ADR 0013 until 0016): at most {@code
   * maxInFlightBatches} batch calls, plus at most as many direct calls of idle keys; a key with
   * inputs left after its call goes to the back of one line.
   */
  FIXED_SLOTS("fixed-slots");

  private final String json;

  Dispatch(String json) {
    this.json = json;
  }

  /** The name in JSON configs. */
  public String jsonName() {
    return json;
  }

  /** The mode named {@code name} in JSON, or null. */
  public static Dispatch fromJson(String name) {
    for (Dispatch d : values()) {
      if (d.json.equals(name)) {
        return d;
      }
    }
    return null;
  }
}
