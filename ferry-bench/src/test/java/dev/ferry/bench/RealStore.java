package dev.ferry.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Scenario 6: hot entities on a real store. {@link FoldWriteBench}'s comparison, run by the
 * harness with short durations: an embedded PostgreSQL, {@value #WRITERS} closed-loop writers
 * depositing into {@value #ENTITIES} accounts, unbatched read-modify-write with conditional writes
 * and retry against Ferry.perKey + FoldWrite. Cluster forwarding is measured elsewhere
 * ({@code ForwardingBench}) and is not part of this scenario.
 *
 * <p>The store's round trip is whatever PostgreSQL delivers during the run (ADR 0070): the mean
 * read or write duration is recorded, and Ferry's throughput is shown beside the closed-loop bound
 * {@code writers / (read + write)}: an update cannot be acknowledged before the one FoldWrite call
 * that carries it (one read, one write) is over, so with W writers at most W updates complete per
 * call duration.
 */
final class RealStore implements Scenario {
  static final int ENTITIES = 8;
  static final int WRITERS = 64;

  @Override
  public String id() {
    return "s6";
  }

  @Override
  public String title() {
    return "Real store: FoldWrite on PostgreSQL against unbatched read-modify-write";
  }

  private static String ratio(double a, double b) {
    return b > 0 ? String.format("%.1fx", a / b) : "n/a: nothing acknowledged";
  }

  @Override
  public Outcome run(BenchEnv env) throws Exception {
    Duration warm = env.pick(Duration.ofMillis(1000), Duration.ofMillis(500));
    Duration measure = env.pick(Duration.ofSeconds(4), Duration.ofMillis(1000));
    List<FoldWriteBench.Result> results = FoldWriteBench.compare(env.vertx(), ENTITIES, WRITERS, warm, measure);
    FoldWriteBench.Result unbatched = results.get(0);
    FoldWriteBench.Result ferry = results.get(1);
    JsonArray modes = new JsonArray();
    List<Row> rows = new ArrayList<>();
    DefaultCategoryDataset chart = new DefaultCategoryDataset();
    for (FoldWriteBench.Result r : results) {
      modes.add(r.toJson());
      System.out.printf("   %-28s %,8.0f/s  %.2f round trips/update  %d conflicts  p50 %.2f ms  p99 %.2f ms  round trip %.2f ms%n",
          r.name(), r.perSecond(), r.roundTripsPerUpdate(), r.conflicts(), r.percentileMs(0.5), r.percentileMs(0.99),
          r.meanRoundTripMs());
      chart.addValue(r.perSecond(), "acknowledged updates / s", r.name());
    }
    double bound = WRITERS / (2 * ferry.meanRoundTripMs() / 1e3);
    chart.addValue(bound, "closed-loop bound W / (read + write)", FoldWriteBench.FERRY);
    rows.add(new Row(id(), "unbatched: updates/s, round trips/update, conflicts, p50/p99",
        String.format("%,.0f/s, %.2f, %d, %.1f/%.1f ms", unbatched.perSecond(), unbatched.roundTripsPerUpdate(),
            unbatched.conflicts(), unbatched.percentileMs(0.5), unbatched.percentileMs(0.99)),
        "-", String.format("mean round trip %.2f ms (incl. pool wait)", unbatched.meanRoundTripMs()), "-"));
    rows.add(new Row(id(), "Ferry + FoldWrite: updates/s, round trips/update, p50/p99",
        String.format("%,.0f/s (%s unbatched), %.2f, %.1f/%.1f ms", ferry.perSecond(),
            ratio(ferry.perSecond(), unbatched.perSecond()), ferry.roundTripsPerUpdate(), ferry.percentileMs(0.5),
            ferry.percentileMs(0.99)),
        "-", String.format("%,.0f/s = %d writers / (2 x %.2f ms)", bound, WRITERS, ferry.meanRoundTripMs()), "-"));
    rows.add(new Row(id(), "Ferry + FoldWrite: conflicts", String.valueOf(ferry.conflicts()), "0 (one writer per key)",
        "-", Row.verdict(ferry.conflicts() == 0)));
    Charts.bars(env.out().resolve("s6-foldwrite-postgres.png"),
        "FoldWrite on PostgreSQL: " + ENTITIES + " hot accounts, " + WRITERS + " writers", "", "updates / s", chart,
        Double.NaN, null);
    return new Outcome(new JsonObject().put("entities", ENTITIES).put("writers", WRITERS)
        .put("pool", FoldWriteBench.POOL).put("maxBatchSize", FoldWriteBench.MAX_BATCH)
        .put("maxInFlightBatches", FoldWriteBench.MAX_IN_FLIGHT).put("warmMs", warm.toMillis())
        .put("measureMs", measure.toMillis()).put("closedLoopBoundPerSec", bound).put("modes", modes), rows);
  }
}
