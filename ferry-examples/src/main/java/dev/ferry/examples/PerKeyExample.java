package dev.ferry.examples;

import dev.ferry.Ferry;
import dev.ferry.PerKeyConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A runnable tour of {@link Ferry#perKey}: a few hot accounts flooded with deposits while quiet
 * accounts trickle in, over a downstream whose every call costs one 5 ms round trip whatever it
 * carries. It prints how many round trips the batching saved.
 */
public final class PerKeyExample {
  /** One deposit into one account. */
  record Deposit(String account, long cents) {}

  public static void main(String[] args) {
    int deposits = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    Vertx vertx = Vertx.vertx();
    AtomicInteger roundTrips = new AtomicInteger();

    // Every deposit is submitted at once below, so the waiting room is sized for all of them.
    // The downstream: one call per batch, one 5 ms round trip, one new balance per deposit.
    Ferry<Deposit, Long> ferry = Ferry.perKey(vertx, PerKeyConfig.builder().maxQueueing(100_000).build(), Deposit::account,
        (String account, List<Deposit> batch) -> {
          roundTrips.incrementAndGet();
          return vertx.timer(5).map(t -> batch.stream().mapToLong(Deposit::cents).sum());
        },
        (deposit, batchTotal) -> batchTotal);

    long start = System.nanoTime();
    List<Future<Long>> outcomes = new ArrayList<>(deposits);
    for (int i = 0; i < deposits; i++) {
      // Nine in ten deposits go to three hot accounts; the rest spread over a thousand quiet ones.
      String account = i % 10 != 0 ? "hot-" + (i % 3) : "quiet-" + (i % 1000);
      outcomes.add(ferry.submit(new Deposit(account, 100)));
    }
    Future.join(outcomes).onComplete(done -> {
      long ms = (System.nanoTime() - start) / 1_000_000;
      long ok = outcomes.stream().filter(Future::succeeded).count();
      System.out.printf("%d deposits acknowledged in %d ms using %d round trips (%.1f deposits per round trip)%n",
          ok, ms, roundTrips.get(), ok / (double) roundTrips.get());
      System.out.println(ferry.metrics().toJson().encodePrettily());
      ferry.close().onComplete(c -> vertx.close());
    });
  }

  private PerKeyExample() {}
}
