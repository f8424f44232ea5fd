package dev.ferry.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Ferry;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.FoldDecision;
import dev.ferry.PerKeyConfig;
import dev.ferry.Versioned;
import dev.ferry.examples.Accounts;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The PostgreSQL server stops while batches are in flight: callers fail with FAILED, and after a
 * restart on the same data every acknowledged deposit is there.
 */
@ExtendWith(VertxExtension.class)
class FoldWritePgOutageTest {
  private static final int DEPOSITS = 600;
  private static final int ACCOUNTS = 10;

  @Test
  void aServerStoppedMidRunFailsCallersAndLosesNothingAcknowledged(Vertx vertx) throws Exception {
    Path data = Files.createTempDirectory("ferry-pg-outage");
    PgServer server = PgServer.start(data, 0);
    int port = server.port();
    Pool pool = server.pool(vertx, 4);
    PgStore pg = PgStore.withEvents(pool, "accounts", "account_events");
    pg.createTables().await(120, TimeUnit.SECONDS);
    // Once 50 are acknowledged, the writes that come next wait until the server has stopped: the
    // stop then lands while batches are in flight however the machine schedules this thread. Left
    // to run, the event loop could finish every deposit before a descheduled test thread got to
    // the stop, and no caller would fail.
    Promise<Void> stoppedServer = Promise.promise();
    AtomicInteger acks = new AtomicInteger();
    java.util.concurrent.atomic.AtomicReference<io.vertx.core.Context> loop = new java.util.concurrent.atomic.AtomicReference<>();
    HookedStore<String, JsonObject, Object> store = new HookedStore<>((dev.ferry.VersionedStore<String, JsonObject, Object>) pg)
        .onWrite((key, expected, write) -> {
          if (acks.get() < 50) {
            return write.get();
          }
          return stoppedServer.future().compose(v -> write.get());
        });
    Ferry<Object, Long> ferry = Accounts.ferry(vertx, PerKeyConfig.builder().maxBatchSize(8).build(), store);

    // All submitted at once: in batches of 8 they need dozens of round trips per account, so the
    // stop, as soon as 50 are acknowledged, lands while most are waiting or in flight.
    Promise<Void> enoughAcked = Promise.promise();
    List<JsonObject> ops = new ArrayList<>();
    List<Future<Long>> replies = new ArrayList<>();
    for (int i = 0; i < DEPOSITS; i++) {
      JsonObject op = Accounts.deposit("o" + (i % ACCOUNTS), 1).put("id", i);
      ops.add(op);
      Future<Long> reply = ferry.submit(op);
      replies.add(reply);
      reply.onSuccess(r -> {
        if (acks.incrementAndGet() == 50) {
          loop.set(Vertx.currentContext()); // the ferry's, where its writes start
          enoughAcked.tryComplete();
        }
      });
    }
    enoughAcked.future().await(120, TimeUnit.SECONDS);
    server.close();
    loop.get().runOnContext(v -> stoppedServer.complete());
    Future.join(new ArrayList<>(replies)).otherwiseEmpty().await(180, TimeUnit.SECONDS);

    int failed = 0;
    for (Future<Long> reply : replies) {
      if (reply.failed()) {
        failed++;
        assertEquals(FerryError.FAILED, assertInstanceOf(FerryException.class, reply.cause()).kind());
      }
    }
    assertTrue(failed > 0, "the stop should fail some callers");
    assertTrue(acks.get() >= 50, "acked " + acks.get());

    // Back up on the same data: every acknowledged deposit is in its account's log, in order, and
    // each state is the fold of its log. A deposit whose commit raced the stop may be there
    // without having been acknowledged: the caller saw FAILED for a write whose outcome was unknown.
    pool.close().await(120, TimeUnit.SECONDS);
    try (PgServer again = PgServer.start(data, port)) {
      Pool pool2 = again.pool(vertx, 2);
      PgStore reopened = PgStore.withEvents(pool2, "accounts", "account_events");
      for (int a = 0; a < ACCOUNTS; a++) {
        String key = "o" + a;
        List<Object> log = reopened.events(key).await(120, TimeUnit.SECONDS);
        List<Object> acked = new ArrayList<>();
        for (int i = 0; i < DEPOSITS; i++) {
          if (Accounts.accountOf(ops.get(i)).equals(key) && replies.get(i).succeeded()) {
            acked.add(ops.get(i));
          }
        }
        assertTrue(log.containsAll(acked), "acknowledged deposits of " + key + " lost");
        JsonObject state = Accounts.opened();
        for (Object op : log) {
          state = ((FoldDecision.Accepted<JsonObject, Long>) Accounts.apply(state, op)).state();
        }
        Versioned<JsonObject> stored = reopened.read(key).await(120, TimeUnit.SECONDS);
        assertEquals(log.isEmpty() ? null : state, stored.state(), "state of " + key);
      }
      pool2.close().await(120, TimeUnit.SECONDS);
    }
  }
}
