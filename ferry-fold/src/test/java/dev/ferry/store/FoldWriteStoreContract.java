package dev.ferry.store;

import static dev.ferry.examples.Accounts.deposit;
import static dev.ferry.examples.Accounts.withdraw;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Ferry;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.FoldOutcome;
import dev.ferry.FoldOutcomes;
import dev.ferry.FoldWrite;
import dev.ferry.PerKeyConfig;
import dev.ferry.Versioned;
import dev.ferry.WriteConflictException;
import dev.ferry.examples.Accounts;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * FoldWrite's behaviour against a real database, written once and run against each store
 * (PostgreSQL, H2 over JDBC) by a subclass that supplies the fixture.
 */
@ExtendWith(VertxExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FoldWriteStoreContract {
  protected Vertx vertx;
  private StoreFixture fixture;

  /** Starts the database and returns its fixture, tables created. */
  protected abstract StoreFixture start(Vertx vertx) throws Exception;

  protected abstract void stop() throws Exception;

  @BeforeAll
  void startAll() throws Exception {
    vertx = Vertx.vertx();
    fixture = start(vertx);
  }

  @AfterAll
  void stopAll() throws Exception {
    stop();
    vertx.close().await(120, TimeUnit.SECONDS);
  }

  @BeforeEach
  void clear() throws Exception {
    await(fixture.clear());
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.await(120, TimeUnit.SECONDS);
  }

  private HookedStore<String, JsonObject, Object> hooked() {
    return new HookedStore<>(fixture.store());
  }

  private static List<Object> results(FoldOutcomes<?, Long> out) {
    return out.list().stream().map(o -> o instanceof FoldOutcome.Applied<Long> a ? (Object) a.result() : "rejected").toList();
  }

  @Test
  void appliesABatchInOrderWithOneReadAndOneWrite() throws Exception {
    HookedStore<String, JsonObject, Object> store = hooked();
    FoldWrite<String, JsonObject, Object, Long> fw = Accounts.foldWrite(store);
    List<Object> batch = List.of(deposit("a", 10), withdraw("a", 4), deposit("a", 1));

    FoldOutcomes<Object, Long> out = await(fw.call("a", batch));

    assertEquals(List.of(10L, 6L, 7L), results(out));
    assertEquals(1, out.version());
    assertEquals(1, store.reads.get());
    assertEquals(1, store.writes.get());
    Versioned<JsonObject> now = await(fixture.store().read("a"));
    assertEquals(new Versioned<>(new JsonObject().put("balance", 7), 1), now);
    assertEquals(batch, await(fixture.events("a")));

    FoldOutcomes<Object, Long> next = await(fw.call("a", List.of(withdraw("a", 7))));
    assertEquals(List.of(0L), results(next));
    assertEquals(2, next.version());
    assertEquals(4, await(fixture.events("a")).size());
  }

  @Test
  void anOverdraftFailsOnlyItsOwnCaller(VertxTestContext ctx) {
    Ferry<Object, Long> ferry = Accounts.ferry(vertx, PerKeyConfig.defaults(), fixture.store());
    JsonObject in = deposit("b", 5);
    JsonObject over = withdraw("b", 10);
    JsonObject out = withdraw("b", 5);
    JsonObject malformed = new JsonObject().put("account", "b").put("deposit", -3);
    Future<Long> f1 = ferry.submit(in);
    Future<Long> f2 = ferry.submit(over);
    Future<Long> f3 = ferry.submit(out);
    Future<Long> f4 = ferry.submit(malformed);
    Future.join(f1, f2, f3, f4).onComplete(ar -> ctx.verify(() -> {
      assertEquals(5L, f1.result());
      assertEquals(0L, f3.result());
      for (Future<Long> rejected : List.of(f2, f4)) {
        FerryException e = assertInstanceOf(FerryException.class, rejected.cause());
        assertEquals(FerryError.INPUT_REJECTED, e.kind());
      }
      assertTrue(f2.cause().getMessage().contains("insufficient funds"), f2.cause().getMessage());
      fixture.events("b").onComplete(ctx.succeeding(events -> ctx.verify(() -> {
        assertEquals(List.of(in, out), events);
        ctx.completeNow();
      })));
    }));
  }

  @Test
  void aBatchWhoseInputsAreAllRejectedWritesNothing() throws Exception {
    HookedStore<String, JsonObject, Object> store = hooked();
    FoldOutcomes<Object, Long> out =
        await(Accounts.foldWrite(store).call("c", List.of(withdraw("c", 1), withdraw("c", 2))));

    assertEquals(List.of("rejected", "rejected"), results(out));
    assertEquals(0, out.version());
    assertEquals(0, store.writes.get());
    assertFalse(await(fixture.store().read("c")).exists());
    assertEquals(List.of(), await(fixture.events("c")));
  }

  @Test
  void aWriterBetweenReadAndWriteMakesTheBatchReadAndFoldAgain() throws Exception {
    HookedStore<String, JsonObject, Object> store = hooked();
    AtomicInteger writes = new AtomicInteger();
    JsonObject[] outside = {new JsonObject().put("balance", 100)};
    // The first write of each batch meets a plain-SQL writer that got there first.
    store.onWrite((key, expected, write) -> writes.incrementAndGet() % 2 == 1
        ? fixture.writeOutside(key, outside[0]).compose(v -> write.get())
        : write.get());
    FoldWrite<String, JsonObject, Object, Long> fw = Accounts.foldWrite(store);

    // Creation race: the outside writer creates the account with 100; the re-fold now accepts the
    // withdrawal it had rejected against the empty account.
    FoldOutcomes<Object, Long> created = await(fw.call("d", List.of(deposit("d", 1), withdraw("d", 50))));
    assertEquals(List.of(101L, 51L), results(created));
    assertEquals(2, created.attempts());
    assertEquals(2, created.version());

    // Update race: the outside writer empties the account; the re-fold rejects what it had accepted.
    outside[0] = new JsonObject().put("balance", 0);
    FoldOutcomes<Object, Long> emptied = await(fw.call("d", List.of(withdraw("d", 10))));
    assertEquals(List.of("rejected"), results(emptied));
    assertEquals(2, emptied.attempts());
    assertEquals(3, emptied.version());

    assertEquals(new Versioned<>(new JsonObject().put("balance", 0), 3), await(fixture.store().read("d")));
    assertEquals(List.of(deposit("d", 1), withdraw("d", 50)), await(fixture.events("d")));
    assertEquals(2, store.conflicts.get());
  }

  @Test
  void conflictsOnEveryAttemptFailTheBatchAndWriteNothing(VertxTestContext ctx) {
    HookedStore<String, JsonObject, Object> store = hooked();
    AtomicInteger bumps = new AtomicInteger();
    store.onWrite((key, expected, write) -> fixture
        .writeOutside(key, new JsonObject().put("balance", 1000 * bumps.incrementAndGet()))
        .compose(v -> write.get()));
    FoldWrite<String, JsonObject, Object, Long> fw = FoldWrite
        .<String, JsonObject, Object, Long>builder(store, Accounts::apply)
        .initial(Accounts::opened).maxAttempts(3).build();
    Ferry<Object, Long> ferry = fw.ferry(vertx, PerKeyConfig.defaults(), o -> Accounts.accountOf((JsonObject) o));

    ferry.submit(deposit("e", 5)).onComplete(ctx.failing(e -> ctx.verify(() -> {
      FerryException fe = assertInstanceOf(FerryException.class, e);
      assertEquals(FerryError.FAILED, fe.kind());
      assertEquals(3, assertInstanceOf(WriteConflictException.class, fe.getCause()).attempts());
      Future.all(fixture.store().read("e"), fixture.events("e")).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
        assertEquals(new Versioned<>(new JsonObject().put("balance", 3000), 3), all.resultAt(0));
        assertEquals(List.of(), all.resultAt(1));
        ctx.completeNow();
      })));
    })));
  }

  @Test
  void randomizedRunMatchesTheSequentialFoldOfAcknowledgedInputs() throws Exception {
    long seed = Long.getLong("ferry.seed", System.nanoTime());
    try {
      new RandomRun(vertx, fixture, seed).runAndCheck();
    } catch (AssertionError | Exception e) {
      throw new AssertionError("randomized run failed; rerun with -Dferry.seed=" + seed + ": " + e, e);
    }
  }
}
