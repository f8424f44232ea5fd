package dev.ferry.store;

import static dev.ferry.store.PgAndH2.await;
import static dev.ferry.store.PgAndH2.settled;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FoldDecision;
import dev.ferry.FoldOutcomes;
import dev.ferry.FoldWrite;
import dev.ferry.Versioned;
import dev.ferry.VersionedStore;
import dev.ferry.WriteOutcomeUnknownException;
import dev.ferry.WriteRefusedException;
import dev.ferry.examples.Accounts;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.jdbcclient.JDBCConnectOptions;
import io.vertx.jdbcclient.JDBCPool;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlConnection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Review Q: FoldWrite and the SQL stores in the corners. PostgreSQL (embedded) and H2. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReviewQTest {
  private PgAndH2 db;

  @BeforeAll
  void start() throws Exception {
    db = PgAndH2.start("jdbc:h2:mem:review-q;DB_CLOSE_DELAY=-1");
    await(PgStore.withEvents(db.pg, "q_accounts", "q_account_events").createTables());
    await(JdbcStore.withEvents(db.h2, "q_accounts", "q_account_events").createTables());
  }

  @AfterAll
  void stop() throws Exception {
    db.close();
  }

  /**
   * A write whose statement was never sent, because its pool gave it no connection (every one
   * busy, here held by the application, with no room to wait; or the server refused the
   * connection), was reported as WriteOutcomeUnknownException: "may or may not have been written",
   * not safe to retry, for a batch that certainly was not. The read went through another pool on
   * the same database, as it would have a moment before the pool filled up or the server went.
   */
  @Test
  void aWriteThatNeverGotAConnectionIsReportedAsNotWrittenNotAsMaybeWritten() throws Exception {
    PoolOptions noWaiting = new PoolOptions().setMaxSize(1).setMaxWaitQueueSize(0);
    PgConnectOptions connect = new PgConnectOptions().setHost("127.0.0.1").setPort(db.server.port())
        .setDatabase("postgres").setUser("postgres").setPassword("postgres");
    int closedPort;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    Pool pgBusy = PgBuilder.pool().with(noWaiting).connectingTo(connect).using(db.vertx).build();
    Pool pgGone = PgBuilder.pool().with(new PoolOptions().setMaxSize(1))
        .connectingTo(new PgConnectOptions(connect).setPort(closedPort)).using(db.vertx).build();
    Pool h2Busy = JDBCPool.pool(db.vertx, new JDBCConnectOptions().setJdbcUrl("jdbc:h2:mem:review-q;DB_CLOSE_DELAY=-1"), noWaiting);
    SqlConnection pgHeld = await(pgBusy.getConnection());
    SqlConnection h2Held = await(h2Busy.getConnection());
    try {
      List<Object[]> cases = List.of(
          new Object[] {"pg, pool busy", PgStore.withEvents(pgBusy, "q_accounts", "q_account_events"), PgStore.withEvents(db.pg, "q_accounts", "q_account_events")},
          new Object[] {"pg, server gone", PgStore.withEvents(pgGone, "q_accounts", "q_account_events"), PgStore.withEvents(db.pg, "q_accounts", "q_account_events")},
          new Object[] {"h2, pool busy", JdbcStore.withEvents(h2Busy, "q_accounts", "q_account_events"), JdbcStore.withEvents(db.h2, "q_accounts", "q_account_events")});
      int n = 0;
      for (Object[] c : cases) {
        String what = (String) c[0];
        @SuppressWarnings("unchecked")
        VersionedStore<String, JsonObject, Object> writer = (VersionedStore<String, JsonObject, Object>) c[1];
        @SuppressWarnings("unchecked")
        VersionedStore<String, JsonObject, Object> reader = (VersionedStore<String, JsonObject, Object>) c[2];
        String key = "unsent-" + n++;
        HookedStore<String, JsonObject, Object> store = new HookedStore<>(writer).onRead((k, read) -> reader.read(k));

        Future<FoldOutcomes<Object, Long>> done = settled(Accounts.foldWrite(store).call(key, List.of(Accounts.deposit(key, 5))));

        assertTrue(done.failed(), what);
        assertFalse(done.cause() instanceof WriteOutcomeUnknownException,
            what + ": a statement never sent was reported as maybe written: " + done.cause());
        assertInstanceOf(WriteRefusedException.class, done.cause(), what);
        assertEquals(1, store.writes.get(), what + ": retried");
        assertFalse(await(reader.read(key)).exists(), what);
      }
    } finally {
      pgHeld.close();
      h2Held.close();
      pgBusy.close();
      pgGone.close();
      h2Busy.close();
    }
  }

  /**
   * JdbcStore's write is a transaction: a statement H2 answers with an error before the commit (a
   * user's CHECK constraint, a row lock held elsewhere past H2's lock timeout) rolls it back, and
   * no commit was ever sent. It was reported as WriteOutcomeUnknownException ("may or may not have
   * been written"), where PgStore says "not written" for the same refusals; only an error at the
   * commit leaves the outcome unknown.
   */
  @Test
  void aJdbcStatementRefusedBeforeTheCommitIsReportedAsNotWrittenNotAsMaybeWritten() throws Exception {
    Pool locking = JdbcStore.h2Pool(db.vertx, "jdbc:h2:mem:review-q;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=50", 2);
    JdbcStore checked = JdbcStore.withEvents(locking, "q_checked", "q_checked_events");
    await(checked.createTables());
    await(checked.tx(conn -> conn.query("ALTER TABLE q_checked ADD CONSTRAINT q_not_negative"
        + " CHECK (state NOT LIKE '%\"balance\":-%')").execute()));
    FoldWrite<String, JsonObject, Object, Long> overdraw = FoldWrite.<String, JsonObject, Object, Long>builder(checked,
        (state, in) -> FoldDecision.accept(new JsonObject().put("balance", -1), -1L)).initial(Accounts::opened).build();

    Future<FoldOutcomes<Object, Long>> constraint = settled(overdraw.call("c", List.of(Accounts.deposit("c", 1))));

    assertFalse(constraint.cause() instanceof WriteOutcomeUnknownException, "a CHECK refusal: " + constraint.cause());
    assertInstanceOf(WriteRefusedException.class, constraint.cause());
    assertFalse(await(checked.read("c")).exists());

    // Another transaction holds the row's lock (an operator's, another process's) past the timeout.
    assertTrue(await(checked.write("l", new JsonObject().put("balance", 1), 0, List.of())));
    io.vertx.core.Promise<Void> release = io.vertx.core.Promise.promise();
    io.vertx.core.Promise<Void> locked = io.vertx.core.Promise.promise();
    Future<Void> holder = checked.tx(conn -> conn.query("UPDATE q_checked SET state = state WHERE \"key\" = 'l'").execute()
        .compose(r -> {
          locked.complete();
          return release.future();
        }));
    await(locked.future());
    try {
      Future<FoldOutcomes<Object, Long>> lock = settled(Accounts.foldWrite(checked).call("l", List.of(Accounts.deposit("l", 1))));

      assertFalse(lock.cause() instanceof WriteOutcomeUnknownException, "a lock timeout: " + lock.cause());
      assertInstanceOf(WriteRefusedException.class, lock.cause());
    } finally {
      release.complete();
      await(holder);
    }
    assertEquals(new Versioned<>(new JsonObject().put("balance", 1), 1), await(checked.read("l")));
    assertEquals(List.of(), await(checked.events("l")));
    await(locking.close());
  }

  /**
   * An initial state supplier that returns null (a configuration mistake: a state is never null,
   * FoldDecision.accept refuses one) handed null to apply for every new entity, whose every input
   * then failed on it and was rejected, each caller told INPUT_REJECTED ("apply failed:
   * NullPointerException"): a final answer blaming the input, for every batch of every new key. No
   * input is to blame: the batch fails, naming the supplier, as for a starting state the store
   * cannot hold.
   */
  @Test
  void anInitialStateSupplierReturningNullFailsTheBatchInsteadOfRejectingEveryInput() throws Exception {
    JdbcStore store = JdbcStore.withEvents(db.h2, "q_accounts", "q_account_events");
    FoldWrite<String, JsonObject, Object, Long> fw = FoldWrite.<String, JsonObject, Object, Long>builder(store, Accounts::apply)
        .initial(() -> null).build();

    Future<FoldOutcomes<Object, Long>> done = settled(fw.call("nullstart", List.of(Accounts.deposit("nullstart", 1),
        Accounts.deposit("nullstart", 2))));

    assertTrue(done.failed(), () -> "every input blamed: " + done.result().list());
    assertTrue(String.valueOf(done.cause().getMessage()).contains("initial"), String.valueOf(done.cause()));
    assertFalse(await(store.read("nullstart")).exists());
  }

  /** An operation nested {@code depth} levels deep in all (its top object included). */
  private static JsonObject nested(String key, int depth) {
    JsonObject inner = new JsonObject().put("leaf", 1);
    for (int i = 2; i < depth; i++) {
      inner = new JsonObject().put("n", inner);
    }
    return Accounts.deposit(key, 3).put("n", inner);
  }

  /**
   * PgStore sends a batch's events as one JSON array, one level deeper than each event. An event
   * nested as deep as JSON encoding allows passed refusal (encoded alone), then failed the array's
   * encoding at the write, and with it every input of its batch, again at each batch it joined:
   * the failure ADR 0139 says refusal exists to prevent. The event is recorded (each is stored as
   * its own row), or else refused alone.
   */
  @Test
  void anEventAsDeepAsJsonAllowsDoesNotFailItsWholeBatchOnPgStore() throws Exception {
    int depth = 2;
    while (encodes(nested("d", depth + 1))) {
      depth++;
    }
    JsonObject deepest = nested("d", depth);
    PgStore store = PgStore.withEvents(db.pg, "q_accounts", "q_account_events");
    assertEquals(null, store.refusal(deepest), "the store says it can record the event");

    Future<FoldOutcomes<Object, Long>> done = settled(Accounts.foldWrite(store).call("d",
        List.of(Accounts.deposit("d", 1), deepest, Accounts.deposit("d", 2))));

    assertTrue(done.succeeded(), () -> "depth " + ": the whole batch failed: " + done.cause());
    assertEquals(new dev.ferry.FoldOutcome.Applied<>(1L), done.result().list().get(0));
    assertEquals(new dev.ferry.FoldOutcome.Applied<>(done.result().list().get(1) instanceof dev.ferry.FoldOutcome.Applied ? 6L : 3L),
        done.result().list().get(2));
    if (done.result().list().get(1) instanceof dev.ferry.FoldOutcome.Applied) {
      assertEquals(List.of(Accounts.deposit("d", 1), deepest, Accounts.deposit("d", 2)), await(store.events("d")));
    }
  }

  private static boolean encodes(Object value) {
    try {
      io.vertx.core.json.Json.encode(value);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * PgStore sent a batch's events as one jsonb array, which PostgreSQL holds to 268,435,455 bytes in
   * all: two events of 140 MB each, each one storable (jsonb holds either), failed their batch
   * together, every caller told FAILED, though neither input alone is to blame, and Ferry batches
   * the retries of inputs that arrive together the same way. Each event is its own row: each needs
   * to fit, not their sum. (Large: about 9 s and 2 GB of memory between the JVM and the server.)
   */
  @Test
  void eventsThatFitJsonbOneByOneAreWrittenTogetherOnPgStore() throws Exception {
    PgStore store = PgStore.withEvents(db.pg, "q_big", "q_big_events");
    await(store.createTables());
    String note = "x".repeat(140_000_000);
    JsonObject first = Accounts.deposit("big", 1).put("note", note);
    JsonObject second = Accounts.deposit("big", 2).put("note", note);

    // About 9 s on an idle machine; one CI run on a loaded one passed 20 s. The size is the point.
    Future<FoldOutcomes<Object, Long>> done = settled(Accounts.foldWrite(store).call("big", List.of(first, second)), 180);

    assertTrue(done.succeeded(), () -> "the batch failed: " + done.cause());
    assertEquals(List.of(new dev.ferry.FoldOutcome.Applied<>(1L), new dev.ferry.FoldOutcome.Applied<>(3L)), done.result().list());
    // Counted, not read back: 280 MB of events take long to fetch and decode.
    assertEquals(2L, await(db.pg.query("SELECT count(*) FROM q_big_events WHERE key = 'big'").execute())
        .iterator().next().getLong(0));
  }

  /**
   * A table name of 64 characters, each allowed, is refused (PostgreSQL would cut it to 63) with a
   * message that states only the characters' pattern, which the name matches: the error must say
   * what is wrong with it.
   */
  @Test
  void aTableNameTooLongIsRefusedSayingItIsTooLong() {
    String name = "accounts_" + "x".repeat(55);
    assertEquals(64, name.length());
    for (Runnable make : List.<Runnable>of(() -> PgStore.of(db.pg, name), () -> JdbcStore.of(db.h2, name),
        () -> PgStore.withEvents(db.pg, "t", name), () -> JdbcStore.withEvents(db.h2, "t", name))) {
      IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, make::run);
      assertTrue(e.getMessage().contains("63"), e.getMessage());
    }
    PgStore.of(db.pg, name.substring(1)); // 63 characters pass
  }

  /**
   * StoreService.start checked maxWait and contexts, but not the rest: called from a thread that
   * is not Vert.x's (as a main method does), a null address threw on the service's context and the
   * returned Future never completed; a null input type started a service whose every request threw
   * in its handler, never answered until the sender's timeout. A null argument is refused at once,
   * as a bad maxWait is.
   */
  @Test
  void storeServiceRefusesNullArgumentsAtStartInsteadOfHangingOrLeavingRequestsUnanswered() throws Exception {
    JdbcStore store = JdbcStore.withEvents(db.h2, "q_accounts", "q_account_events");
    FoldWrite<String, JsonObject, Object, Long> fw = Accounts.foldWrite(store);
    List<java.util.function.Supplier<Future<StoreService>>> starts = List.of(
        () -> StoreService.start(db.vertx, null, fw, Object.class),
        () -> StoreService.start(db.vertx, "q.null.type", fw, null),
        () -> StoreService.start(db.vertx, "q.null.fold", null, Object.class));
    int n = 0;
    for (java.util.function.Supplier<Future<StoreService>> start : starts) {
      String what = "start " + n++;
      Future<StoreService> started;
      try {
        started = start.get();
      } catch (NullPointerException | IllegalArgumentException refused) {
        continue; // refused at once
      }
      // Not refused at once: it must fail, or else answer every request.
      Future<StoreService> settled = started.otherwiseEmpty().map(started.result());
      try {
        settled.await(PgAndH2.HANG_GUARD_SECONDS, TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException hung) {
        throw new AssertionError(what + ": its Future never completed", hung);
      }
      if (started.failed()) {
        continue;
      }
      JsonObject request = new JsonObject().put("key", "q").put("inputs", new io.vertx.core.json.JsonArray()
          .add(new JsonObject().put("id", 1).put("input", Accounts.deposit("q", 1))));
      Future<Object> reply = settled(db.vertx.eventBus().request(n == 2 ? "q.null.type" : "q.null.fold", request,
          new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(60_000)).map(m -> m.body()));
      io.vertx.core.eventbus.ReplyException e = assertInstanceOf(io.vertx.core.eventbus.ReplyException.class, reply.cause(),
          what + ": " + reply);
      assertEquals(io.vertx.core.eventbus.ReplyFailure.RECIPIENT_FAILURE, e.failureType(), what + ": never answered: " + e);
      await(started.result().stop());
    }
  }
}
