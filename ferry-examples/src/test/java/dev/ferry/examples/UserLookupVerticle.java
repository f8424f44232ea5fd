package dev.ferry.examples;

import dev.ferry.Ferry;
import dev.ferry.FerryConfig;
import dev.ferry.FerryException;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@code GET /users/:id} behind {@link Ferry#keyed}: concurrent requests become one store query
 * per batch, each id fetched once however many requests ask for it.
 */
public final class UserLookupVerticle extends VerticleBase {
  private final Function<List<String>, Future<Map<String, JsonObject>>> findUsers;
  private Ferry<String, Optional<JsonObject>> users;
  private int port;

  /** @param findUsers one query for many ids; ids it does not know are simply absent from the map */
  public UserLookupVerticle(Function<List<String>, Future<Map<String, JsonObject>>> findUsers) {
    this.findUsers = findUsers;
  }

  @Override
  public Future<?> start() {
    // Created in start(), so the ferry lives on this verticle's event loop.
    FerryConfig config = FerryConfig.builder()
        .maxBatchSize(200)
        .maxBatchDelay(Duration.ofMillis(2)) // wait a little for company
        .maxInFlightBatches(4)
        .build();
    users = Ferry.keyed(vertx, config, findUsers);

    Router router = Router.router(vertx);
    router.get("/users/:id").handler(ctx -> users.submit(ctx.pathParam("id"), Duration.ofSeconds(1))
        .onSuccess(user -> {
          if (user.isPresent()) {
            ctx.json(user.get());
          } else {
            ctx.response().setStatusCode(404).end();
          }
        })
        .onFailure(e -> ctx.response().setStatusCode(((FerryException) e).code()).end(e.getMessage())));
    return vertx.createHttpServer().requestHandler(router).listen(0)
        .onSuccess(server -> port = server.actualPort());
  }

  @Override
  public Future<?> stop() {
    return users.drain(Duration.ofSeconds(5)); // answer what was accepted before going away
  }

  public int port() {
    return port;
  }
}
