package dev.ferry.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Ferry;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.FoldDecision;
import dev.ferry.FoldWrite;
import dev.ferry.PerKeyConfig;
import dev.ferry.Versioned;
import dev.ferry.examples.Accounts;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Thousands of seeded account operations over many accounts through Ferry.perKey + FoldWrite + a
 * real store, with injected read failures, write failures and spurious conflicts. Afterwards each
 * account must be exactly the sequential fold of its acknowledged operations, in submission order,
 * and nothing rejected or failed may have left a trace in the state or the event log.
 */
final class RandomRun {
  private static final int OPERATIONS = 4000;
  private static final int ACCOUNTS = 50;

  private final Vertx vertx;
  private final StoreFixture fixture;
  private final long seed;

  RandomRun(Vertx vertx, StoreFixture fixture, long seed) {
    this.vertx = vertx;
    this.fixture = fixture;
    this.seed = seed;
  }

  void runAndCheck() throws Exception {
    Random rnd = new Random(seed);
    List<JsonObject> ops = new ArrayList<>();
    for (int i = 0; i < OPERATIONS; i++) {
      String account = "r" + rnd.nextInt(ACCOUNTS);
      // About one in fifty is malformed (amount 0); withdrawals run a bit larger so some overdraw.
      long amount = rnd.nextInt(50) == 0 ? 0 : 1 + rnd.nextInt(100);
      JsonObject op = rnd.nextInt(100) < 45 ? Accounts.deposit(account, amount) : Accounts.withdraw(account, amount + 10);
      ops.add(op.put("id", i));
    }

    // Faults are drawn from their own seeded stream; which batch meets which fault depends on timing.
    Random faults = new Random(seed + 1);
    HookedStore<String, JsonObject, Object> store = new HookedStore<>(fixture.store())
        .onRead((key, read) -> draw(faults, 3) ? Future.failedFuture(new IOException("injected read failure")) : read.get())
        .onWrite((key, expected, write) -> {
          int roll = drawInt(faults, 100);
          if (roll < 5) {
            return Future.failedFuture(new IOException("injected write failure, nothing written"));
          }
          return roll < 20 ? Future.succeededFuture(false) : write.get();
        });
    FoldWrite<String, JsonObject, Object, Long> fw = FoldWrite
        .<String, JsonObject, Object, Long>builder(store, Accounts::apply)
        .initial(Accounts::opened).maxAttempts(3).build();
    PerKeyConfig config = PerKeyConfig.builder().maxBatchSize(16).maxInFlightBatches(8).build();
    Ferry<Object, Long> ferry = fw.ferry(vertx, config, o -> Accounts.accountOf((JsonObject) o));

    List<Future<Long>> replies = new ArrayList<>();
    for (JsonObject op : ops) {
      replies.add(ferry.submit(op));
    }
    Future.join(new ArrayList<>(replies)).otherwiseEmpty().await(180, TimeUnit.SECONDS);

    Map<String, JsonObject> model = new LinkedHashMap<>();
    Map<String, List<Object>> acknowledged = new LinkedHashMap<>();
    int acked = 0;
    int rejected = 0;
    int failed = 0;
    for (int i = 0; i < ops.size(); i++) {
      JsonObject op = ops.get(i);
      Future<Long> reply = replies.get(i);
      assertTrue(reply.isComplete(), "every input gets a reply: " + op);
      String account = Accounts.accountOf(op);
      JsonObject state = model.computeIfAbsent(account, a -> Accounts.opened());
      FoldDecision<JsonObject, Long> expected = Accounts.apply(state, op);
      if (reply.succeeded()) {
        acked++;
        FoldDecision.Accepted<JsonObject, Long> ok = assertInstanceOf(FoldDecision.Accepted.class, expected, "acknowledged " + op);
        assertEquals(ok.result(), reply.result(), "result of " + op);
        model.put(account, ok.state());
        acknowledged.computeIfAbsent(account, a -> new ArrayList<>()).add(op);
        continue;
      }
      FerryException e = assertInstanceOf(FerryException.class, reply.cause());
      if (e.kind() == FerryError.INPUT_REJECTED) {
        rejected++;
        assertInstanceOf(FoldDecision.Rejected.class, expected, "rejected " + op + " against " + state);
      } else {
        failed++;
        assertEquals(FerryError.FAILED, e.kind(), "unexpected failure of " + op + ": " + e);
      }
    }
    assertTrue(acked > OPERATIONS / 4 && rejected > 0 && failed > 0 && store.conflicts.get() > 0,
        "the run exercised every path: acked " + acked + ", rejected " + rejected + ", failed " + failed
            + ", conflicts " + store.conflicts.get());

    for (Map.Entry<String, JsonObject> account : model.entrySet()) {
      String key = account.getKey();
      Versioned<JsonObject> stored = fixture.store().read(key).await(120, TimeUnit.SECONDS);
      List<Object> acks = acknowledged.getOrDefault(key, List.of());
      assertEquals(acks.isEmpty() ? null : account.getValue(), stored.state(), "state of " + key);
      assertEquals(acks, fixture.events(key).await(120, TimeUnit.SECONDS), "events of " + key);
    }
  }

  private static synchronized boolean draw(Random r, int percent) {
    return r.nextInt(100) < percent;
  }

  private static synchronized int drawInt(Random r, int bound) {
    return r.nextInt(bound);
  }
}
