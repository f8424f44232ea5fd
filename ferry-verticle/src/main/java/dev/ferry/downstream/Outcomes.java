package dev.ferry.downstream;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Checks a downstream's answer. Strict about what the ferry relies on (one outcome per input, each
 * with exactly one of {@code ok} or a string {@code error}); lenient about extra fields, so a
 * downstream may add its own (timings, versions) without breaking the ferry.
 */
public final class Outcomes {
  private Outcomes() {}

  /** Parses an HTTP body, then validates it; a body that is not JSON is malformed. */
  public static JsonArray validate(Buffer body, int expected) {
    Object parsed;
    try {
      parsed = body == null || body.length() == 0 ? null : new JsonObject(body);
    } catch (DecodeException | ClassCastException e) {
      // Never quote the body: it may carry payloads.
      throw new DownstreamException("the answer is not a JSON object");
    }
    return validate(parsed, expected);
  }

  /** Validates an answer body; returns its outcomes array, or throws {@link DownstreamException}. */
  public static JsonArray validate(Object answer, int expected) {
    if (!(answer instanceof JsonObject json)) {
      throw new DownstreamException("the answer is not a JSON object but "
          + (answer == null ? "empty" : answer.getClass().getSimpleName()));
    }
    if (!(json.getValue("outcomes") instanceof JsonArray outcomes)) {
      throw new DownstreamException("the answer has no \"outcomes\" array");
    }
    if (outcomes.size() != expected) {
      throw new DownstreamException("the answer has " + outcomes.size()
          + " outcomes for " + expected + " inputs");
    }
    for (int i = 0; i < expected; i++) {
      if (!(outcomes.getValue(i) instanceof JsonObject outcome)) {
        throw new DownstreamException("outcome " + i + " is not a JSON object");
      }
      if (outcome.size() == 1 && outcome.containsKey("ok")) {
        requireFinite(outcome.getValue("ok"), i);
        continue; // the common shape, in one lookup
      }
      boolean ok = outcome.containsKey("ok");
      boolean error = outcome.containsKey("error");
      if (ok == error) {
        throw new DownstreamException("outcome " + i + " must have exactly one of \"ok\" and \"error\"");
      }
      if (error && !(outcome.getValue("error") instanceof String)) {
        throw new DownstreamException("outcome " + i + " has an \"error\" that is not a string");
      }
      if (ok) {
        requireFinite(outcome.getValue("ok"), i);
      }
    }
    return outcomes;
  }

  /**
   * An "ok" value holding NaN or an infinite number (1e999 parses as Infinity) is no JSON value:
   * the caller's input would be refused for it (400), and relayed it reached a JSON caller (the
   * TCP bridge, another node) as the string "Infinity". Malformed, as the contract's 502 says.
   */
  private static void requireFinite(Object value, int i) {
    if (!finite(value, 0)) {
      throw new DownstreamException("outcome " + i + " holds NaN or an infinite number, which JSON cannot carry");
    }
  }

  private static boolean finite(Object value, int depth) {
    if (value instanceof Double d) {
      return Double.isFinite(d);
    }
    if (value instanceof Float f) {
      return Float.isFinite(f);
    }
    java.util.Collection<?> inside = value instanceof JsonObject o ? o.getMap().values()
        : value instanceof JsonArray a ? a.getList()
        : value instanceof java.util.Map<?, ?> m ? m.values()
        : value instanceof java.util.List<?> l ? l : null;
    if (inside == null || depth > 1000) {
      return true; // a deeper value cannot be encoded anyway: the event bus or the bridge refuses it
    }
    for (Object v : inside) {
      if (!finite(v, depth + 1)) {
        return false;
      }
    }
    return true;
  }
}
