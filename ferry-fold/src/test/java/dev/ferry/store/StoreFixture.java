package dev.ferry.store;

import dev.ferry.VersionedStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;

/** What the shared store tests need from one database: the store, its event log, and a writer outside Ferry. */
public interface StoreFixture {
  VersionedStore<String, JsonObject, Object> store();

  Future<List<Object>> events(String key);

  /** Another writer, in plain SQL: sets the state and bumps the version (creating the row if absent), no event. */
  Future<Void> writeOutside(String key, JsonObject state);

  /** Empties the tables between tests. */
  Future<Void> clear();
}
