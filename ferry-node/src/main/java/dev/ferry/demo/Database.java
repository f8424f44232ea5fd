package dev.ferry.demo;

import dev.ferry.VersionedStore;
import dev.ferry.store.JdbcStore;
import dev.ferry.store.PgStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

/**
 * The main job's database: the accounts store the FoldWrite writes through, plus what the job
 * needs around it (emptying it between runs, reading every account back for the check).
 *
 * <p>Two kinds, chosen with {@code --store}: {@code pg}, an embedded PostgreSQL server started
 * from the binaries on the class path (its own process on loopback, the {@link PgStore} path
 * production runs); {@code h2}, an in-memory H2 database inside this JVM through {@link
 * JdbcStore}. Opened and closed from the job's main thread (starting a server blocks).
 */
abstract class Database implements AutoCloseable {
  static final String TABLE = "accounts";
  static final String EVENTS = "account_events";

  /** Balances and event counts per account, as the database holds them. */
  record Contents(Map<String, Long> balances, Map<String, Long> events) {}

  abstract String describe();

  abstract VersionedStore<String, JsonObject, Object> store();

  /** Deletes every account and event, so the next run starts from an empty database. */
  abstract Future<Void> clear();

  abstract Future<Contents> contents();

  /** CPU time the database server's processes have used so far; zero when it runs in this JVM. */
  abstract Duration serverCpu();

  /** Closes the pool and stops the server, if any. Blocking: not on an event loop. */
  @Override
  public abstract void close();

  /**
   * Opens the database {@code kind} names ({@link JobOptions.StoreKind}). When the embedded
   * PostgreSQL server cannot start here (a platform without bundled binaries, say), the job runs
   * on H2 instead and says so on {@code out}, rather than asking the user to install anything.
   */
  static Database open(Vertx vertx, JobOptions.StoreKind kind, int connections, java.io.PrintStream out) {
    if (kind == JobOptions.StoreKind.H2) {
      return H2.start(vertx, connections);
    }
    try {
      return Pg.start(vertx, connections);
    } catch (IllegalStateException e) {
      out.println("note: " + e.getMessage() + "; running on H2 instead (--store h2)");
      return H2.start(vertx, connections);
    }
  }

  /** Waits for {@code f} from the job's main thread, at most {@code seconds}. */
  static <T> T await(Future<T> f, int seconds) {
    try {
      return f.await(seconds, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("the database did not answer within " + seconds + " s", e);
    }
  }

  private static Contents contents(RowSet<Row> states, RowSet<Row> events) {
    Map<String, Long> balances = new HashMap<>();
    for (Row r : states) {
      balances.put(r.getString(0), new JsonObject(r.getString(1)).getLong("balance"));
    }
    Map<String, Long> counts = new HashMap<>();
    for (Row r : events) {
      counts.put(r.getString(0), r.getLong(1));
    }
    return new Contents(balances, counts);
  }

  /** Embedded PostgreSQL: a server process of its own, on a free loopback port, data deleted on close. */
  static final class Pg extends Database {
    private final EmbeddedPostgres server;
    private final Path dataDir;
    private final Pool pool;
    private final PgStore store;

    private Pg(EmbeddedPostgres server, Path dataDir, Pool pool) {
      this.server = server;
      this.dataDir = dataDir;
      this.pool = pool;
      this.store = PgStore.withEvents(pool, TABLE, EVENTS);
    }

    static Pg start(Vertx vertx, int connections) {
      return start(vertx, connections, null, UnaryOperator.identity());
    }

    /**
     * {@link #start(Vertx, int)} with its data folder made in {@code parent} (null: the system's
     * temporary folder) and the server's builder passed through {@code configure} last (tests).
     * The folder (some 42 MB once the server set it up) does not outlive a start that failed, nor
     * a JVM stopped while the server was being set up ({@link SetUpFolder}); once the start
     * succeeded, {@link #close()} deletes it.
     */
    static Pg start(Vertx vertx, int connections, Path parent, UnaryOperator<EmbeddedPostgres.Builder> configure) {
      SetUpFolder folder;
      try {
        folder = SetUpFolder.create(parent, "ferry-main-job-pg", SetUpFolder.RUNTIME);
      } catch (IOException | RuntimeException e) {
        throw new IllegalStateException("the embedded PostgreSQL server did not start: " + e.getMessage(), e);
      }
      try (folder) {
        Path dataDir = folder.path();
        EmbeddedPostgres server;
        try {
          server = configure.apply(EmbeddedPostgres.builder()
              .setDataDirectory(dataDir)
              .setCleanDataDirectory(true)
              .setServerConfig("listen_addresses", "127.0.0.1"))
              .start();
        } catch (IOException | RuntimeException | LinkageError e) {
          // LinkageError: binaries the library cannot unpack or read fail its class's static
          // set-up (ExceptionInInitializerError, then NoClassDefFoundError at each later try).
          throw new IllegalStateException("the embedded PostgreSQL server did not start: " + why(e), e);
        }
        PgConnectOptions connect = new PgConnectOptions().setHost("127.0.0.1").setPort(server.getPort())
            .setDatabase("postgres").setUser("postgres").setPassword("postgres");
        Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(connections)).connectingTo(connect).using(vertx).build();
        Pg pg = new Pg(server, dataDir, pool);
        try {
          await(pg.store.createTables(), 60);
        } catch (RuntimeException e) {
          pg.close();
          throw new IllegalStateException("the embedded PostgreSQL server did not take the tables: " + e.getMessage(), e);
        }
        folder.keep();
        return pg;
      }
    }

    /** What went wrong, in words: an ExceptionInInitializerError has no message of its own, its cause has. */
    private static String why(Throwable e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t.getMessage() != null) {
          return t.getMessage();
        }
      }
      return e.getClass().getName();
    }

    @Override
    String describe() {
      return "embedded PostgreSQL (a server process of its own on loopback, through PgStore)";
    }

    @Override
    VersionedStore<String, JsonObject, Object> store() {
      return store;
    }

    @Override
    Future<Void> clear() {
      return pool.query("TRUNCATE " + TABLE + ", " + EVENTS).execute().mapEmpty();
    }

    @Override
    Future<Contents> contents() {
      return pool.query("SELECT key, state::text FROM " + TABLE).execute()
          .compose(states -> pool.query("SELECT key, count(*) FROM " + EVENTS + " GROUP BY key").execute()
              .map(events -> Database.contents(states, events)));
    }

    /** The postmaster (its pid is the first line of postmaster.pid) and every backend it forked. */
    @Override
    Duration serverCpu() {
      try {
        long pid = Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
        Optional<ProcessHandle> postmaster = ProcessHandle.of(pid);
        if (postmaster.isEmpty()) {
          return Duration.ZERO;
        }
        Duration total = cpu(postmaster.get());
        for (ProcessHandle child : (Iterable<ProcessHandle>) postmaster.get().descendants()::iterator) {
          total = total.plus(cpu(child));
        }
        return total;
      } catch (IOException | RuntimeException e) {
        return Duration.ZERO; // not on every platform: the report then shows the JVM's CPU alone
      }
    }

    private static Duration cpu(ProcessHandle p) {
      return p.info().totalCpuDuration().orElse(Duration.ZERO);
    }

    @Override
    public void close() {
      try {
        await(pool.close(), 30);
      } finally {
        try {
          server.close();
        } catch (IOException e) {
          throw new IllegalStateException("the embedded PostgreSQL server did not stop cleanly", e);
        }
      }
    }
  }

  /** Embedded H2: in memory, in this JVM (its rows live on this heap), a name of its own per job. */
  static final class H2 extends Database {
    private final JdbcStore store;

    private H2(JdbcStore store) {
      this.store = store;
    }

    static H2 start(Vertx vertx, int connections) {
      // The store gets a pool of its own (see JdbcStore#pool: Vert.x 5.0.7's JDBC autocommit bug).
      String url = "jdbc:h2:mem:ferry-demo-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
      H2 h2 = new H2(JdbcStore.withEvents(JdbcStore.h2Pool(vertx, url, connections), TABLE, EVENTS));
      await(h2.store.createTables(), 30);
      return h2;
    }

    @Override
    String describe() {
      return "embedded H2 (in memory, inside this JVM, through JdbcStore)";
    }

    @Override
    VersionedStore<String, JsonObject, Object> store() {
      return store;
    }

    @Override
    Future<Void> clear() {
      return store.tx(conn -> conn.query("DELETE FROM " + EVENTS).execute()
          .compose(v -> conn.query("DELETE FROM " + TABLE).execute())).mapEmpty();
    }

    @Override
    Future<Contents> contents() {
      return store.tx(conn -> conn.query("SELECT \"key\", state FROM " + TABLE).execute()
          .compose(states -> conn.query("SELECT \"key\", COUNT(*) FROM " + EVENTS + " GROUP BY \"key\"").execute()
              .map(events -> Database.contents(states, events))));
    }

    @Override
    Duration serverCpu() {
      return Duration.ZERO;
    }

    @Override
    public void close() {
      try {
        await(store.tx(conn -> conn.query("DROP ALL OBJECTS").execute()), 30);
      } finally {
        await(store.pool().close(), 30);
      }
    }
  }
}
