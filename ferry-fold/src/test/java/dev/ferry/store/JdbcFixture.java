package dev.ferry.store;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import java.util.List;

/** The shared store tests' view of a JdbcStore (H2) with its event log. */
public record JdbcFixture(JdbcStore store) implements StoreFixture {
  @Override
  public Future<List<Object>> events(String key) {
    return store.events(key);
  }

  @Override
  public Future<Void> writeOutside(String key, JsonObject state) {
    return store.tx(conn -> conn.preparedQuery("MERGE INTO accounts t USING (VALUES (CAST(? AS VARCHAR), CAST(? AS VARCHAR))) s(k, st)"
            + " ON t.\"key\" = s.k WHEN MATCHED THEN UPDATE SET version = t.version + 1, state = s.st"
            + " WHEN NOT MATCHED THEN INSERT (\"key\", version, state) VALUES (s.k, 1, s.st)")
        .execute(Tuple.of(key, state.encode())))
        .mapEmpty();
  }

  @Override
  public Future<Void> clear() {
    return store.tx(conn -> conn.query("DELETE FROM account_events").execute()
        .compose(r -> conn.query("DELETE FROM accounts").execute()))
        .mapEmpty();
  }
}
