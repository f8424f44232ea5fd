package dev.ferry.store;

import dev.ferry.Versioned;
import io.vertx.core.Future;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link PgStore} and {@link JdbcStore} share apart from their SQL dialect: the order in which
 * the tables are created and how a selected row becomes a state or an event. Each store keeps its
 * own SQL text; the columns these read are the same in both (state and events as JSON text).
 * Stateless; the futures complete wherever the client completes them.
 */
final class SqlStores {
  private SqlStores() {}

  /** Creates the entity table, then the events table when there is one ({@code eventsDdl} null: none). */
  static Future<Void> createTables(SqlClient client, String tableDdl, String eventsDdl) {
    Future<?> done = client.query(tableDdl).execute();
    if (eventsDdl != null) {
      done = done.compose(v -> client.query(eventsDdl).execute());
    }
    return done.mapEmpty();
  }

  /** The rows of {@code SELECT version, state}: the entity, or absent when no row. */
  static Versioned<JsonObject> versioned(RowSet<Row> rows) {
    if (rows.size() == 0) {
      return Versioned.absent();
    }
    Row row = rows.iterator().next();
    return new Versioned<>(new JsonObject(row.getString(1)), row.getLong(0));
  }

  /** The rows of {@code SELECT event}, in their order, each decoded from its JSON text. */
  static List<Object> events(RowSet<Row> rows) {
    List<Object> out = new ArrayList<>(rows.size());
    rows.forEach(r -> out.add(Json.decodeValue(r.getString(0))));
    return out;
  }
}
