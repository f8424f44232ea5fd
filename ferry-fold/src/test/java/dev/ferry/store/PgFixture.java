package dev.ferry.store;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import java.util.List;

/** The shared store tests' view of a PgStore with its event log. */
public record PgFixture(PgStore store) implements StoreFixture {
  @Override
  public Future<List<Object>> events(String key) {
    return store.events(key);
  }

  @Override
  public Future<Void> writeOutside(String key, JsonObject state) {
    return store.pool().preparedQuery("INSERT INTO accounts (key, version, state) VALUES ($1, 1, $2::text::jsonb)"
            + " ON CONFLICT (key) DO UPDATE SET version = accounts.version + 1, state = EXCLUDED.state")
        .execute(Tuple.of(key, state.encode()))
        .mapEmpty();
  }

  @Override
  public Future<Void> clear() {
    return store.pool().query("TRUNCATE accounts, account_events").execute().mapEmpty();
  }
}
