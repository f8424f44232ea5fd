package dev.ferry.store;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;

/**
 * The two databases the SQL stores run on, for tests that put each case to PgStore and to
 * JdbcStore: a Vert.x, an embedded PostgreSQL with a pool of 4, and an in-memory H2 database with
 * a pool of 4. Start it before the tests of a class, close it after them.
 *
 * <p>Its bounds only guard against a hang, so they are generous: on a loaded CI machine
 * StoreHostileTest came within a fraction of a second of its 20 s bound (the 20 MB state read back
 * through Jackson is its slowest step), which no defect had caused (review AE).
 */
final class PgAndH2 {
  final Vertx vertx;
  final PgServer server;
  final Pool pg;
  final Pool h2;
  /** How long a test waits for what must happen before calling it a hang. */
  static final int HANG_GUARD_SECONDS = 120;

  private PgAndH2(Vertx vertx, PgServer server, Pool pg, Pool h2) {
    this.vertx = vertx;
    this.server = server;
    this.pg = pg;
    this.h2 = h2;
  }

  /** A fresh PostgreSQL server, and the H2 database at {@code h2Url} (a test may open it again). */
  static PgAndH2 start(String h2Url) {
    Vertx vertx = Vertx.vertx();
    PgServer server = PgServer.start();
    return new PgAndH2(vertx, server, server.pool(vertx, 4), JdbcStore.h2Pool(vertx, h2Url, 4));
  }

  /** Closes the pools, stops the server, closes the Vert.x (blocking: call it off the event loop). */
  void close() throws Exception {
    pg.close().await(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
    h2.close().await(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
    server.close();
    vertx.close().await(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
  }

  /** Completes when {@code f} completes, either way, so a test can look at how it ended. */
  static <T> Future<T> settled(Future<T> f) throws Exception {
    return settled(f, HANG_GUARD_SECONDS);
  }

  /** {@link #settled(Future)} for a call whose size, not its speed, is the point: bounded by {@code seconds}. */
  static <T> Future<T> settled(Future<T> f, int seconds) throws Exception {
    f.otherwiseEmpty().await(seconds, TimeUnit.SECONDS);
    return f;
  }
}
