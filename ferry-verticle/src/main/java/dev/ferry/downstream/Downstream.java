package dev.ferry.downstream;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The far side of a {@link dev.ferry.verticle.FerryVerticle}: one call carries one key's batch.
 *
 * <p>The request (see {@link OutgoingBatch#seal()}) is {@code {"key": "<key>", "inputs": [{"id": <id or null>, "input": <body>}, ...]}};
 * the answer is {@code {"outcomes": [{"ok": <value>} | {"error": "<reason>"}, ...]}}, one outcome
 * per input in the same order. Implementations check the answer with {@link Outcomes#validate}, so
 * a caller of {@link #call} gets either exactly one well-formed outcome per input or a failed
 * Future (transport failure, timeout, non-2xx, not JSON, wrong length): the whole batch fails.
 *
 * <p>The returned Future must complete eventually (a transport timeout is the usual guard): the
 * ferry keeps the key reserved until it does, so that a key never has two calls on the wire.
 */
public interface Downstream {

  /**
   * Sends one batch: seals it ({@link OutgoingBatch#seal()}) right before writing, and completes
   * with the validated outcomes of the inputs the sealed request carries (an empty array when
   * sealing left none, and nothing was sent).
   */
  Future<JsonArray> call(OutgoingBatch batch);

  /**
   * Releases what the downstream holds (connections); calls still in flight fail. The default
   * holds nothing.
   */
  default Future<Void> close() {
    return Future.succeededFuture();
  }

  /** The request body for one batch; {@code inputs} holds {@code {"id", "input"}} objects in sending order. */
  static JsonObject request(String key, JsonArray inputs) {
    return new JsonObject().put("key", key).put("inputs", inputs);
  }
}
