package dev.ferry.downstream;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

/**
 * One key's batch on its way to a {@link Downstream}. Its request body is made by {@link #seal()}
 * at the moment the downstream can write it, not when the batch left its lane: a batch may wait
 * (for a pooled connection, say), and an input whose caller's deadline passed meanwhile must be
 * left out, never sent (its caller has had its 504). Used on the ferry's event loop only.
 */
public interface OutgoingBatch {

  /** The batch's key. */
  String key();

  /** The earliest caller deadline among its inputs ({@link System#nanoTime()}), or {@link Long#MAX_VALUE}. */
  long earliestDeadline();

  /**
   * Drops every input whose deadline has passed and returns the request for the rest, {@code
   * {"key": ..., "inputs": [{"id": ..., "input": ...}, ...]}}, or {@code null} when none is left
   * (then nothing may be sent). Called at most once, right before the request is written.
   */
  JsonObject seal();

  /** How many inputs the sealed request carries: the number of outcomes the answer must hold. */
  int sealedSize();

  /**
   * {@link #seal()}, encoded as JSON for a downstream that writes bytes; {@code null} when nothing
   * is left to send. An implementation may leave out (and answer) inputs whose bodies JSON cannot
   * encode; this default leaves the encoding's exception to the caller.
   */
  default Buffer sealEncoded() {
    JsonObject request = seal();
    return request == null ? null : request.toBuffer();
  }
}
