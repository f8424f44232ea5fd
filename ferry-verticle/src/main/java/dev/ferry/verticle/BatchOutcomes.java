package dev.ferry.verticle;

import dev.ferry.FerryException;
import dev.ferry.downstream.Downstream;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * Turns one key's batch of {@link Submission}s into a downstream call, and the validated outcomes
 * back into each caller's result. Runs on the verticle's event loop.
 */
public final class BatchOutcomes {
  private BatchOutcomes() {}

  /** Numbers each input by its place in the batch, then calls the downstream. */
  public static Future<JsonArray> call(Downstream downstream, String key, List<Submission> batch) {
    JsonArray inputs = new JsonArray(new java.util.ArrayList<>(batch.size()));
    for (int i = 0; i < batch.size(); i++) {
      Submission s = batch.get(i);
      s.slot = i;
      inputs.add(s.toRequestInput());
    }
    return downstream.call(Downstream.request(key, inputs));
  }

  /**
   * The caller's own outcome: the {@code ok} value, or a {@link FerryException} INPUT_REJECTED
   * with the downstream's reason (which fails only this caller).
   */
  public static Object extract(Submission input, JsonArray outcomes) {
    JsonObject outcome = outcomes.getJsonObject(input.slot);
    if (outcome.containsKey("error")) {
      throw FerryException.inputRejected(outcome.getString("error"));
    }
    return outcome.getValue("ok");
  }
}
