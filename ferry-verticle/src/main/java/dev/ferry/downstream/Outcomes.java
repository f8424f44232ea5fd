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
          + (answer == null ? "empty" : JsonWalk.typeName(answer)));
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
        requireWritable(outcome.getValue("ok"), i);
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
        requireWritable(outcome.getValue("ok"), i);
      }
    }
    return outcomes;
  }

  /**
   * An "ok" value its caller may not receive as JSON is malformed, as the contract's 502 says: one
   * holding NaN or an infinite number (1e999 parses as Infinity: the caller's input would be refused
   * for it, 400, and relayed it reached a JSON caller, the TCP bridge or another node, as the string
   * "Infinity"); one nested deeper than an HTTP downstream's answer can be read with (an event-bus
   * downstream's JsonObject can be any depth, and the bridge, writing its reply frame, threw: its
   * client's input was never answered, review Y); or one holding a value of no JSON type (a local
   * downstream replying with the verticle's uncopying codec).
   */
  private static void requireWritable(Object value, int i) {
    String why = JsonWalk.whyNotWritable(value);
    if (why != null) {
      throw new DownstreamException("outcome " + i + " cannot be written as JSON: " + why);
    }
  }
}
