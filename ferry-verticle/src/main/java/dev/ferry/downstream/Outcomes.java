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
    }
    return outcomes;
  }
}
