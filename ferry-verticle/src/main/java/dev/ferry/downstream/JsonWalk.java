package dev.ferry.downstream;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;

/**
 * Which values every JSON peer can be written: an input on its way to a downstream ({@code
 * Submission#notJson}, ADR 0128) and an {@code ok} outcome on its way back to its caller ({@link
 * Outcomes}, review Y), checked by one walk. Inside a JsonObject or JsonArray, what Vert.x's JSON
 * encoding writes, but no NaN or infinity (Jackson writes them as the strings "NaN" and
 * "Infinity"), no value of a type the encoding refuses, no field name that is not a string, and no
 * nesting deeper than a request or an answer can be written with. Pure; any thread.
 */
public final class JsonWalk {
  /**
   * Levels a request wraps around each input (the request object, its "inputs" array, the input's
   * {"id", "input"} object), and an answer around each outcome ({"outcomes": [{"ok": ...}]}).
   */
  static final int WRAPPING_LEVELS = 3;

  /**
   * The deepest value a request or an answer can be written with: Jackson's bound on nesting as it
   * writes (1000 unless the application changed Jackson's defaults before Vert.x built its JSON
   * factory, which reads them once too), less the levels wrapped around it.
   */
  static final int MAX_DEPTH =
      com.fasterxml.jackson.core.StreamWriteConstraints.defaults().getMaxNestingDepth() - WRAPPING_LEVELS;

  private static final String NOT_FINITE =
      "it holds NaN or an infinite number, which JSON cannot carry (Jackson would write a string)";

  private JsonWalk() {
  }

  /** Why {@code value} cannot be written to every JSON peer, as a phrase ("it holds ..."); null if it can. */
  public static String whyNotWritable(Object value) {
    return check(value, MAX_DEPTH);
  }

  /**
   * Why {@code value}, at {@code room} levels of nesting left, cannot be written; null if it can.
   * Recursive, but never deeper than {@code room}: a value that holds itself ends there too. The
   * common leaves are tested first, by final classes (one compare each): testing each value
   * against the Map and List interfaces first made the check about ten times slower (32 ns
   * against 3 for {"amount": 1}, 168 against 22 for an object of six values, where encoding
   * either takes 0.5 to 1 us).
   */
  private static String check(Object value, int room) {
    if (value == null || value instanceof String || value instanceof Integer || value instanceof Long
        || value instanceof Boolean) {
      return null;
    }
    if (value instanceof Double d) {
      return Double.isFinite(d) ? null : NOT_FINITE;
    }
    Map<?, ?> map = value instanceof JsonObject o ? o.getMap() : null;
    List<?> list = value instanceof JsonArray a ? a.getList() : null;
    if (map == null && list == null) {
      if (value instanceof Map<?, ?> m) {
        map = m;
      } else if (value instanceof List<?> l) {
        list = l;
      } else {
        return leaf(value);
      }
    }
    if (room == 0) {
      return "it is nested deeper than " + MAX_DEPTH + " levels (Jackson's bound of " + (MAX_DEPTH + WRAPPING_LEVELS)
          + ", less the " + WRAPPING_LEVELS + " of the request or answer around it)";
    }
    if (map != null) {
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!(e.getKey() instanceof String)) {
          return "it holds a field name that is not a string";
        }
        String why = check(e.getValue(), room - 1);
        if (why != null) {
          return why;
        }
      }
      return null;
    }
    for (int i = 0, n = list.size(); i < n; i++) {
      String why = check(list.get(i), room - 1);
      if (why != null) {
        return why;
      }
    }
    return null;
  }

  /** The rarer leaves: the other types Vert.x's JSON encoding writes. */
  private static String leaf(Object value) {
    if (value instanceof java.math.BigInteger || value instanceof java.math.BigDecimal || value instanceof Short
        || value instanceof Byte) {
      return null;
    }
    if (value instanceof Number n) {
      // Float, and any other Number, which the encoding writes as its doubleValue().
      return Double.isFinite(n.doubleValue()) ? null : NOT_FINITE;
    }
    if (value instanceof java.time.Instant || value instanceof byte[] || value instanceof io.vertx.core.buffer.Buffer
        || value instanceof Enum) {
      return null; // written as strings (ISO-8601, base64, the constant's name), as Vert.x's JSON does
    }
    return "it holds a value of type " + typeName(value) + ", which JSON cannot encode";
  }

  /**
   * The type a user would name for {@code value} in a message: for a Vert.x implementation class
   * (one in an {@code impl} or {@code internal} package, as {@code BufferImpl}, {@code
   * HeadersMultiMap} or {@code SucceededFuture}) the public Vert.x type it implements ({@code
   * Buffer}, {@code MultiMap}, {@code Future}; ADR 0178), else the class's simple name (its full
   * name when it has none, as an anonymous class). Only for messages: never on the hot path.
   */
  public static String typeName(Object value) {
    Class<?> type = value.getClass();
    if (vertxInternal(type)) {
      String shown = publicVertxType(type);
      if (shown != null) {
        return shown;
      }
    }
    String simple = type.getSimpleName();
    return simple.isEmpty() ? type.getName() : simple;
  }

  private static boolean vertxInternal(Class<?> type) {
    String name = type.getName();
    return name.startsWith("io.vertx.") && (name.contains(".impl.") || name.contains(".internal."));
  }

  /** The nearest public Vert.x class or interface above {@code type}, breadth first; null if none. */
  private static String publicVertxType(Class<?> type) {
    java.util.ArrayDeque<Class<?>> next = new java.util.ArrayDeque<>();
    next.add(type);
    for (Class<?> c = next.poll(); c != null; c = next.poll()) {
      if (c != type && c.getName().startsWith("io.vertx.") && !vertxInternal(c)
          && java.lang.reflect.Modifier.isPublic(c.getModifiers())) {
        return c.getSimpleName();
      }
      next.addAll(java.util.Arrays.asList(c.getInterfaces()));
      if (c.getSuperclass() != null) {
        next.add(c.getSuperclass());
      }
    }
    return null;
  }
}
