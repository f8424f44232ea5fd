package dev.ferry.store;

import static dev.ferry.store.PgAndH2.await;
import static dev.ferry.store.PgAndH2.settled;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Ferry;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.FoldDecision;
import dev.ferry.FoldOutcomes;
import dev.ferry.FoldWrite;
import dev.ferry.PerKeyConfig;
import dev.ferry.VersionedStore;
import dev.ferry.WriteConflictException;
import dev.ferry.WriteOutcomeUnknownException;
import dev.ferry.WriteRefusedException;
import dev.ferry.Versioned;
import dev.ferry.examples.Accounts;
import dev.ferry.testing.Undescribable;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The stores against what a careless or hostile user hands them: keys, states and events that the
 * database would store altered, and table names that cannot work. PostgreSQL (embedded) and H2.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StoreHostileTest {
  /**
   * The send timeout of a request whose point is that the service answers it at all: a request it
   * leaves unanswered fails at this bound, as TIMEOUT. Far above what any answer takes on a loaded
   * machine, and below the awaits' bound, so that a slow answer can never pass for none.
   */
  private static final long ANSWER_BOUND_MS = 60_000;
  private PgAndH2 db;
  private Vertx vertx;
  private Pool pg;
  private Pool h2;
  private PgStore pgStore;
  private JdbcStore h2Store;

  @BeforeAll
  void start() throws Exception {
    db = PgAndH2.start("jdbc:h2:mem:hostile;DB_CLOSE_DELAY=-1");
    vertx = db.vertx;
    pg = db.pg;
    h2 = db.h2;
    pgStore = PgStore.withEvents(pg, "hostile", "hostile_events");
    h2Store = JdbcStore.withEvents(h2, "hostile", "hostile_events");
    await(pgStore.createTables());
    await(h2Store.createTables());
  }

  @BeforeEach
  void clear() throws Exception {
    await(pg.query("TRUNCATE hostile, hostile_events").execute());
    await(h2Store.tx(conn -> conn.query("DELETE FROM hostile_events").execute()
        .compose(r -> conn.query("DELETE FROM hostile").execute())));
  }

  @AfterAll
  void stop() throws Exception {
    db.close();
  }

  @Test
  void aKeyWithALoneSurrogateIsRefusedByPgStoreNotMergedWithAnotherKey() throws Exception {
    // The client encodes a lone surrogate as '?': "x\uD800", "x\uDC00" and "x?" were one row, so two
    // keys that Ferry serves as separate lanes shared one balance.
    Future<FoldOutcomes<Object, Long>> deposit = settled(Accounts.foldWrite(pgStore).call("x\uD800", List.of(Accounts.deposit("x\uD800", 5))));

    assertTrue(deposit.failed(), "a key PostgreSQL cannot hold unchanged was written");
    assertInstanceOf(IllegalArgumentException.class, deposit.cause());
    assertFalse(await(pgStore.read("x?")).exists(), "another key's row was written");
    assertTrue(settled(pgStore.read("x\uDC00")).failed());
    assertTrue(settled(pgStore.events("x\uDC00")).failed());
  }

  @Test
  void aStateOrEventWithALoneSurrogateIsRefusedByPgStoreAndNothingIsWritten() throws Exception {
    // Refused before anything is sent, so thrown: a failed Future would mean "may have been written".
    // Through FoldWrite, the input that led to that state is rejected (ADR 0143).
    Future<FoldOutcomes<Object, Long>> folded = settled(FoldWrite
        .<String, JsonObject, Object, Long>builder(pgStore, (st, in) -> FoldDecision.accept(new JsonObject().put("name", "a\uD800b"), 1L))
        .initial(Accounts::opened).build()
        .call("s", List.of("rename")));
    assertTrue(folded.succeeded(), "a state stored altered, as " + await(pgStore.read("s")));
    assertInstanceOf(dev.ferry.FoldOutcome.Rejected.class, folded.result().list().get(0));
    assertThrows(IllegalArgumentException.class,
        () -> pgStore.write("s", new JsonObject().put("name", "a\uD800b"), 0, List.of()));
    assertThrows(IllegalArgumentException.class,
        () -> pgStore.write("e", new JsonObject().put("balance", 1), 0, List.of(new JsonObject().put("note", "\uDFFF"))),
        () -> "an event stored altered, as " + pgStore.events("e").await());
    assertFalse(await(pgStore.read("s")).exists());
    assertFalse(await(pgStore.read("e")).exists());
    assertEquals(List.of(), await(pgStore.events("e")));
  }

  @Test
  void aNulCharacterIsRefusedByPgStoreBeforeSendingNotReportedAsMaybeWritten() throws Exception {
    // PostgreSQL holds no NUL in text or jsonb: it refused the statement, and FoldWrite told every
    // caller of the batch that it may have been written.
    Future<FoldOutcomes<Object, Long>> inKey = settled(Accounts.foldWrite(pgStore).call("a\u0000b", List.of(Accounts.deposit("a", 1))));
    assertInstanceOf(IllegalArgumentException.class, inKey.cause(), String.valueOf(inKey.cause()));
    assertThrows(IllegalArgumentException.class, () -> pgStore.write("s", new JsonObject().put("x", "a\u0000b"), 0, List.of()));
    assertThrows(IllegalArgumentException.class,
        () -> pgStore.write("e", new JsonObject(), 0, List.of(new JsonObject().put("note", "\u0000"))));
    // Only the character: the six characters of its escape are text like any other.
    List<Object> literal = List.of("\\u0000", new JsonObject().put("\\u0000", "\\\\u0000"));
    assertTrue(await(pgStore.write("l", new JsonObject().put("x", "\\u0000"), 0, literal)));
    assertEquals(literal, await(pgStore.events("l")));
    assertFalse(await(pgStore.read("s")).exists());
    assertFalse(await(pgStore.read("e")).exists());
  }

  @Test
  void anInputTheStoreCannotHoldIsRejectedAloneAndTheRestOfItsBatchIsWritten() throws Exception {
    // A caller's note with NUL or a lone surrogate (PgStore), or a value JSON cannot encode (both):
    // refused at the write, it failed every caller of its batch, and every later batch it joined.
    // A number PostgreSQL's jsonb cannot hold did the same; a NaN or infinite double (both) was
    // stored as a string, altered (hostile review).
    Object unencodable = new Object();
    for (var store : List.of(new PgFixture(pgStore), new JdbcFixture(h2Store))) {
      boolean pg = store.store() == pgStore;
      List<Object> batch = new ArrayList<>(List.of(Accounts.deposit("p", 1)));
      if (pg) {
        batch.add(Accounts.deposit("p", 10).put("note", "\u0000"));
        batch.add(Accounts.deposit("p", 20).put("note", "x\uD800"));
        batch.add(Accounts.deposit("p", 30).put("note", new java.math.BigDecimal("1E+200000")));
        batch.add(Accounts.deposit("p", 31).put("note", new java.math.BigDecimal("1E-20000")));
      }
      batch.add(Accounts.deposit("p", 50).put("note", Double.NaN));
      // Beyond a double's range: read back as Infinity or 0 (a review).
      batch.add(Accounts.deposit("p", 70).put("note", new java.math.BigDecimal("1E+400")));
      batch.add(Accounts.deposit("p", 80).put("note", new java.math.BigDecimal("-1E-400")));
      batch.add(Accounts.deposit("p", 60).put("note", new io.vertx.core.json.JsonArray().add(Float.NEGATIVE_INFINITY)));
      batch.add(new JsonObject().put("account", "p").put("deposit", 40).put("note", unencodable));
      batch.add(Accounts.deposit("p", 2));

      FoldOutcomes<Object, Long> out = await(Accounts.foldWrite(store.store()).call("p", batch));

      List<dev.ferry.FoldOutcome<Long>> list = out.list();
      assertEquals(new dev.ferry.FoldOutcome.Applied<>(1L), list.get(0), store.toString());
      for (int i = 1; i < batch.size() - 1; i++) {
        assertInstanceOf(dev.ferry.FoldOutcome.Rejected.class, list.get(i), store + ": " + list.get(i));
      }
      assertEquals(new dev.ferry.FoldOutcome.Applied<>(3L), list.get(batch.size() - 1), store.toString());
      assertEquals(List.of(Accounts.deposit("p", 1), Accounts.deposit("p", 2)), await(store.events("p")), store.toString());
    }
  }

  @Test
  void anInputThatLeadsToAStateTheStoreCannotHoldIsRejectedAloneAndTheRestOfItsBatchIsWritten() throws Exception {
    // The caller's name goes into the state (no events table: nothing refuses the input itself).
    // A name with NUL or a lone surrogate (PgStore) or a value JSON cannot encode (both) made the
    // write throw, failing every caller of the batch, and every later batch that name joined.
    Object unencodable = new Object();
    for (VersionedStore<String, JsonObject, Object> store : List.<VersionedStore<String, JsonObject, Object>>of(
        PgStore.of(pg, "hostile_named"), JdbcStore.of(h2, "hostile_named"))) {
      boolean isPg = store instanceof PgStore;
      await(isPg ? ((PgStore) store).createTables() : ((JdbcStore) store).createTables());
      FoldWrite<String, JsonObject, Object, Long> named = FoldWrite.<String, JsonObject, Object, Long>builder(store,
          (state, in) -> {
            JsonObject next = state.copy();
            next.put("names", state.getInteger("names") + 1).put("last", ((JsonObject) in).getValue("name"));
            return FoldDecision.accept(next, (long) next.getInteger("names"));
          }).initial(() -> new JsonObject().put("names", 0)).build();
      List<Object> batch = new ArrayList<>(List.of(new JsonObject().put("name", "ann")));
      if (isPg) {
        batch.add(new JsonObject().put("name", "a\u0000b"));
        batch.add(new JsonObject().put("name", "x\uD800"));
        batch.add(new JsonObject().put("name", java.math.BigInteger.TEN.pow(140_000)));
      }
      batch.add(new JsonObject().put("name", unencodable));
      batch.add(new JsonObject().put("name", "bob"));

      FoldOutcomes<Object, Long> out = await(named.call("n", batch));

      List<dev.ferry.FoldOutcome<Long>> list = out.list();
      assertEquals(new dev.ferry.FoldOutcome.Applied<>(1L), list.get(0), store.toString());
      for (int i = 1; i < batch.size() - 1; i++) {
        var refused = assertInstanceOf(dev.ferry.FoldOutcome.Rejected.class, list.get(i), store + ": " + list.get(i));
        assertTrue(refused.reason().startsWith("the store cannot hold the state it leads to"), refused.reason());
      }
      assertEquals(new dev.ferry.FoldOutcome.Applied<>(2L), list.get(batch.size() - 1), store.toString());
      assertEquals(new Versioned<>(new JsonObject().put("names", 2).put("last", "bob"), 1), await(store.read("n")),
          store.toString());
    }
    // Without an events table JdbcStore records no event: one JSON cannot encode does not refuse a
    // write that keeps only the state (it threw, failing the batch, though refusal said it could).
    JdbcStore stateOnly = JdbcStore.of(h2, "hostile_named");
    assertEquals(null, stateOnly.refusal(unencodable));
    assertTrue(await(stateOnly.write("plain", new JsonObject().put("names", 1), 0, List.of(unencodable))));
  }

  @Test
  void aWritePostgreSqlAnswersWithAnErrorIsReportedAsNotWrittenNotAsUnknown() throws Exception {
    // A constraint of the user's own: PostgreSQL answers the statement with an error and rolls it
    // back. It was reported as "may or may not have been written", which no caller can act on.
    PgStore checked = PgStore.withEvents(pg, "hostile_checked", "hostile_checked_events");
    await(checked.createTables());
    await(pg.query("ALTER TABLE hostile_checked ADD CONSTRAINT not_negative"
        + " CHECK ((state->>'balance')::bigint >= 0)").execute());
    FoldWrite<String, JsonObject, Object, Long> overdraw = FoldWrite.<String, JsonObject, Object, Long>builder(checked,
        (state, in) -> FoldDecision.accept(new JsonObject().put("balance", -1), -1L)).initial(Accounts::opened).build();

    Future<FoldOutcomes<Object, Long>> done = settled(overdraw.call("c", List.of(Accounts.deposit("c", 1))));

    WriteRefusedException refused = assertInstanceOf(WriteRefusedException.class, done.cause(), "" + done.cause());
    assertInstanceOf(io.vertx.pgclient.PgException.class, refused.getCause());
    assertFalse(await(checked.read("c")).exists());
    assertEquals(List.of(), await(checked.events("c")));

    // Not every error answer is a refusal (found by review): 40003 says the outcome is unknown
    // (CockroachDB's "result is ambiguous"), a class 08 error is a connection's (a pooler's answer
    // for a lost server), and a FATAL one is no answer to the statement.
    assertTrue(PgStore.refusedOutright(new io.vertx.pgclient.PgException("lock", "ERROR", "55P03", null)));
    assertFalse(PgStore.refusedOutright(new io.vertx.pgclient.PgException("ambiguous", "ERROR", "40003", null)));
    assertFalse(PgStore.refusedOutright(new io.vertx.pgclient.PgException("lost", "ERROR", "08006", null)));
    assertFalse(PgStore.refusedOutright(new io.vertx.pgclient.PgException("shutdown", "FATAL", "57P01", null)));
    assertFalse(PgStore.refusedOutright(new IllegalStateException("closed")));

    // The client keeps the severity as the server wrote it, in the server's language (lc_messages):
    // a German server's refusal says FEHLER, and was read as an unknown outcome (review D). The
    // codes decide instead; classes whose errors a server raises as FATAL or PANIC, or that tell of
    // a failing system (57P operator intervention, 58 system error, XX internal error), stay unknown.
    assertTrue(PgStore.refusedOutright(new io.vertx.pgclient.PgException("doppelt", "FEHLER", "23505", null)));
    assertTrue(PgStore.refusedOutright(new io.vertx.pgclient.PgException("verrou", "ERREUR", "55P03", null)));
    assertFalse(PgStore.refusedOutright(new io.vertx.pgclient.PgException("Abbruch", "SCHWERWIEGEND", "57P01", null)));
    assertFalse(PgStore.refusedOutright(new io.vertx.pgclient.PgException("E/A", "PANIK", "58030", null)));
    assertFalse(PgStore.refusedOutright(new io.vertx.pgclient.PgException("intern", "FEHLER", "XX000", null)));
    assertFalse(PgStore.refusedOutright(new io.vertx.pgclient.PgException("no code", "ERROR", null, null)));
  }

  @Test
  void wellFormedNonAsciiKeysStatesAndEventsComeBackExactly() throws Exception {
    String key = "κλειδί-鍵-\uD83D\uDD11"; // the last is one character outside the BMP, a surrogate pair
    JsonObject state = new JsonObject().put("name", "\uD83D\uDE00 ü ß 漢字").put("balance", 1);
    List<Object> events = List.of(new JsonObject().put("note", "\uD83C\uDF89"), "'; DROP TABLE hostile; --");
    for (var store : List.of(new PgFixture(pgStore), new JdbcFixture(h2Store))) {
      assertTrue(await(store.store().write(key, state, 0, events)), store.toString());
      assertEquals(new Versioned<>(state, 1), await(store.store().read(key)), store.toString());
      assertEquals(events, await(store.events(key)), store.toString());
    }
  }

  @Test
  void aTableNamedByAReservedWordOfPostgreSqlIsRefusedWhenTheStoreIsMade() throws Exception {
    // The server's own list: every word it will not take as a table name.
    List<String> reserved = new ArrayList<>();
    await(pg.query("SELECT word FROM pg_get_keywords() WHERE catcode IN ('R', 'T')").execute())
        .forEach(row -> reserved.add(row.getString(0)));
    assertFalse(reserved.isEmpty());
    for (String word : reserved) {
      for (String name : List.of(word, word.toUpperCase(Locale.ROOT))) {
        assertThrows(IllegalArgumentException.class, () -> PgStore.of(pg, name), name);
        assertThrows(IllegalArgumentException.class, () -> PgStore.withEvents(pg, "t", name), name);
      }
    }
  }

  @Test
  void aTableNamedByAReservedWordOfH2IsRefusedWhenTheStoreIsMade() {
    for (String name : List.of("order", "User", "VALUE", "key", "year", "_rowid_")) {
      assertThrows(IllegalArgumentException.class, () -> JdbcStore.of(h2, name), name);
      assertThrows(IllegalArgumentException.class, () -> JdbcStore.withEvents(h2, "t", name), name);
    }
  }

  @Test
  void everyWordOnTheH2ListReallyCannotNameATable() throws Exception {
    // H2 has no pg_get_keywords(): check the list against the parser instead.
    for (String word : SqlNames.H2_RESERVED) {
      Future<?> create = settled(h2Store.tx(conn -> conn.query("CREATE TABLE " + word + " (x INT)").execute()));
      assertTrue(create.failed(), word + " names a table in H2");
    }
  }

  @Test
  void namesThatAreKeywordsButNotReservedStillWork() throws Exception {
    // Plain names that look like keywords but are not reserved by the dialect must keep working.
    PgStore pgWords = PgStore.withEvents(pg, "version", "events");
    JdbcStore h2Words = JdbcStore.withEvents(h2, "version", "events");
    await(pgWords.createTables());
    await(h2Words.createTables());
    for (var store : List.of(new PgFixture(pgWords), new JdbcFixture(h2Words))) {
      assertTrue(await(store.store().write("k", new JsonObject().put("n", 1), 0, List.of("e"))), store.toString());
      assertEquals(List.of("e"), await(store.events("k")), store.toString());
    }
  }

  @Test
  void aTableNamedLikeAPostgreSqlCatalogIsRefusedWhenTheStoreIsMade() throws Exception {
    // pg_catalog comes first in every search path: "pg_class" or "pg_settings" named the system
    // relation, so CREATE TABLE IF NOT EXISTS passed and every write failed, reported as unknown.
    for (String name : List.of("pg_class", "PG_TYPE", "pg_settings", "pg_accounts")) {
      assertThrows(IllegalArgumentException.class, () -> PgStore.of(pg, name), name);
      assertThrows(IllegalArgumentException.class, () -> PgStore.withEvents(pg, "t", name), name);
    }
    Future<?> created = settled(pg.query("CREATE TABLE IF NOT EXISTS pg_class (key text)").execute());
    Future<?> used = settled(pg.query("INSERT INTO pg_class (key) VALUES ('k')").execute());
    assertTrue(created.succeeded() && used.failed(), "the catalog name names a usable table after all");
    // H2 has no such prefix: the name works there.
    JdbcStore h2Pg = JdbcStore.of(h2, "pg_accounts");
    await(h2Pg.createTables());
    assertTrue(await(h2Pg.write("k", new JsonObject(), 0, List.of())));
  }

  @Test
  void aNullKeyIsRefusedBeforeAnythingIsSentNotReportedAsMaybeWritten() throws Exception {
    // JdbcStore sent it: H2 refused the NULL, and FoldWrite told the callers it may have been written.
    for (var store : List.of(new PgFixture(pgStore), new JdbcFixture(h2Store))) {
      VersionedStore<String, JsonObject, Object> s = store.store();
      Future<FoldOutcomes<Object, Long>> folded = settled(Accounts.foldWrite(s).call(null, List.of(Accounts.deposit("x", 1))));
      assertTrue(folded.failed(), store + ": a null key was read as an absent entity");
      assertInstanceOf(NullPointerException.class, folded.cause(), store.toString());
      assertTrue(folded.cause().getMessage().contains("key"), store + ": " + folded.cause());
      assertThrows(NullPointerException.class, () -> s.write(null, new JsonObject(), 0, List.of()), store.toString());
    }
  }

  @Test
  void anEventsTableThatIsTheTableItselfIsRefused() {
    // Unquoted names fold case: "Accounts" is the table "accounts", and the events insert then
    // failed at every write.
    assertThrows(IllegalArgumentException.class, () -> PgStore.withEvents(pg, "accounts", "Accounts"));
    assertThrows(IllegalArgumentException.class, () -> JdbcStore.withEvents(h2, "accounts", "ACCOUNTS"));
  }

  @Test
  void aWriteWhoseAnswerIsLostAfterPostgreSqlCommittedItIsReportedAsMaybeWritten() throws Exception {
    // The statement commits, then the answer is lost (a connection reset after the commit).
    HookedStore<String, JsonObject, Object> lossy = new HookedStore<>((VersionedStore<String, JsonObject, Object>) pgStore)
        .onWrite((key, expected, write) -> write.get().compose(ok -> Future.failedFuture(new java.io.IOException("connection reset"))));
    Ferry<Object, Long> ferry = Accounts.ferry(vertx, PerKeyConfig.defaults(), lossy);
    String address = "hostile.lossy";
    StoreService service = await(StoreService.start(vertx, address, Accounts.foldWrite(lossy), Object.class));

    Future<Long> direct = settled(ferry.submit(Accounts.deposit("m", 5)));
    JsonObject request = new JsonObject().put("key", "n").put("inputs", new io.vertx.core.json.JsonArray()
        .add(new JsonObject().put("id", 1).put("input", Accounts.deposit("n", 7))));
    Future<Object> viaBus = settled(vertx.eventBus().request(address, request).map(m -> m.body()));

    FerryException failed = assertInstanceOf(FerryException.class, direct.cause());
    assertEquals(FerryError.FAILED, failed.kind());
    assertInstanceOf(WriteOutcomeUnknownException.class, failed.getCause());
    ReplyException reply = assertInstanceOf(ReplyException.class, viaBus.cause());
    assertEquals(502, reply.failureCode());
    assertTrue(reply.getMessage().contains("may or may not have been written"), reply.getMessage());
    // Both were in fact written, once each: the reports did not say otherwise, and nothing retried.
    assertEquals(List.of(Accounts.deposit("m", 5)), await(pgStore.events("m")));
    assertEquals(List.of(Accounts.deposit("n", 7)), await(pgStore.events("n")));
    assertEquals(2, lossy.writes.get());
    await(service.stop());
  }

  @Test
  void eventsLeftBehindByADeletedEntityFailTheWriteInsteadOfPassingForConflicts() throws Exception {
    // An operator deletes an entity row and keeps its events: a new entity's events then collide with
    // the old ones. That is no writer racing us, and retrying cannot help.
    for (StoreFixture store : List.of(new PgFixture(pgStore), new JdbcFixture(h2Store))) {
      assertTrue(await(store.store().write("gone", new JsonObject().put("balance", 1), 0, List.of(Accounts.deposit("gone", 1)))));
      if (store instanceof PgFixture) {
        await(pg.query("DELETE FROM hostile").execute());
      } else {
        await(h2Store.tx(conn -> conn.query("DELETE FROM hostile").execute()));
      }
      HookedStore<String, JsonObject, Object> hooked = new HookedStore<>(store.store());

      Future<FoldOutcomes<Object, Long>> done = settled(Accounts.foldWrite(hooked).call("gone", List.of(Accounts.deposit("gone", 2))));

      assertTrue(done.failed(), store.toString());
      assertFalse(done.cause() instanceof WriteConflictException, store + ": reported as a conflict: " + done.cause());
      assertEquals(1, hooked.writes.get(), store + ": retried as if another writer had got in");
      assertFalse(await(store.store().read("gone")).exists(), store.toString());
    }
  }

  @Test
  void aRowAtVersionZeroWrittenOutsideFailsTheReadInsteadOfPassingForConflicts() throws Exception {
    // An operator's row at version 0 read as no entity: its state was ignored and every batch
    // inserted against it, lost, and failed with WriteConflictException ("nothing written, retry")
    // after every attempt, for ever.
    for (StoreFixture store : List.of(new PgFixture(pgStore), new JdbcFixture(h2Store))) {
      if (store instanceof PgFixture) {
        await(pg.query("INSERT INTO hostile (key, version, state) VALUES ('zero', 0, '{\"balance\": 7}')").execute());
      } else {
        await(h2Store.tx(conn -> conn.query("INSERT INTO hostile (\"key\", version, state) VALUES ('zero', 0, '{\"balance\": 7}')").execute()));
      }
      HookedStore<String, JsonObject, Object> hooked = new HookedStore<>(store.store());

      Future<FoldOutcomes<Object, Long>> done = settled(Accounts.foldWrite(hooked).call("zero", List.of(Accounts.deposit("zero", 2))));

      assertTrue(done.failed(), store.toString());
      assertFalse(done.cause() instanceof WriteConflictException, store + ": reported as a conflict: " + done.cause());
      assertTrue(done.cause().getMessage().contains("version 0"), store + ": " + done.cause());
      assertEquals(0, hooked.writes.get(), store + ": written against a row it did not read");
    }
  }

  @Test
  void aStateOrEventOverJacksonsReadLimitsIsReadBackNotLockedAway() throws Exception {
    // Written and acknowledged, then unreadable: every later batch of the key failed on its read.
    JsonObject state = new JsonObject()
        .put("note", "x".repeat(20_000_001))
        .put("n".repeat(50_001), 1)
        .put("big", new java.math.BigInteger("9".repeat(1_001)));
    List<Object> events = List.of(new JsonObject().put("note", "y".repeat(20_000_001)));
    for (StoreFixture store : List.of(new PgFixture(pgStore), new JdbcFixture(h2Store))) {
      assertTrue(await(store.store().write("long", state, 0, events)), store.toString());
      Versioned<JsonObject> read = await(store.store().read("long"));
      assertEquals(20_000_001, read.state().getString("note").length(), store.toString());
      assertEquals(1, read.state().getInteger("n".repeat(50_001)), store.toString());
      assertEquals(new java.math.BigDecimal("9".repeat(1_001)), new java.math.BigDecimal(read.state().getValue("big").toString()), store.toString());
      assertEquals(20_000_001, ((JsonObject) await(store.events("long")).get(0)).getString("note").length(), store.toString());
    }
  }

  @Test
  void jdbcStoreWritesTheStateAndEventsAsTheyWereWhenWriteWasCalled() throws Exception {
    // One connection, held elsewhere: the write waits for it, and meanwhile the caller (answered
    // by a call timeout, say) reuses its input object.
    Pool one = JdbcStore.h2Pool(vertx, "jdbc:h2:mem:hostile;DB_CLOSE_DELAY=-1", 1);
    JdbcStore store = JdbcStore.withEvents(one, "hostile", "hostile_events");
    io.vertx.sqlclient.SqlConnection held = await(one.getConnection());
    JsonObject state = new JsonObject().put("balance", 5);
    JsonObject op = Accounts.deposit("alias", 5);

    Future<Boolean> written = store.write("alias", state, 0, List.of(op));
    op.put("deposit", 500);
    state.put("balance", 500);
    await(held.close());

    assertTrue(await(written));
    assertEquals(new Versioned<>(new JsonObject().put("balance", 5), 1), await(store.read("alias")));
    assertEquals(List.of(Accounts.deposit("alias", 5)), await(store.events("alias")));
    await(one.close());
  }

  @Test
  void aStateJdbcStoreCannotEncodeIsRefusedBeforeAnythingIsSentNotReportedAsUnknown() throws Exception {
    FoldWrite<String, JsonObject, Object, Long> fw = FoldWrite
        .<String, JsonObject, Object, Long>builder(h2Store, (st, in) -> FoldDecision.accept(new JsonObject().put("thing", new Object()), 1L))
        .initial(Accounts::opened).build();

    Future<FoldOutcomes<Object, Long>> done = settled(fw.call("odd", List.of("x")));

    // Through FoldWrite the input that led to that state is rejected (ADR 0143); the store itself
    // throws, sending nothing.
    assertTrue(done.succeeded(), "nothing was sent: " + done.cause());
    assertInstanceOf(dev.ferry.FoldOutcome.Rejected.class, done.result().list().get(0));
    assertThrows(io.vertx.core.json.EncodeException.class,
        () -> h2Store.write("odd", new JsonObject().put("thing", new Object()), 0, List.of()));
    assertFalse(await(h2Store.read("odd")).exists());
  }

  /**
   * A state holding a NaN or infinite double was written with the number as a string ("NaN"), and
   * the next fold reading the number failed, for every later batch of the key (hostile review).
   * Both stores now refuse it, so the input that put it there is rejected alone.
   */
  @Test
  void anInputLeavingANaNOrInfiniteNumberInTheStateIsRejectedAloneNotStoredAsAString() throws Exception {
    for (VersionedStore<String, JsonObject, Object> store : List.<VersionedStore<String, JsonObject, Object>>of(
        PgStore.of(pg, "hostile_ratio"), JdbcStore.of(h2, "hostile_ratio"))) {
      await(store instanceof PgStore p ? p.createTables() : ((JdbcStore) store).createTables());
      FoldWrite<String, JsonObject, Object, Double> ratio = FoldWrite.<String, JsonObject, Object, Double>builder(store,
          (state, in) -> {
            JsonObject op = (JsonObject) in;
            double r = op.getDouble("num") / op.getDouble("den");
            return FoldDecision.accept(state.copy().put("ratio", r), r);
          }).initial(JsonObject::new).build();
      FoldOutcomes<Object, Double> out = await(ratio.call("r", List.of(
          new JsonObject().put("num", 1.0).put("den", 2.0), new JsonObject().put("num", 1.0).put("den", 0.0))));
      assertEquals(new dev.ferry.FoldOutcome.Applied<>(0.5), out.list().get(0), store.toString());
      var refused = assertInstanceOf(dev.ferry.FoldOutcome.Rejected.class, out.list().get(1), store.toString());
      assertTrue(refused.reason().contains("Infinity"), refused.reason());
      assertEquals(new Versioned<>(new JsonObject().put("ratio", 0.5), 1), await(store.read("r")), store.toString());
      assertTrue(store.stateRefusal(new JsonObject().put("x", new io.vertx.core.json.JsonArray().add(Float.NaN))) != null);
    }
  }

  @Test
  void storeServiceAnswersWhenTheStoreThrowsAnErrorInsteadOfFailingItsFuture() throws Exception {
    HookedStore<String, JsonObject, Object> broken = new HookedStore<>((VersionedStore<String, JsonObject, Object>) h2Store)
        .onRead((key, read) -> {
          throw new AssertionError("a store bug");
        });
    assertAnswered502(broken, "hostile.broken");
  }

  /**
   * One batch through a StoreService over {@code store}: answered 502 by the service (without an
   * answer the request would fail only at its send timeout, as TIMEOUT).
   */
  private void assertAnswered502(HookedStore<String, JsonObject, Object> store, String address) throws Exception {
    StoreService service = await(StoreService.start(vertx, address, Accounts.foldWrite(store), Object.class));
    JsonObject request = new JsonObject().put("key", "b").put("inputs", new io.vertx.core.json.JsonArray()
        .add(new JsonObject().put("id", 1).put("input", Accounts.deposit("b", 1))));
    Future<Object> reply = settled(vertx.eventBus().request(address, request,
        new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(ANSWER_BOUND_MS)).map(m -> m.body()));
    ReplyException e = assertInstanceOf(ReplyException.class, reply.cause());
    assertEquals(io.vertx.core.eventbus.ReplyFailure.RECIPIENT_FAILURE, e.failureType(), e.toString());
    assertEquals(502, e.failureCode());
    await(service.stop());
  }

  /** A store failing with an exception whose message cannot be had: the request is still answered 502. */
  @Test
  void storeServiceAnswersWhenTheStoreFailsWithAnExceptionThatCannotDescribeItself() throws Exception {
    HookedStore<String, JsonObject, Object> broken = new HookedStore<>((VersionedStore<String, JsonObject, Object>) h2Store)
        .onRead((key, read) -> Future.failedFuture(new Undescribable()));
    assertAnswered502(broken, "hostile.undescribable");
  }

  /**
   * A batch waiting behind its key's write is answered 503 once maxWait passes, even if nothing else
   * happens to the key (a hostile review: it was answered only when its turn came or another batch
   * of its key arrived, so behind a write that hangs its sender timed out instead).
   */
  @Test
  void aBatchWaitingBehindAWriteThatHangsIsAnswered503AtItsMaxWait() throws Exception {
    io.vertx.core.Promise<Boolean> never = io.vertx.core.Promise.promise();
    HookedStore<String, JsonObject, Object> hung = new HookedStore<>((VersionedStore<String, JsonObject, Object>) h2Store)
        .onWrite((key, expected, write) -> never.future());
    String address = "hostile.hung";
    StoreService service = await(StoreService.start(vertx, address, Accounts.foldWrite(hung), Object.class,
        java.time.Duration.ofMillis(100), 1));
    JsonObject request = new JsonObject().put("key", "h").put("inputs", new io.vertx.core.json.JsonArray()
        .add(new JsonObject().put("id", 1).put("input", Accounts.deposit("h", 1))));
    try {
      vertx.eventBus().request(address, request, new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(60_000));
      Future<Object> behind = settled(vertx.eventBus().request(address, request,
          new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(ANSWER_BOUND_MS)).map(m -> m.body()));
      ReplyException e = assertInstanceOf(ReplyException.class, behind.cause());
      assertEquals(503, e.failureCode(), e.failureType() + ": " + e.getMessage());
    } finally {
      never.tryComplete(false);
      await(service.stop());
    }
  }

  /** A result whose text cannot be had: it throws {@code thrown}, checked or not, from toString(). */
  private record Unprintable(Throwable thrown) implements CharSequence {
    @Override
    public int length() {
      return 0;
    }

    @Override
    public char charAt(int index) {
      throw new IndexOutOfBoundsException(index);
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      return this;
    }

    @Override
    public String toString() {
      throw Unprintable.<RuntimeException>sneaky(thrown);
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
      throw (T) t;
    }
  }

  @Test
  void storeServiceAnswersWhenAnOutcomeThrowsAnErrorOrACheckedExceptionAsTheReplyIsSent() throws Exception {
    // Vert.x copies the reply's JSON as it is sent, asking a CharSequence for its text. Only a
    // RuntimeException there was caught: an Error, or a checked exception thrown sneakily, left the
    // written batch unanswered until the sender's timeout. Out of stack is answered and reported.
    java.util.concurrent.CopyOnWriteArrayList<Throwable> reported = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.concurrent.CompletableFuture<Throwable> firstReported = new java.util.concurrent.CompletableFuture<>();
    vertx.exceptionHandler(t -> {
      reported.add(t);
      firstReported.complete(t);
    });
    try {
      int n = 0;
      // The last one cannot describe itself either: the 502's text must not throw in turn (a review).
      for (Throwable thrown : List.of(new AssertionError("a result bug"), new java.io.IOException("checked"),
          new StackOverflowError("deep"), new Undescribable())) {
        FoldWrite<String, JsonObject, Object, CharSequence> fw = FoldWrite
            .<String, JsonObject, Object, CharSequence>builder(h2Store,
                (st, in) -> FoldDecision.accept(new JsonObject().put("balance", 1), new Unprintable(thrown)))
            .initial(Accounts::opened).build();
        String address = "hostile.unprintable." + n++;
        StoreService service = await(StoreService.start(vertx, address, fw, Object.class));
        JsonObject request = new JsonObject().put("key", "u" + n).put("inputs", new io.vertx.core.json.JsonArray()
            .add(new JsonObject().put("id", 1).put("input", "x")));

        // Without an answer the request would fail only at its send timeout, as TIMEOUT.
        Future<Object> reply = settled(vertx.eventBus().request(address, request,
            new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(ANSWER_BOUND_MS)).map(m -> m.body()));

        String name = thrown.getClass().getName();
        ReplyException e = assertInstanceOf(ReplyException.class, reply.cause(), name);
        assertEquals(io.vertx.core.eventbus.ReplyFailure.RECIPIENT_FAILURE, e.failureType(), name + ": " + e);
        assertEquals(502, e.failureCode());
        assertTrue(e.getMessage().startsWith("batch written, but its outcomes cannot be sent as JSON: "
            + name), e.getMessage());
        assertTrue(await(h2Store.read("u" + n)).exists(), "written");
        await(service.stop());
      }
      // Reported by the context once the reply was sent: waited for, not assumed done.
      assertInstanceOf(StackOverflowError.class, firstReported.get(PgAndH2.HANG_GUARD_SECONDS, TimeUnit.SECONDS));
      assertEquals(1, reported.size(), String.valueOf(reported));
    } finally {
      vertx.exceptionHandler(null);
    }
  }

  @Test
  void storeServiceAnswersAnInputOfTheWrongTypeThatJsonCannotEncodeNamingItsType() throws Exception {
    // The wrong type's error quoted the entry, encoding it: for one JSON cannot encode (nested
    // deeper than Jackson's bound, sent uncopied as a local FerryVerticle sends) that threw outside
    // any catch, and the batch was never answered.
    String codec = "hostile.uncopied";
    vertx.eventBus().registerCodec(new io.vertx.core.eventbus.MessageCodec<JsonObject, JsonObject>() {
      @Override
      public void encodeToWire(io.vertx.core.buffer.Buffer buffer, JsonObject o) {
        throw new UnsupportedOperationException("local only");
      }

      @Override
      public JsonObject decodeFromWire(int pos, io.vertx.core.buffer.Buffer buffer) {
        throw new UnsupportedOperationException("local only");
      }

      @Override
      public JsonObject transform(JsonObject o) {
        return o;
      }

      @Override
      public String name() {
        return codec;
      }

      @Override
      public byte systemCodecID() {
        return -1;
      }
    });
    try {
      JsonObject deep = new JsonObject().put("leaf", 1);
      for (int i = 0; i < 1_500; i++) {
        deep = new JsonObject().put("n", deep);
      }
      String address = "hostile.typed";
      @SuppressWarnings("unchecked")
      Class<Object> operations = (Class<Object>) (Class<?>) JsonObject.class; // Accounts' operations are objects
      StoreService service = await(StoreService.start(vertx, address, Accounts.foldWrite(h2Store), operations));
      JsonObject request = new JsonObject().put("key", "typed").put("inputs", new io.vertx.core.json.JsonArray()
          .add(new JsonObject().put("id", 1).put("input", new io.vertx.core.json.JsonArray().add(deep)))
          .add(new JsonObject().put("id", 2).put("input", Accounts.deposit("typed", 3))));

      Object reply = await(vertx.eventBus().request(address, request,
          new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(ANSWER_BOUND_MS).setCodecName(codec)).map(m -> m.body()));

      io.vertx.core.json.JsonArray outcomes = ((JsonObject) reply).getJsonArray("outcomes");
      assertEquals(new JsonObject().put("error", "expected an input of type JsonObject, got JsonArray"), outcomes.getJsonObject(0));
      assertEquals(new JsonObject().put("ok", 3L), outcomes.getJsonObject(1));
      await(service.stop());
    } finally {
      vertx.eventBus().unregisterCodec(codec);
    }
  }
}
