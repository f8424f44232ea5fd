package dev.ferry.downstream;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * One event-bus request per batch to {@code address}. The send timeout is the call timeout, so a
 * call that is never answered still completes (failed) and frees its key.
 */
public final class EventBusDownstream implements Downstream {
  private final Vertx vertx;
  private final String address;
  private final DeliveryOptions options;

  public EventBusDownstream(Vertx vertx, String address, long sendTimeoutMs) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.address = Objects.requireNonNull(address, "address");
    if (sendTimeoutMs < 1) {
      throw new IllegalArgumentException("sendTimeoutMs must be >= 1, got " + sendTimeoutMs);
    }
    this.options = new DeliveryOptions().setSendTimeout(sendTimeoutMs);
  }

  @Override
  public Future<JsonArray> call(JsonObject request) {
    int expected = request.getJsonArray("inputs").size();
    return vertx.eventBus()
        .request(address, request, options)
        .map(reply -> Outcomes.validate(reply.body(), expected));
  }

  @Override
  public String toString() {
    return "eventbus:" + address;
  }
}
