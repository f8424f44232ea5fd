package dev.ferry.store;

import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;

/** The FoldWrite store tests on an in-memory H2 database through Vert.x's JDBC client. */
class FoldWriteJdbcStoreTest extends FoldWriteStoreContract {
  private Pool pool;

  @Override
  protected StoreFixture start(Vertx vertx) throws Exception {
    pool = JdbcStore.h2Pool(vertx, "jdbc:h2:mem:foldwrite-contract;DB_CLOSE_DELAY=-1", 8);
    JdbcStore store = JdbcStore.withEvents(pool, "accounts", "account_events");
    store.createTables().await(120, TimeUnit.SECONDS);
    return new JdbcFixture(store);
  }

  @Override
  protected void stop() throws Exception {
    if (pool != null) {
      pool.close().await(120, TimeUnit.SECONDS);
    }
  }
}
