package dev.ferry.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The seeded sweep of random downstream shapes of the adaptive-dispatch issue (not part of the
 * default run: select it with {@code --only xsweep}): pool 1-64, call 0.2-20 ms, 1-10,000 keys drawn
 * Zipf(1.0), {@code maxBatchSize} 1-100, each drawn log-uniformly from seed {@code --seed} (default
 * 17). Every contender of {@link Contender#adaptiveSet} runs at 10, 50, 90 and 110% of the shape's
 * capacity; a shape is met when Ferry meets the rule at every one of them. {@code
 * --shape-list 3,5} runs only those shapes of the seed's draw (to look again at a miss).
 */
final class Sweep implements Scenario {
  static int shapes = 20;
  static long seed = 17;
  /** The shapes to run, numbered from 1 as in the summary (null: the first {@link #shapes}). */
  static List<Integer> only;

  @Override
  public String id() {
    return "xsweep";
  }

  @Override
  public String title() {
    return "Adaptive dispatch: " + shapes + " random downstream shapes (seed " + seed + ")";
  }

  static List<Downstream> shapes(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed);
    List<Downstream> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int pool = (int) Math.round(logUniform(r, 1, 64));
      long call = (long) (logUniform(r, 0.2, 20) * 1_000_000);
      int keys = (int) Math.round(logUniform(r, 1, 10_000));
      int batch = (int) Math.round(logUniform(r, 1, 100));
      // The per-input share of a full batch's cost: 0 to 50%.
      long perInput = (long) (call * r.nextDouble() * 0.5 / batch);
      out.add(new Downstream("shape " + (i + 1), "", pool, call, perInput, keys, true, batch));
    }
    return out;
  }

  private static double logUniform(SplittableRandom r, double lo, double hi) {
    return Math.exp(Math.log(lo) + r.nextDouble() * (Math.log(hi) - Math.log(lo)));
  }

  @Override
  public Outcome run(BenchEnv env) throws Exception {
    List<Integer> loads = env.pick(List.of(10, 50, 90, 110), List.of(50));
    List<Downstream> all;
    if (only == null) {
      all = shapes(seed, env.pick(shapes, 2));
    } else {
      List<Downstream> drawn = shapes(seed, only.stream().max(Integer::compare).orElse(0));
      all = only.stream().map(n -> drawn.get(n - 1)).toList(); // numbered from 1, as in the summary
    }
    List<Row> rows = new ArrayList<>();
    JsonArray results = new JsonArray();
    StringBuilder csv = new StringBuilder();
    int shapesMet = 0;
    int twinShapesMet = 0;
    int twinPoints = 0;
    int twinsAgree = 0;
    int points = 0;
    for (Downstream shape : all) {
      System.out.printf("  %s: %s, capacity %,.0f/s%s%n", shape.id(), shape.describe(), shape.capacity(),
          shape.capped() ? " (capped)" : "");
      ShapeVsLoad.Result r = ShapeVsLoad.sweep(env, shape, loads, Contender.adaptiveSet(),
          env.pick(Duration.ofMillis(1000), Duration.ofMillis(200)));
      boolean ok = r.met() == r.judged();
      shapesMet += ok ? 1 : 0;
      points += r.judged();
      if (r.twinMet() >= 0) {
        twinShapesMet += r.twinMet() == r.judged() ? 1 : 0;
        twinPoints += r.twinMet();
        twinsAgree += r.twinsAgree();
      }
      csv.append("# ").append(shape.id()).append(": ").append(shape.describe()).append('\n').append(r.csv());
      results.add(new JsonObject().put("shape", shape.describe()).put("capacityPerSec", shape.capacity())
          .put("capped", shape.capped()).put("met", r.met()).put("judged", r.judged()).put("points", r.points()));
      StringBuilder detail = new StringBuilder();
      for (Row row : r.rows()) {
        if (row.verdict().equals("no")) {
          detail.append(row.figure()).append(": ").append(row.measured()).append("; ");
        }
      }
      rows.add(new Row(id(), shape.id() + " (" + shape.describe() + ")", r.met() + "/" + r.judged() + " loads met"
          + (detail.length() > 0 ? " - missed " + detail : ""), "all loads", String.format("capacity %,.0f/s",
          shape.capacity()), Row.verdict(ok)));
    }
    rows.add(new Row(id(), "shapes met", shapesMet + " of " + all.size(), ">= 18 of 20", "seed " + seed,
        Row.verdict(shapesMet >= Math.min(18, all.size()))));
    if (ShapeVsLoad.withTwin) {
      rows.add(new Row(id(), "ferry twin (calibration)", String.format("an identical copy met the rule in %d of %d"
          + " shapes (%d of %d points); ferry and twin within the rule of each other at %d of %d points",
          twinShapesMet, all.size(), twinPoints, points, twinsAgree, points), "", "seed " + seed, "-"));
    }
    Files.writeString(env.out().resolve("xsweep.csv"), csv);
    return new Outcome(new JsonObject().put("seed", seed).put("shapes", results), rows);
  }
}
