package dev.ferry.docs;

import dev.ferry.Ferry;
import dev.ferry.FoldDecision;
import dev.ferry.FoldWrite;
import dev.ferry.PerKeyConfig;
import dev.ferry.VersionedStore;
import dev.ferry.examples.Accounts;
import dev.ferry.store.JdbcStore;
import dev.ferry.store.PgServer;
import dev.ferry.store.PgStore;
import dev.ferry.store.StoreService;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;

/** The samples of docs/guide/fold-write.md (compiled here, checked by DocsSamplesTest). */
final class FoldWriteSample {
  private FoldWriteSample() {}

  // [apply]
  static FoldDecision<JsonObject, Long> apply(JsonObject state, Object input) {
    JsonObject op = (JsonObject) input;
    long balance = state.getLong("balance");
    long deposit = op.getLong("deposit", 0L);
    long withdraw = op.getLong("withdraw", 0L);
    if (withdraw > balance) {
      return FoldDecision.reject("insufficient funds: balance " + balance + ", withdrawal " + withdraw);
    }
    long next = deposit > 0 ? balance + deposit : balance - withdraw;
    return FoldDecision.accept(new JsonObject().put("balance", next), next);
  }
  // [/apply]

  static void build(Vertx vertx, VersionedStore<String, JsonObject, Object> store) {
    // [build]
    FoldWrite<String, JsonObject, Object, Long> fw =
        FoldWrite.<String, JsonObject, Object, Long>builder(store, FoldWriteSample::apply)
            .initial(Accounts::opened)        // {"balance": 0} for a new account
            .maxAttempts(5)
            .build();

    // Either let FoldWrite build the ferry ...
    Ferry<Object, Long> ferry = fw.ferry(vertx, PerKeyConfig.defaults(), op -> Accounts.accountOf((JsonObject) op));
    // ... or pass it to Ferry.perKey yourself, with its ready-made extract:
    Ferry<Object, Long> same = Ferry.perKey(vertx, PerKeyConfig.defaults(),
        op -> Accounts.accountOf((JsonObject) op), fw, fw::extract);

    ferry.submit(Accounts.withdraw("a1", 500))
        .onFailure(e -> System.out.println(e.getMessage())); // insufficient funds: balance 0, withdrawal 500
    // [/build]
  }

  static Future<PgStore> postgres(Vertx vertx) {
    // [pg]
    Pool pool = PgBuilder.pool()
        .with(new PoolOptions().setMaxSize(8))
        .connectingTo(new PgConnectOptions().setHost("db").setDatabase("app").setUser("app").setPassword("..."))
        .using(vertx)
        .build();
    PgStore store = PgStore.withEvents(pool, "accounts", "account_events"); // or PgStore.of(pool, "accounts")
    // CREATE TABLE IF NOT EXISTS, for demos and tests: submit only once it completed
    Future<PgStore> ready = store.createTables().map(store);
    // [/pg]
    return ready;
  }

  static Future<JdbcStore> h2(Vertx vertx) {
    // [h2]
    Pool pool = JdbcStore.h2Pool(vertx, "jdbc:h2:./data/ferry", 4);   // or jdbc:h2:mem:x;DB_CLOSE_DELAY=-1
    JdbcStore store = JdbcStore.withEvents(pool, "accounts", "account_events");
    Future<JdbcStore> ready = store.createTables().map(store);       // wait for it before the first submit
    // [/h2]
    return ready;
  }

  static void service(Vertx vertx, JdbcStore store) {
    // [service]
    StoreService.start(vertx, "accounts.store", Accounts.foldWrite(store), Object.class);
    // FerryVerticle config: "downstream": {"type": "eventbus", "address": "accounts.store"}
    // [/service]
  }

  static void tests(Vertx vertx) {
    // [test-server]
    PgServer server = PgServer.start();                 // once per test class
    Pool pool = server.pool(vertx, 8);
    PgStore store = PgStore.withEvents(pool, "accounts", "account_events");
    // [/test-server]
  }
}
