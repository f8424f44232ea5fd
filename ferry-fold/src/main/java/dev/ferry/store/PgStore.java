package dev.ferry.store;

import dev.ferry.Versioned;
import dev.ferry.VersionedStore;
import dev.ferry.WriteRefusedException;
import io.vertx.core.Future;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.Objects;

/**
 * A {@link VersionedStore} on PostgreSQL through the Vert.x reactive client: entities in a table
 * {@code (key text primary key, version bigint, state jsonb)} and, when an events table is named,
 * every applied input appended to {@code (key, version, seq, event jsonb)} atomically with the
 * version bump.
 *
 * <p>A conditional write is one statement, hence one round trip and its own transaction: the
 * entity update (or insert of a new entity) and the events insert are data-modifying CTEs, and the
 * events insert reads the update's returned rows, so a conflict (no row updated) appends nothing.
 * See {@code docs/adr/0031-one-statement-conditional-write.md}.
 *
 * <p>State is a {@link JsonObject}; events are JSON values (JsonObject, JsonArray, String, Number,
 * Boolean). Both travel as text and are cast to jsonb in SQL, so a String event stays a JSON string.
 */
public final class PgStore implements VersionedStore<String, JsonObject, Object> {
  private final Pool pool;
  private final String table;
  private final String events;
  private final String readSql;
  private final String updateSql;
  private final String insertSql;

  private PgStore(Pool pool, String table, String events) {
    this.pool = Objects.requireNonNull(pool, "pool");
    this.table = SqlNames.check("table", table, SqlNames.POSTGRESQL_RESERVED);
    this.events = events == null ? null : SqlNames.checkEvents(table, events, SqlNames.POSTGRESQL_RESERVED);
    this.readSql = "SELECT version, state::text FROM " + table + " WHERE key = $1";
    String appendEvents = events == null ? "" : ", ev AS (INSERT INTO " + events
        + " (key, version, seq, event) SELECT w.key, w.version, x.seq, x.event::jsonb FROM w,"
        + " unnest($4::text[]) WITH ORDINALITY AS x(event, seq))";
    this.updateSql = "WITH w AS (UPDATE " + table + " SET version = version + 1, state = $3::text::jsonb"
        + " WHERE key = $1 AND version = $2 RETURNING key, version)" + appendEvents
        + " SELECT count(*) FROM w";
    // A new entity: the insert loses to a concurrent creator instead of overwriting it. The unused
    // $2 (expected version 0) keeps one parameter layout for both statements.
    this.insertSql = "WITH w AS (INSERT INTO " + table + " (key, version, state)"
        + " SELECT $1, $2::bigint + 1, $3::text::jsonb ON CONFLICT (key) DO NOTHING RETURNING key, version)"
        + appendEvents + " SELECT count(*) FROM w";
  }

  /** A store over {@code table} only: states and versions, no event log. */
  public static PgStore of(Pool pool, String table) {
    return new PgStore(pool, table, null);
  }

  /** The event-store flavour: also appends each batch's applied inputs to {@code eventsTable}. */
  public static PgStore withEvents(Pool pool, String table, String eventsTable) {
    return new PgStore(pool, table, Objects.requireNonNull(eventsTable, "eventsTable"));
  }

  /** The pool this store writes through (for closing it, or for reading it directly). */
  public Pool pool() {
    return pool;
  }

  /** Creates the tables if they do not exist. */
  public Future<Void> createTables() {
    return SqlStores.createTables(pool,
        "CREATE TABLE IF NOT EXISTS " + table + " (key text PRIMARY KEY, version bigint NOT NULL, state jsonb NOT NULL)",
        events == null ? null : "CREATE TABLE IF NOT EXISTS " + events
            + " (key text NOT NULL, version bigint NOT NULL, seq bigint NOT NULL, event jsonb NOT NULL,"
            + " PRIMARY KEY (key, version, seq))");
  }

  /**
   * {@inheritDoc}
   *
   * <p>Fails, reading nothing, for a key PostgreSQL cannot hold unchanged (see {@link #write}).
   */
  @Override
  public Future<Versioned<JsonObject>> read(String key) {
    String bad = illFormed("key", key);
    if (bad != null) {
      return Future.failedFuture(refused(key, bad));
    }
    return pool.preparedQuery(readSql).execute(Tuple.of(key)).map(SqlStores::versioned);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Throws {@link IllegalArgumentException}, sending nothing, when the key, the state or an
   * event holds a lone surrogate (text that is not well-formed UTF-16): PostgreSQL keeps text as
   * UTF-8, into which the client encodes a lone surrogate as {@code ?}, so the row would silently
   * differ from what was written and two different keys would share one row; likewise when one
   * holds the NUL character, which PostgreSQL refuses in text and jsonb; likewise a double that is
   * NaN or infinite (JSON has none: it would be stored as the string "NaN") or a number beyond
   * jsonb's numeric (PostgreSQL would refuse the statement). Thrown, not a failed
   * Future, because nothing was sent: a failed Future would mean the outcome is unknown.
   */
  @Override
  public Future<Boolean> write(String key, JsonObject state, long expectedVersion, List<?> applied) {
    SqlStores.requireKey(key);
    String sql = expectedVersion == 0 ? insertSql : updateSql;
    String stateText = state.encode();
    String[] eventTexts = events == null ? null : eventTexts(applied);
    String bad = illFormed("key", key);
    bad = bad != null ? bad : illFormed("state", stateText, true);
    for (int i = 0; bad == null && eventTexts != null && i < eventTexts.length; i++) {
      bad = illFormed("event " + i, eventTexts[i], true);
    }
    if (bad != null) {
      throw new IllegalArgumentException(bad);
    }
    SqlStores.requireStorableNumbers("state", state, true);
    if (eventTexts != null) {
      SqlStores.requireStorableNumbers("events", applied, true);
    }
    Tuple params = Tuple.of(key, expectedVersion, stateText);
    if (eventTexts != null) {
      params.addArrayOfString(eventTexts);
    }
    // One statement: an error PostgreSQL answers (PgException) means it rolled back, nothing
    // written; any other failure (a connection lost while it ran) leaves the outcome unknown. The
    // connection is taken first, apart: a pool that gives none (all busy and no room to wait, the
    // server refusing connections, the pool closed) sent nothing, which pool.preparedQuery reported
    // as the same failed Future as a statement lost in flight, "may have been written" (review Q).
    return pool.getConnection()
        .recover(e -> Future.failedFuture(new WriteRefusedException(key, e)))
        .compose(conn -> conn.preparedQuery(sql).execute(params).eventually(conn::close)
            .map(PgStore::countIsOne)
            .recover(e -> Future.failedFuture(refusedOutright(e) ? new WriteRefusedException(key, e) : e)));
  }

  /**
   * Whether a failed write was refused outright, nothing written: an error PostgreSQL answered
   * (the client fails a query with it only once the server is ready for the next, the statement
   * rolled back). Not one whose very code says the outcome is unknown: 40003
   * (statement_completion_unknown: CockroachDB's "result is ambiguous") or a connection error
   * (class 08, as a pooler may answer for a lost server); nor FATAL or PANIC (the client reports
   * those as a closed connection anyway). ADR 0145.
   *
   * <p>Read from the code, not the severity: the client keeps the severity the server wrote in its
   * own language (lc_messages: a German server's ERROR is FEHLER), so a refusal read as unknown
   * wherever the server does not speak English (review D). The classes whose errors come as FATAL
   * or PANIC, or tell of a failing system, stay unknown: 57P (operator intervention: shutdown,
   * crash), 58 (system error: I/O), XX (internal error), 25P03 (a session's timeout).
   */
  static boolean refusedOutright(Throwable e) {
    if (!(e instanceof PgException pg) || "FATAL".equals(pg.getSeverity()) || "PANIC".equals(pg.getSeverity())) {
      return false;
    }
    String state = pg.getSqlState();
    return state != null && state.length() == 5 && !state.equals("40003") && !state.equals("25P03")
        && !state.startsWith("08") && !state.startsWith("57P") && !state.startsWith("58") && !state.startsWith("XX");
  }

  /**
   * {@inheritDoc}
   *
   * <p>With an events table: an event JSON cannot encode, holding a double that is NaN or infinite
   * or a number beyond jsonb's numeric, or whose text holds a lone surrogate or NUL (see {@link
   * #write}). Without one nothing is recorded, so nothing is refused.
   */
  @Override
  public String refusal(Object event) {
    return events == null ? null : SqlStores.unencodable(event, "event", true, text -> illFormed("event", text, true));
  }

  /**
   * {@inheritDoc}
   *
   * <p>A state JSON cannot encode, holding a double that is NaN or infinite or a number beyond
   * jsonb's numeric, or whose text holds a lone surrogate or NUL (see {@link #write}).
   */
  @Override
  public String stateRefusal(JsonObject state) {
    return SqlStores.unencodable(state, "state", true, text -> illFormed("state", text, true));
  }

  /** The events recorded for {@code key}, oldest first (empty without an events table). */
  public Future<List<Object>> events(String key) {
    if (events == null) {
      return Future.succeededFuture(List.of());
    }
    String bad = illFormed("key", key);
    if (bad != null) {
      return Future.failedFuture(refused(key, bad));
    }
    return pool.preparedQuery("SELECT event::text FROM " + events + " WHERE key = $1 ORDER BY version, seq")
        .execute(Tuple.of(key))
        .map(SqlStores::events);
  }

  /**
   * Each event's JSON text, encoded alone, as {@link #refusal} encodes it: sent as a text array and
   * cast to jsonb one by one, each stored as its own row. Sent as one jsonb array, an event nested
   * as deep as the encoder allows sat a level deeper and failed the write, and the batch's events
   * were held to jsonb's limit on one value (268,435,455 bytes) in all, so events each storable
   * failed their batch together (review Q).
   */
  private static String[] eventTexts(List<?> applied) {
    String[] texts = new String[applied.size()];
    for (int i = 0; i < texts.length; i++) {
      texts[i] = Json.encode(applied.get(i));
    }
    return texts;
  }

  /** Why {@code text} cannot travel to PostgreSQL unchanged, or null when it can. */
  private static String illFormed(String what, String text) {
    return illFormed(what, text, false);
  }

  /**
   * Why {@code text} cannot travel to PostgreSQL unchanged, or null when it can: a lone surrogate,
   * or the NUL character, which neither text nor jsonb holds (PostgreSQL refuses the statement). In
   * JSON text ({@code json}) NUL is a backslash, "u0000"; after an escaped backslash, "u0000" is text,
   * not NUL.
   */
  private static String illFormed(String what, String text, boolean json) {
    if (text == null) {
      return what + " is null";
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\\' && json && i + 1 < text.length()) {
        i++; // the escaped character: only a unicode escape can spell NUL
        if (text.charAt(i) == 'u' && text.startsWith("0000", i + 1)) {
          return nul(what);
        }
        continue;
      }
      if (c == 0) {
        return nul(what);
      }
      if (!Character.isSurrogate(c)) {
        continue;
      }
      if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
        continue;
      }
      return what + " holds a lone surrogate at index " + i + " (not well-formed UTF-16):"
          + " PostgreSQL would store it altered, so nothing was sent";
    }
    return null;
  }

  private static String nul(String what) {
    return what + " holds the NUL character, which PostgreSQL text and jsonb cannot hold, so nothing was sent";
  }

  private static RuntimeException refused(String key, String why) {
    return key == null ? SqlStores.nullKey() : new IllegalArgumentException(why);
  }

  private static boolean countIsOne(RowSet<Row> rows) {
    return rows.iterator().next().getLong(0) == 1L;
  }
}
