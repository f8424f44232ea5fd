package dev.ferry.store;

import dev.ferry.Versioned;
import io.vertx.core.Future;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.jackson.JacksonCodec;
import java.io.IOException;
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

  /**
   * Refuses a null key before anything is sent. Sent, the database refused it (H2) and the failed
   * write read as "may have been written"; read, it was an absent entity.
   */
  static void requireKey(String key) {
    if (key == null) {
      throw nullKey();
    }
  }

  static NullPointerException nullKey() {
    return new NullPointerException("key must not be null: a store's entity has a key");
  }

  /**
   * Why {@code value} (an event or a state, {@code what}) cannot be stored as JSON text: it cannot
   * be encoded, or {@code illFormed} says why its text cannot travel; null when it can.
   */
  static String unencodable(Object value, String what, java.util.function.Function<String, String> illFormed) {
    String text;
    try {
      text = io.vertx.core.json.Json.encode(value);
    } catch (RuntimeException e) {
      return "the " + what + " cannot be encoded as JSON: " + e.getMessage();
    }
    return illFormed.apply(text);
  }

  /** Creates the entity table, then the events table when there is one ({@code eventsDdl} null: none). */
  static Future<Void> createTables(SqlClient client, String tableDdl, String eventsDdl) {
    Future<?> done = client.query(tableDdl).execute();
    if (eventsDdl != null) {
      done = done.compose(v -> client.query(eventsDdl).execute());
    }
    return done.mapEmpty();
  }

  // Jackson's default read limits (a string of 20,000,000 characters, a name of 50,000, a number of
  // 1,000 digits) have no counterpart on the write side: a state or event over one was written,
  // acknowledged, and then could never be read again, failing every later batch of its key. What a
  // store wrote it must read back, so its own rows are decoded without those limits. Nesting depth
  // keeps its default: writing is held to the same depth.
  private static final JsonFactory OWN_ROWS = JsonFactory.builder()
      .streamReadConstraints(StreamReadConstraints.builder()
          .maxStringLength(Integer.MAX_VALUE).maxNameLength(Integer.MAX_VALUE).maxNumberLength(Integer.MAX_VALUE)
          .build())
      .build();

  /** The rows of {@code SELECT version, state}: the entity, or absent when no row. */
  static Versioned<JsonObject> versioned(RowSet<Row> rows) {
    if (rows.size() == 0) {
      return Versioned.absent();
    }
    Row row = rows.iterator().next();
    long version = row.getLong(0);
    if (version < 1) {
      // Written outside the store: version 0 is "no entity" to a conditional write, so it would
      // insert against the row, lose every time and call it a conflict, ignoring the stored state.
      throw new IllegalStateException("the stored row is at version " + version
          + " (written outside the store), which a conditional write cannot tell from no row: give it a version of 1 or more");
    }
    Object state = decode(row.getString(1));
    if (!(state instanceof JsonObject object)) {
      throw new DecodeException("a stored state is not a JSON object");
    }
    return new Versioned<>(object, version);
  }

  /** The rows of {@code SELECT event}, in their order, each decoded from its JSON text. */
  static List<Object> events(RowSet<Row> rows) {
    List<Object> out = new ArrayList<>(rows.size());
    rows.forEach(r -> out.add(decode(r.getString(0))));
    return out;
  }

  /** Like {@code Json.decodeValue}: objects and arrays come back as JsonObject and JsonArray. */
  private static Object decode(String text) {
    try {
      return JacksonCodec.fromParser(OWN_ROWS.createParser(text), Object.class);
    } catch (IOException e) {
      throw new DecodeException("Failed to decode: " + e.getMessage(), e);
    }
  }
}
