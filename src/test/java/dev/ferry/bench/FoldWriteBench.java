package dev.ferry.bench;

import dev.ferry.Ferry;
import dev.ferry.FoldDecision;
import dev.ferry.FoldWrite;
import dev.ferry.PerKeyConfig;
import dev.ferry.examples.Accounts;
import dev.ferry.store.HookedStore;
import dev.ferry.store.PgServer;
import dev.ferry.store.PgStore;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Hot entities on a real (embedded) PostgreSQL: C closed-loop writers deposit into N accounts,
 * (a) each with its own read-modify-write and conditional write, retried on conflict, and (b)
 * through Ferry.perKey + FoldWrite. Prints both side by side. Not a test: run it by hand
 * (see docs/performance.md). Arguments: {@code entities writers seconds} (default 8 64 8).
 */
public final class FoldWriteBench {
  private record Result(String name, long acked, double seconds, long roundTrips, long conflicts, List<Long> latenciesNanos) {
    double perSecond() {
      return acked / seconds;
    }

    double percentileMs(double p) {
      if (latenciesNanos.isEmpty()) {
        return Double.NaN;
      }
      int i = (int) Math.min(latenciesNanos.size() - 1, Math.ceil(p * latenciesNanos.size()) - 1);
      return latenciesNanos.get(Math.max(0, i)) / 1e6;
    }
  }

  public static void main(String[] args) throws Exception {
    int entities = args.length > 0 ? Integer.parseInt(args[0]) : 8;
    int writers = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 8;
    Vertx vertx = Vertx.vertx();
    try (PgServer server = PgServer.start()) {
      Pool pool = server.pool(vertx, 8);
      PgStore store = PgStore.withEvents(pool, "bench", "bench_events");
      store.createTables().await(30, TimeUnit.SECONDS);
      HookedStore<String, JsonObject, Object> counted = new HookedStore<>(store);
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < entities; i++) {
        keys.add("hot" + i);
      }

      Result unbatched = measure(vertx, "unbatched read-modify-write", writers, seconds, counted,
          w -> readModifyWrite(counted, Accounts.deposit(pick(keys), 1)));
      Ferry<Object, Long> ferry = Accounts.ferry(vertx,
          PerKeyConfig.builder().maxBatchSize(100).maxInFlightBatches(8).build(), counted);
      Result batched = measure(vertx, "Ferry.perKey + FoldWrite", writers, seconds, counted,
          w -> ferry.submit(Accounts.deposit(pick(keys), 1)));
      ferry.close().await(10, TimeUnit.SECONDS);

      System.out.printf("PostgreSQL (embedded, loopback), %d hot entities, %d concurrent writers, %d s each, pool of 8, %d cores%n",
          entities, writers, seconds, Runtime.getRuntime().availableProcessors());
      System.out.println("| mode | acknowledged updates/s | round trips per update | conflicts | p50 ms | p99 ms |");
      System.out.println("| --- | ---: | ---: | ---: | ---: | ---: |");
      for (Result r : List.of(unbatched, batched)) {
        System.out.printf("| %s | %.0f | %.2f | %d | %.2f | %.2f |%n", r.name, r.perSecond(),
            (double) r.roundTrips / Math.max(1, r.acked), r.conflicts, r.percentileMs(0.5), r.percentileMs(0.99));
      }
      pool.close().await(10, TimeUnit.SECONDS);
    } finally {
      vertx.close().await(10, TimeUnit.SECONDS);
    }
  }

  private static String pick(List<String> keys) {
    return keys.get(ThreadLocalRandom.current().nextInt(keys.size()));
  }

  /** The unbatched baseline: read, apply, conditional write; on conflict start over. */
  private static Future<Long> readModifyWrite(HookedStore<String, JsonObject, Object> store, JsonObject op) {
    String key = Accounts.accountOf(op);
    return store.read(key).compose(current -> {
      JsonObject state = current.exists() ? current.state() : Accounts.opened();
      FoldDecision.Accepted<JsonObject, Long> next = (FoldDecision.Accepted<JsonObject, Long>) Accounts.apply(state, op);
      return store.write(key, next.state(), current.version(), List.of(op))
          .compose(written -> written ? Future.succeededFuture(next.result()) : readModifyWrite(store, op));
    });
  }

  /**
   * Runs {@code writers} closed loops of {@code op} for one warm-up second and then {@code seconds}
   * measured ones; counts store round trips and conflicts over the measured part only.
   */
  private static Result measure(Vertx vertx, String name, int writers, int seconds,
      HookedStore<String, JsonObject, Object> store, Function<Integer, Future<?>> op) {
    ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
    long[] start = new long[3]; // elapsed nanos, round trips, conflicts of the measured part
    AtomicInteger running = new AtomicInteger(writers);
    Promise<Void> done = Promise.promise();
    AtomicBoolean measuring = new AtomicBoolean();
    AtomicBoolean stopping = new AtomicBoolean();
    for (int w = 0; w < writers; w++) {
      int writer = w;
      vertx.runOnContext(v -> loop(writer, op, latencies, measuring, stopping, running, done));
    }
    vertx.setTimer(1000, t -> {
      start[0] = System.nanoTime();
      start[1] = store.reads.get() + store.writes.get();
      start[2] = store.conflicts.get();
      measuring.set(true);
      vertx.setTimer(seconds * 1000L, t2 -> {
        measuring.set(false);
        stopping.set(true);
        start[0] = System.nanoTime() - start[0];
        start[1] = store.reads.get() + store.writes.get() - start[1];
        start[2] = store.conflicts.get() - start[2];
      });
    });
    done.future().await();
    List<Long> sorted = new ArrayList<>(latencies);
    Collections.sort(sorted);
    return new Result(name, sorted.size(), start[0] / 1e9, start[1], start[2], sorted);
  }

  private static void loop(int writer, Function<Integer, Future<?>> op, ConcurrentLinkedQueue<Long> latencies,
      AtomicBoolean measuring, AtomicBoolean stopping,
      AtomicInteger running, Promise<Void> done) {
    if (stopping.get()) {
      if (running.decrementAndGet() == 0) {
        done.complete();
      }
      return;
    }
    long t0 = System.nanoTime();
    boolean counted = measuring.get();
    op.apply(writer).onComplete(ar -> {
      if (counted && measuring.get() && ar.succeeded()) {
        latencies.add(System.nanoTime() - t0);
      }
      loop(writer, op, latencies, measuring, stopping, running, done);
    });
  }
}
