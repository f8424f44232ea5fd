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
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Hot entities on a real (embedded) PostgreSQL: C closed-loop writers deposit into N accounts,
 * (a) each with its own read-modify-write and conditional write, retried on conflict, and (b)
 * through Ferry.perKey + {@link FoldWrite}. The harness runs it as scenario 6 ({@link RealStore});
 * {@link #main} runs it alone and prints the table (see docs/performance.md). Arguments: {@code
 * entities writers seconds} (default 8 64 8).
 */
public final class FoldWriteBench {
  static final int POOL = 8;
  static final int MAX_BATCH = 100;
  static final int MAX_IN_FLIGHT = 8;
  static final String UNBATCHED = "unbatched read-modify-write";
  static final String FERRY = "Ferry.perKey + FoldWrite";

  /**
   * One mode's measured part.
   *
   * @param roundTrips store reads plus writes
   * @param storeNanos summed duration of those reads and writes, as the client saw them
   * @param latenciesNanos acknowledged updates' latencies, sorted
   */
  record Result(String name, long acked, double seconds, long roundTrips, long conflicts, long storeNanos,
      List<Long> latenciesNanos) {
    double perSecond() {
      return acked / seconds;
    }

    double roundTripsPerUpdate() {
      return (double) roundTrips / Math.max(1, acked);
    }

    /** Mean duration of one store round trip (a read or a write) as delivered during the run. */
    double meanRoundTripMs() {
      return storeNanos / 1e6 / Math.max(1, roundTrips);
    }

    double percentileMs(double p) {
      if (latenciesNanos.isEmpty()) {
        return Double.NaN;
      }
      int i = (int) Math.min(latenciesNanos.size() - 1, Math.ceil(p * latenciesNanos.size()) - 1);
      return latenciesNanos.get(Math.max(0, i)) / 1e6;
    }

    JsonObject toJson() {
      return new JsonObject().put("mode", name).put("ackedPerSec", perSecond()).put("acked", acked)
          .put("seconds", seconds).put("roundTripsPerUpdate", roundTripsPerUpdate()).put("conflicts", conflicts)
          .put("meanRoundTripMs", meanRoundTripMs()).put("p50Ms", percentileMs(0.5)).put("p99Ms", percentileMs(0.99));
    }
  }

  public static void main(String[] args) throws Exception {
    int entities = args.length > 0 ? Integer.parseInt(args[0]) : 8;
    int writers = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 8;
    Vertx vertx = Vertx.vertx();
    try {
      List<Result> results = compare(vertx, entities, writers, Duration.ofSeconds(1), Duration.ofSeconds(seconds));
      System.out.printf("PostgreSQL (embedded, loopback), %d hot entities, %d concurrent writers, %d s each, pool of %d, %d cores%n",
          entities, writers, seconds, POOL, Runtime.getRuntime().availableProcessors());
      System.out.println("| mode | acknowledged updates/s | round trips per update | conflicts | p50 ms | p99 ms |");
      System.out.println("| --- | ---: | ---: | ---: | ---: | ---: |");
      for (Result r : results) {
        System.out.printf("| %s | %.0f | %.2f | %d | %.2f | %.2f |%n", r.name, r.perSecond(),
            r.roundTripsPerUpdate(), r.conflicts, r.percentileMs(0.5), r.percentileMs(0.99));
      }
    } finally {
      vertx.close().await(10, TimeUnit.SECONDS);
    }
  }

  /**
   * Starts an embedded PostgreSQL, runs both modes back to back against it ({@code warm}
   * discarded, then {@code measure} counted), stops it, and returns [unbatched, Ferry]. Blocks:
   * call it off the event loop.
   */
  static List<Result> compare(Vertx vertx, int entities, int writers, Duration warm, Duration measure) throws Exception {
    try (PgServer server = PgServer.start()) {
      Pool pool = server.pool(vertx, POOL);
      try {
        PgStore store = PgStore.withEvents(pool, "bench", "bench_events");
        store.createTables().await(30, TimeUnit.SECONDS);
        AtomicLong storeNanos = new AtomicLong();
        HookedStore<String, JsonObject, Object> counted = new HookedStore<String, JsonObject, Object>(store)
            .onRead((k, read) -> timed(read.get(), storeNanos))
            .onWrite((k, v, write) -> timed(write.get(), storeNanos));
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < entities; i++) {
          keys.add("hot" + i);
        }

        Result unbatched = measure(vertx, UNBATCHED, writers, warm, measure, counted, storeNanos,
            w -> readModifyWrite(counted, Accounts.deposit(pick(keys), 1)));
        Ferry<Object, Long> ferry = Accounts.ferry(vertx,
            PerKeyConfig.builder().maxBatchSize(MAX_BATCH).maxInFlightBatches(MAX_IN_FLIGHT).build(), counted);
        Result batched = measure(vertx, FERRY, writers, warm, measure, counted, storeNanos,
            w -> ferry.submit(Accounts.deposit(pick(keys), 1)));
        ferry.close().await(10, TimeUnit.SECONDS);
        return List.of(unbatched, batched);
      } finally {
        pool.close().await(10, TimeUnit.SECONDS);
      }
    }
  }

  private static <T> Future<T> timed(Future<T> op, AtomicLong sum) {
    long t0 = System.nanoTime();
    return op.andThen(ar -> sum.addAndGet(System.nanoTime() - t0));
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
   * Runs {@code writers} closed loops of {@code op} for {@code warm} and then {@code measure};
   * counts acknowledged updates, store round trips, their duration and conflicts over the measured
   * part only.
   */
  private static Result measure(Vertx vertx, String name, int writers, Duration warm, Duration measure,
      HookedStore<String, JsonObject, Object> store, AtomicLong storeNanos, Function<Integer, Future<?>> op) {
    ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
    // elapsed nanos, round trips, conflicts, store nanos of the measured part
    long[] start = new long[4];
    AtomicInteger running = new AtomicInteger(writers);
    Promise<Void> done = Promise.promise();
    AtomicBoolean measuring = new AtomicBoolean();
    AtomicBoolean stopping = new AtomicBoolean();
    for (int w = 0; w < writers; w++) {
      int writer = w;
      vertx.runOnContext(v -> loop(writer, op, latencies, measuring, stopping, running, done));
    }
    vertx.setTimer(Math.max(1, warm.toMillis()), t -> {
      start[0] = System.nanoTime();
      start[1] = store.reads.get() + store.writes.get();
      start[2] = store.conflicts.get();
      start[3] = storeNanos.get();
      measuring.set(true);
      vertx.setTimer(Math.max(1, measure.toMillis()), t2 -> {
        measuring.set(false);
        stopping.set(true);
        start[0] = System.nanoTime() - start[0];
        start[1] = store.reads.get() + store.writes.get() - start[1];
        start[2] = store.conflicts.get() - start[2];
        start[3] = storeNanos.get() - start[3];
      });
    });
    done.future().await();
    List<Long> sorted = new ArrayList<>(latencies);
    Collections.sort(sorted);
    return new Result(name, sorted.size(), start[0] / 1e9, start[1], start[2], start[3], sorted);
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
    op.apply(writer).onComplete(ar -> {
      // Every update acknowledged inside the window counts, also one begun during the warm-up:
      // counting only those begun inside it would drop the slowest (the unbatched mode's p99 is
      // seconds) and undercount throughput by up to one latency's worth of updates.
      if (measuring.get() && ar.succeeded()) {
        latencies.add(System.nanoTime() - t0);
      }
      loop(writer, op, latencies, measuring, stopping, running, done);
    });
  }
}
