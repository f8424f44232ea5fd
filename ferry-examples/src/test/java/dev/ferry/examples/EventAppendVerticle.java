package dev.ferry.examples;

import dev.ferry.Ferry;
import dev.ferry.FerryConfig;
import dev.ferry.FerryException;
import dev.ferry.StreamCall;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;
import java.time.Duration;
import java.util.Map;

/**
 * {@code POST /events} behind {@link Ferry#make}: each request's event is appended to a log in
 * bulk (group commit), and each caller gets back the offset its own event was written at.
 */
public final class EventAppendVerticle extends VerticleBase {
  /** Appends events in one write; answers each event's offset, by the event's {@code id}. */
  private final StreamCall<JsonObject, Map<String, Long>> appendAll;
  private Ferry<JsonObject, Long> log;
  private int port;

  public EventAppendVerticle(StreamCall<JsonObject, Map<String, Long>> appendAll) {
    this.appendAll = appendAll;
  }

  @Override
  public Future<?> start() {
    FerryConfig config = FerryConfig.builder()
        .maxBatchSize(500)
        .maxBatchWeight(1 << 20) // at most ~1 MiB of events per write
        .maxInFlightBatches(1) // one write at a time: what arrives meanwhile goes in the next one
        .build();
    log = Ferry.make(vertx, config, event -> event.encode().length(), appendAll,
        (event, offsets) -> offsets.get(event.getString("id")));

    Router router = Router.router(vertx);
    router.post("/events").handler(BodyHandler.create()).handler(ctx -> {
      JsonObject event = ctx.body().asJsonObject();
      if (event == null || event.getString("id") == null) {
        ctx.response().setStatusCode(400).end("an event is a JSON object with an id");
        return;
      }
      log.submit(event)
          .onSuccess(offset -> ctx.json(new JsonObject().put("offset", offset)))
          .onFailure(e -> ctx.response().setStatusCode(((FerryException) e).code()).end(e.getMessage()));
    });
    return vertx.createHttpServer().requestHandler(router).listen(0)
        .onSuccess(server -> port = server.actualPort());
  }

  @Override
  public Future<?> stop() {
    return log.drain(Duration.ofSeconds(5));
  }

  public int port() {
    return port;
  }
}
