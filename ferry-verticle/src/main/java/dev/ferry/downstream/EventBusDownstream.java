package dev.ferry.downstream;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One event-bus request per batch to {@code address}. The send timeout is the call timeout, so a
 * call that is never answered still completes (failed) and frees its key; {@link #close()} fails
 * the calls still waiting for an answer at once. Used on the ferry's event loop only (requests
 * are answered on the context that sent them), so the set of open calls needs no lock.
 */
public final class EventBusDownstream implements Downstream {
  private final Vertx vertx;
  private final String address;
  private final DeliveryOptions options;
  private final Set<Promise<JsonArray>> open = new HashSet<>();

  public EventBusDownstream(Vertx vertx, String address, long sendTimeoutMs) {
    this(vertx, address, sendTimeoutMs, null);
  }

  /**
   * @param codecName the codec to send requests with (a local one that does not copy them, when
   *     every consumer is in this JVM), or null for Vert.x's JSON codec
   */
  public EventBusDownstream(Vertx vertx, String address, long sendTimeoutMs, String codecName) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.address = Objects.requireNonNull(address, "address");
    if (sendTimeoutMs < 1) {
      throw new IllegalArgumentException("sendTimeoutMs must be >= 1, got " + sendTimeoutMs);
    }
    this.options = new DeliveryOptions().setSendTimeout(sendTimeoutMs).setCodecName(codecName);
  }

  @Override
  public Future<JsonArray> call(OutgoingBatch batch) {
    // A request is written as it is sent: seal at once.
    JsonObject request = batch.seal();
    if (request == null) {
      return Future.succeededFuture(new JsonArray());
    }
    int expected = batch.sealedSize();
    Promise<JsonArray> outcomes = Promise.promise();
    open.add(outcomes);
    vertx.eventBus().request(address, request, options).onComplete(ar -> {
      open.remove(outcomes);
      if (ar.failed()) {
        outcomes.tryFail(ar.cause());
        return;
      }
      try {
        outcomes.tryComplete(Outcomes.validate(ar.result().body(), expected));
      } catch (DownstreamException e) {
        outcomes.tryFail(e);
      }
    });
    return outcomes.future();
  }

  @Override
  public Future<Void> close() {
    List<Promise<JsonArray>> cut = new ArrayList<>(open);
    open.clear();
    for (Promise<JsonArray> call : cut) {
      call.tryFail(new DownstreamException("the downstream was closed before it answered"));
    }
    return Future.succeededFuture();
  }

  @Override
  public String toString() {
    return "eventbus:" + address;
  }
}
