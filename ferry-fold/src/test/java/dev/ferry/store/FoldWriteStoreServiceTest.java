package dev.ferry.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.ferry.examples.Accounts;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** StoreService speaks the downstream protocol over the event bus, on H2 through JdbcStore. */
@ExtendWith(VertxExtension.class)
class FoldWriteStoreServiceTest {
  private static final String ADDRESS = "test.accounts";
  private JdbcStore store;
  private HookedStore<String, JsonObject, Object> hooked;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    Pool pool = JdbcStore.h2Pool(vertx, "jdbc:h2:mem:service-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1", 2);
    store = JdbcStore.withEvents(pool, "accounts", "account_events");
    store.createTables().await(120, TimeUnit.SECONDS);
    hooked = new HookedStore<>(store);
    StoreService.start(vertx, ADDRESS, Accounts.foldWrite(hooked), Object.class).await(120, TimeUnit.SECONDS);
  }

  private static JsonObject request(String key, Object... inputs) {
    JsonArray list = new JsonArray();
    for (int i = 0; i < inputs.length; i++) {
      list.add(new JsonObject().put("id", "i" + i).put("input", inputs[i]));
    }
    return new JsonObject().put("key", key).put("inputs", list);
  }

  private static JsonObject ok(long v) {
    return new JsonObject().put("ok", v);
  }

  @Test
  void answersOneOutcomePerInputInOrder(Vertx vertx, VertxTestContext ctx) {
    JsonObject req = request("a", Accounts.deposit("a", 10), Accounts.withdraw("a", 30), "not an op", Accounts.withdraw("a", 4));
    vertx.eventBus().<JsonObject>request(ADDRESS, req).onComplete(ctx.succeeding(reply -> ctx.verify(() -> {
      JsonArray outcomes = reply.body().getJsonArray("outcomes");
      assertEquals(4, outcomes.size());
      assertEquals(ok(10), outcomes.getJsonObject(0));
      assertEquals("insufficient funds: balance 10, withdrawal 30", outcomes.getJsonObject(1).getString("error"));
      assertEquals(1, outcomes.getJsonObject(2).size(), "an error outcome: " + outcomes.getJsonObject(2));
      assertEquals(ok(6), outcomes.getJsonObject(3));
      store.events("a").onComplete(ctx.succeeding(events -> ctx.verify(() -> {
        assertEquals(2, events.size());
        ctx.completeNow();
      })));
    })));
  }

  @Test
  void aBatchThatCannotBeWrittenIsFailedWith502(Vertx vertx, VertxTestContext ctx) {
    hooked.onWrite((key, expected, write) -> Future.failedFuture(new IllegalStateException("database down")));
    vertx.eventBus().request(ADDRESS, request("b", Accounts.deposit("b", 1))).onComplete(ctx.failing(e -> ctx.verify(() -> {
      ReplyException re = assertInstanceOf(ReplyException.class, e);
      assertEquals(502, re.failureCode());
      ctx.completeNow();
    })));
  }

  @Test
  void aMalformedRequestIsFailedWith400(Vertx vertx, VertxTestContext ctx) {
    vertx.eventBus().request(ADDRESS, new JsonObject().put("inputs", new JsonArray())).onComplete(ctx.failing(e -> ctx.verify(() -> {
      assertEquals(400, assertInstanceOf(ReplyException.class, e).failureCode());
      ctx.completeNow();
    })));
  }

  @Test
  void aStoreRunningOutOfMemoryIsAnsweredAndStillReportedToVertx(Vertx vertx, VertxTestContext ctx) {
    OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
    hooked.onRead((key, read) -> {
      throw oom;
    });
    // Both must happen: the request gets its 502, and the error reaches Vert.x's exception handler
    // instead of vanishing into the reply's text.
    io.vertx.junit5.Checkpoint answered = ctx.checkpoint();
    io.vertx.junit5.Checkpoint reported = ctx.checkpoint();
    vertx.exceptionHandler(t -> ctx.verify(() -> {
      assertEquals(oom, t);
      reported.flag();
    }));
    vertx.eventBus().request(ADDRESS, request("c", Accounts.deposit("c", 1))).onComplete(ctx.failing(e -> ctx.verify(() -> {
      assertEquals(502, assertInstanceOf(ReplyException.class, e).failureCode());
      answered.flag();
    })));
  }
}
