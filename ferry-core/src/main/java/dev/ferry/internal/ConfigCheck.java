package dev.ferry.internal;

import dev.ferry.InvalidConfigException;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Collects every violation of a configuration before failing, so that one error names them all.
 * Reads JSON strictly: a wrong type, an out-of-range value and an unknown field are violations,
 * never silently ignored. Not thread-safe; used once per build.
 */
public final class ConfigCheck {
  private final List<String> violations = new ArrayList<>();

  public void require(boolean ok, String field, Object value, String rule) {
    if (!ok) {
      violations.add(field + " = " + value + ": " + rule);
    }
  }

  public void violation(String text) {
    violations.add(text);
  }

  /** The violations so far, one line each. */
  public List<String> violations() {
    return List.copyOf(violations);
  }

  /** Whether a violation names {@code field} (its value was refused, and a default stands in). */
  public boolean refused(String field) {
    String prefix = field + " = ";
    return violations.stream().anyMatch(v -> v.startsWith(prefix));
  }

  public boolean ok() {
    return violations.isEmpty();
  }

  public void throwIfAny(String what) {
    if (!violations.isEmpty()) {
      throw new InvalidConfigException(what, violations);
    }
  }

  /** Every field of {@code json} not in {@code known} is a violation (a typo is an error). */
  public void unknownFields(JsonObject json, Set<String> known) {
    for (String field : json.fieldNames()) {
      if (!known.contains(field)) {
        violations.add(field + ": unknown field (known: " + String.join(", ", new java.util.TreeSet<>(known)) + ")");
      }
    }
  }

  /** A whole number field, or {@code null} when absent or null; a wrong type is recorded. */
  public Long readLong(JsonObject json, String field) {
    Object value = json.getValue(field);
    if (value == null) {
      return null;
    }
    Long whole = wholeNumber(value);
    if (whole != null) {
      return whole;
    }
    if (wholePastLong(value)) {
      // Whole, but out of a long's range: saying "not a whole number" would mislead.
      violations.add(field + " = " + describe(value) + ": must be from " + Long.MIN_VALUE + " to " + Long.MAX_VALUE);
      return null;
    }
    violations.add(field + " = " + describe(value) + ": must be a whole number");
    return null;
  }

  /**
   * A whole number field whose type holds {@code min} to {@code max}, or {@code null} when absent
   * or null. A whole number past them, past a long's too, is recorded with the field's own
   * {@code rule} and the value as given, and null returned (the default stands in, so the field's
   * check does not name it twice): the type's range is no rule the operator can act on, and its
   * negative half read as allowed for a field that must be >= 1. A value within them is returned
   * for the field's own check; one that is no whole number is recorded as {@link #readLong} does.
   */
  public Long readWhole(JsonObject json, String field, long min, long max, String rule) {
    Object value = json.getValue(field);
    if (value == null) {
      return null;
    }
    Long whole = wholeNumber(value);
    if (whole != null && whole >= min && whole <= max) {
      return whole;
    }
    // A whole number is shown as one (5000.0 as 5000, as the field is read); past a long, as given.
    if (whole != null) {
      violations.add(field + " = " + whole + ": " + rule);
    } else {
      violations.add(field + " = " + describe(value) + ": " + (wholePastLong(value) ? rule : "must be a whole number"));
    }
    return null;
  }

  /** Whether {@code value} is a whole number too large (or too small) for a long. */
  private static boolean wholePastLong(Object value) {
    if (!(value instanceof Number n) || wholeNumber(value) != null) {
      return false;
    }
    double d = n.doubleValue();
    return value instanceof java.math.BigInteger || (d == Math.rint(d) && !Double.isInfinite(d));
  }

  /**
   * {@code value} as {@link #readLong} takes it (10, 10.0, a BigDecimal or BigInteger 10), or null
   * where it refuses it; for readers that must agree with it (the typed verticle options).
   */
  public static Long wholeNumber(Object value) {
    if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
      return ((Number) value).longValue();
    }
    if (value instanceof Number n) {
      double d = n.doubleValue();
      if (d == Math.rint(d) && Math.abs(d) < 0x1p63) {
        return (long) d;
      }
    }
    return null;
  }

  /** A boolean field, or {@code null} when absent or null; a wrong type is recorded. */
  public Boolean readBoolean(JsonObject json, String field) {
    return read(json, field, Boolean.class, "true or false");
  }

  /** A string field, or {@code null} when absent or null; a wrong type is recorded. */
  public String readString(JsonObject json, String field) {
    return read(json, field, String.class, "a string");
  }

  /**
   * A string field that takes one of {@code values}, or {@code null} when absent or null. Anything
   * else, a wrong type included, is recorded with the values it may take ({@code must be "a" or
   * "b"}), never "must be a string", which names none of them; and {@code null} is returned.
   */
  public String readChoice(JsonObject json, String field, String... values) {
    Object value = json.getValue(field);
    if (value == null || (value instanceof String s && java.util.Arrays.asList(values).contains(s))) {
      return (String) value;
    }
    StringBuilder rule = new StringBuilder("must be ");
    for (int i = 0; i < values.length; i++) {
      rule.append(i == 0 ? "" : i == values.length - 1 ? " or " : ", ").append('"').append(values[i]).append('"');
    }
    violations.add(field + " = " + describe(value) + ": " + rule);
    return null;
  }

  /** A JSON object field, or {@code null} when absent or null; a wrong type is recorded. */
  public JsonObject readObject(JsonObject json, String field) {
    return read(json, field, JsonObject.class, "a JSON object");
  }

  private <T> T read(JsonObject json, String field, Class<T> type, String mustBe) {
    Object value = json.getValue(field);
    if (value == null || type.isInstance(value)) {
      return type.cast(value);
    }
    violations.add(field + " = " + describe(value) + ": must be " + mustBe);
    return null;
  }

  private static String describe(Object value) {
    return value instanceof String s ? "\"" + s + "\"" : String.valueOf(value);
  }
}
