package dev.ferry.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.ferry.examples.Accounts;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Review D: the stores and StoreService against what a hostile user really does. */
class FoldReviewDTest {
  private static final String ADDRESS = "test.review-d";
  private Vertx vertx;
  private Pool pool;
  private JdbcStore store;

  @BeforeEach
  void start() throws Exception {
    vertx = Vertx.vertx();
    pool = JdbcStore.h2Pool(vertx, "jdbc:h2:mem:review-d-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1", 4);
    store = JdbcStore.withEvents(pool, "accounts", "account_events");
    store.createTables().await(120, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().await(120, TimeUnit.SECONDS);
  }

  /**
   * The guide says to close the store's pool once the writes running at stop() are over, but
   * stop() completed before they were and nothing else tells when they are: closed after stop(), as
   * the main job does, the pool failed those writes, and their callers were told "may or may not
   * have been written" for batches that a clean shutdown would have written.
   */
  @Test
  void stopCompletesOnlyOnceTheWriteRunningAtStopIsOver() throws Exception {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Promise<Void> writeStarted = Promise.promise();
    Promise<Void> release = Promise.promise();
    HookedStore<String, JsonObject, Object> held = new HookedStore<String, JsonObject, Object>(store)
        .onWrite((key, expected, write) -> {
          writeStarted.tryComplete();
          return release.future().compose(v -> write.get()).andThen(ar -> log.add("write over"));
        });
    // Started on a context of the test's: the service's context, so stop() runs its steps at once.
    Context context = vertx.getOrCreateContext();
    StoreService service = on(context, () -> StoreService.start(vertx, ADDRESS, Accounts.foldWrite(held), Object.class))
        .await(120, TimeUnit.SECONDS);
    Future<Message<JsonObject>> first = vertx.eventBus().request(ADDRESS, request("k", Accounts.deposit("k", 10)));
    writeStarted.future().await(120, TimeUnit.SECONDS);

    List<Future<Void>> stopped = new ArrayList<>();
    boolean overAtOnce = on(context, () -> {
      Future<Void> f = service.stop().andThen(ar -> log.add("stopped"));
      stopped.add(f);
      return Future.succeededFuture(f.isComplete());
    }).await(120, TimeUnit.SECONDS);
    release.complete();
    stopped.get(0).await(120, TimeUnit.SECONDS);

    assertFalse(overAtOnce, "stop() completed while the write it let finish was still running");
    assertEquals(List.of("write over", "stopped"), List.copyOf(log),
        "closing the pool once stop() completed would fail a write still running");
    assertEquals(new JsonObject().put("ok", 10L), first.await(120, TimeUnit.SECONDS).body().getJsonArray("outcomes").getJsonObject(0));
  }

  private static <T> Future<T> on(Context context, Supplier<Future<T>> action) {
    Promise<T> done = Promise.promise();
    context.runOnContext(v -> action.get().onComplete(done));
    return done.future();
  }

  private static JsonObject request(String key, Object... inputs) {
    JsonArray list = new JsonArray();
    for (int i = 0; i < inputs.length; i++) {
      list.add(new JsonObject().put("id", "i" + i).put("input", inputs[i]));
    }
    return new JsonObject().put("key", key).put("inputs", list);
  }
}
