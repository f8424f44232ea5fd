package dev.ferry.docs;

import dev.ferry.Ferry;
import dev.ferry.FerryConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The samples of docs/guide/make-and-keyed.md (compiled here, checked by DocsSamplesTest). */
final class MakeAndKeyedSample {
  private MakeAndKeyedSample() {}

  interface EventStore {
    /** Appends in order; the offset of each event, by its id. */
    Future<Map<String, Long>> appendAll(List<JsonObject> events);
  }

  interface UserDb {
    Future<Map<String, JsonObject>> findUsersByIds(List<String> ids);
  }

  static void make(Vertx vertx, FerryConfig config, EventStore store, JsonObject event) {
    // [make]
    Ferry<JsonObject, Long> log = Ferry.make(vertx, config,
        e -> e.encode().length(),                          // weight (optional overload)
        events -> store.appendAll(events),                 // StreamCall: one call per batch
        (e, offsets) -> offsets.get(e.getString("id")));   // each caller's outcome

    log.submit(event).onSuccess(offset -> System.out.println("appended at " + offset));
    // [/make]
  }

  static void keyed(Vertx vertx, FerryConfig config, UserDb db, RoutingContext ctx) {
    // [keyed]
    Ferry<String, Optional<JsonObject>> users = Ferry.keyed(vertx, config,
        ids -> db.findUsersByIds(ids));   // Future<Map<String, JsonObject>>

    users.submit("42").onSuccess(user -> user.ifPresentOrElse(ctx::json, () -> ctx.fail(404)));
    // [/keyed]
  }
}
