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
    if (value instanceof Number n) {
      double d = n.doubleValue();
      if ((d == Math.rint(d) && !Double.isInfinite(d)) || value instanceof java.math.BigInteger) {
        // Whole, but out of a long's range: saying "not a whole number" would mislead.
        violations.add(field + " = " + describe(value) + ": must be from " + Long.MIN_VALUE + " to " + Long.MAX_VALUE);
        return null;
      }
    }
    violations.add(field + " = " + describe(value) + ": must be a whole number");
    return null;
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

  /** Like {@link #readLong} for a field that must fit an {@code int}. */
  public Integer readInt(JsonObject json, String field) {
    Long value = readLong(json, field);
    if (value == null) {
      return null;
    }
    if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
      // Below the range too: "at most" alone would name the wrong bound for a huge negative value.
      violations.add(field + " = " + value + ": must be from " + Integer.MIN_VALUE + " to " + Integer.MAX_VALUE);
      return null;
    }
    return value.intValue();
  }

  /** A boolean field, or {@code null} when absent or null; a wrong type is recorded. */
  public Boolean readBoolean(JsonObject json, String field) {
    return read(json, field, Boolean.class, "true or false");
  }

  /** A string field, or {@code null} when absent or null; a wrong type is recorded. */
  public String readString(JsonObject json, String field) {
    return read(json, field, String.class, "a string");
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
