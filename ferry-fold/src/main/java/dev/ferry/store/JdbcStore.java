package dev.ferry.store;

import dev.ferry.Versioned;
import dev.ferry.VersionedStore;
import dev.ferry.WriteRefusedException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.jdbcclient.JDBCConnectOptions;
import io.vertx.jdbcclient.JDBCPool;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * The same {@link VersionedStore} as {@link PgStore}, over JDBC through Vert.x's JDBC client, made
 * for an embedded H2 database: a demo or a single node runs the production code path with no
 * server to install. The client runs every JDBC call on a worker thread, so the event loop never
 * blocks. See {@code docs/adr/0032-jdbc-store-for-the-embedded-default.md}.
 *
 * <p>Same tables and the same conditional-write SQL as PgStore, except that JDBC has no
 * data-modifying CTEs: the update and the event inserts run in one transaction instead of one
 * statement (in process, so the extra steps cost no network round trip). States and events are
 * stored as JSON text.
 */
public final class JdbcStore implements VersionedStore<String, JsonObject, Object> {
  private static final String UNIQUE_VIOLATION = "23505";

  private final Pool pool;
  private final String table;
  private final String events;

  private JdbcStore(Pool pool, String table, String events) {
    this.pool = Objects.requireNonNull(pool, "pool");
    this.table = SqlNames.check("table", table, SqlNames.H2_RESERVED);
    this.events = events == null ? null : SqlNames.checkEvents(table, events, SqlNames.H2_RESERVED);
  }

  /** A store over {@code table} in the database behind {@code pool}; no event log. */
  public static JdbcStore of(Pool pool, String table) {
    return new JdbcStore(pool, table, null);
  }

  /** The event-store flavour: also appends each batch's applied inputs to {@code eventsTable}. */
  public static JdbcStore withEvents(Pool pool, String table, String eventsTable) {
    return new JdbcStore(pool, table, Objects.requireNonNull(eventsTable, "eventsTable"));
  }

  /**
   * A pool on an H2 database, e.g. {@code jdbc:h2:mem:ferry;DB_CLOSE_DELAY=-1} (in memory, kept
   * while the JVM lives) or {@code jdbc:h2:./data/ferry} (a file).
   */
  public static Pool h2Pool(Vertx vertx, String jdbcUrl, int maxSize) {
    return JDBCPool.pool(vertx, new JDBCConnectOptions().setJdbcUrl(jdbcUrl), new PoolOptions().setMaxSize(maxSize));
  }

  /**
   * The pool this store writes through, for closing it. Give this store a pool of its own, and run
   * any other statement on it through {@link #tx}, never bare (see there).
   */
  public Pool pool() {
    return pool;
  }

  /** Creates the tables if they do not exist (H2 types: JSON held as text). */
  public Future<Void> createTables() {
    return tx(conn -> SqlStores.createTables(conn,
        "CREATE TABLE IF NOT EXISTS " + table
            + " (\"key\" VARCHAR PRIMARY KEY, version BIGINT NOT NULL, state VARCHAR NOT NULL)",
        events == null ? null : "CREATE TABLE IF NOT EXISTS " + events
            + " (\"key\" VARCHAR NOT NULL, version BIGINT NOT NULL, seq BIGINT NOT NULL, event VARCHAR NOT NULL,"
            + " PRIMARY KEY (\"key\", version, seq))"));
  }

  @Override
  public Future<Versioned<JsonObject>> read(String key) {
    if (key == null) {
      return Future.failedFuture(SqlStores.nullKey());
    }
    return tx(conn -> conn.preparedQuery("SELECT version, state FROM " + table + " WHERE \"key\" = ?")
        .execute(Tuple.of(key)))
        .map(SqlStores::versioned);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The state and events are encoded here, before the call returns, as PgStore does: one that
   * cannot be encoded, or that holds a double that is NaN or infinite (JSON has none: it would be
   * stored as a string), throws, nothing sent, and what is written is what they were at the call,
   * even if the objects change while the write waits for a connection.
   */
  @Override
  public Future<Boolean> write(String key, JsonObject state, long expectedVersion, List<?> applied) {
    SqlStores.requireKey(key);
    String stateText = state.encode();
    SqlStores.requireStorableNumbers("state", state, false);
    // Without an events table nothing is recorded: an event is neither encoded nor refused (as
    // refusal says), so one JSON cannot encode does not fail a write that does not keep it.
    List<String> toAppend = new ArrayList<>(events == null ? 0 : applied.size());
    for (Object event : events == null ? List.of() : applied) {
      toAppend.add(Json.encode(event));
      SqlStores.requireStorableNumbers("event", event, false);
    }
    // The connection is taken first, apart: a pool that gives none (all busy and no room to wait,
    // the pool closed) sent nothing, which withTransaction reported as the same failed Future as a
    // commit without an answer, "may have been written" (review Q).
    Future<Boolean> written = pool.getConnection()
        .recover(e -> Future.failedFuture(new WriteRefusedException(key, e)))
        .compose(conn -> inTransaction(conn, key, c -> bump(c, key, stateText, expectedVersion)
            .compose(ok -> ok ? append(c, key, expectedVersion + 1, toAppend).map(true) : Future.succeededFuture(false))
            // A statement that failed before the commit (a constraint, a lock timeout, the
            // connection lost): the transaction is rolled back and no commit was sent, so nothing
            // was written. Only a failed commit leaves the outcome unknown (ADR 0145, review Q).
            .recover(e -> Future.failedFuture(e instanceof LostCreation ? e : new WriteRefusedException(key, e)))));
    // Two creators of one new entity: the loser's insert breaks the primary key. That is a version
    // conflict (its transaction rolled back, nothing written), not a store failure.
    return written.recover(e -> e instanceof LostCreation ? Future.succeededFuture(false) : Future.failedFuture(e));
  }

  /** {@inheritDoc} With an events table: an event JSON cannot encode, or holding a double that is NaN or infinite. */
  @Override
  public String refusal(Object event) {
    return events == null ? null : SqlStores.unencodable(event, "event", false, text -> null);
  }

  /** {@inheritDoc} A state JSON cannot encode, or holding a double that is NaN or infinite. */
  @Override
  public String stateRefusal(JsonObject state) {
    return SqlStores.unencodable(state, "state", false, text -> null);
  }

  private Future<Boolean> bump(SqlConnection conn, String key, String state, long expectedVersion) {
    if (expectedVersion == 0) {
      // Only this insert's key violation is a lost creation race. One in the events insert (rows left
      // for a key whose entity row was deleted) is a failure to report, not a conflict to retry.
      return conn.preparedQuery("INSERT INTO " + table + " (\"key\", version, state) VALUES (?, 1, ?)")
          .execute(Tuple.of(key, state))
          .recover(e -> Future.failedFuture(isUniqueViolation(e) ? new LostCreation() : e))
          .map(r -> r.rowCount() == 1);
    }
    return conn.preparedQuery("UPDATE " + table + " SET version = version + 1, state = ? WHERE \"key\" = ? AND version = ?")
        .execute(Tuple.of(state, key, expectedVersion))
        .map(r -> r.rowCount() == 1);
  }

  private Future<Void> append(SqlConnection conn, String key, long version, List<String> applied) {
    if (events == null || applied.isEmpty()) {
      return Future.succeededFuture();
    }
    List<Tuple> rows = new ArrayList<>(applied.size());
    for (int i = 0; i < applied.size(); i++) {
      rows.add(Tuple.of(key, version, (long) i + 1, applied.get(i)));
    }
    return conn.preparedQuery("INSERT INTO " + events + " (\"key\", version, seq, event) VALUES (?, ?, ?, ?)")
        .executeBatch(rows)
        .mapEmpty();
  }

  /** The events recorded for {@code key}, oldest first (empty without an events table). */
  public Future<List<Object>> events(String key) {
    if (key == null) {
      return Future.failedFuture(SqlStores.nullKey());
    }
    if (events == null) {
      return Future.succeededFuture(List.of());
    }
    return tx(conn -> conn.preparedQuery("SELECT event FROM " + events + " WHERE \"key\" = ? ORDER BY version, seq")
        .execute(Tuple.of(key)))
        .map(SqlStores::events);
  }

  /**
   * Runs {@code work} in an explicit transaction. Every statement of this store runs in one, here
   * or (a write, which takes its connection apart) in {@link #inTransaction}:
   * in Vert.x 5.0.7 a pooled JDBC connection keeps autocommit off after any transaction
   * (vert-x3/vertx-jdbc-client#356, fixed after 5.0.7), so a bare statement on it would never be
   * committed. An explicit commit is right in both modes.
   */
  public <T> Future<T> tx(Function<SqlConnection, Future<T>> work) {
    return pool.withTransaction(work);
  }

  /**
   * {@code work} in a transaction on {@code conn}, which is closed (back to the pool) afterwards:
   * what {@link Pool#withTransaction} does once it has a connection. A transaction that cannot
   * begin (the driver cannot turn autocommit off: a connection the database dropped while it sat
   * in the pool) ran no statement of {@code key}'s write, so it is refused, not unknown.
   */
  private static <T> Future<T> inTransaction(SqlConnection conn, String key,
      Function<SqlConnection, Future<T>> work) {
    return conn.begin()
        .recover(e -> Future.failedFuture(new WriteRefusedException(key, e)))
        .compose(tx -> work.apply(conn)
            .compose(r -> tx.commit().map(r), e -> tx.rollback().transform(v -> Future.<T>failedFuture(e))))
        .eventually(conn::close); // answered once the connection is back: a retry's read may need it
  }

  /** Rolls back the transaction of a creation that another writer won; never leaves this class. */
  private static final class LostCreation extends RuntimeException {
    private static final long serialVersionUID = 1L;

    LostCreation() {
      super("another writer created the entity first", null, false, false);
    }
  }

  private static boolean isUniqueViolation(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && UNIQUE_VIOLATION.equals(sql.getSQLState())) {
        return true;
      }
    }
    return false;
  }
}
