package dev.ferry.bench;

import dev.ferry.Dispatch;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * Scenario {@code xvirt}: the adaptive-dispatch judgement (issue "Adaptive dispatch") over many
 * downstream shapes at once, in virtual time ({@link VirtualLoop}), so its figures are the same on
 * any machine under any load and a whole sweep takes about a minute.
 *
 * <p>Each shape is a store and a key mix: a FIFO pool of connections (calls beyond it wait in
 * order), a processor-sharing server (every call in service progresses at {@code cores / n} of its
 * speed: CPU, a database whose connections share its cores), a pool that changes size during the
 * run, fast and slow calls, uniform and Zipf keys. Inputs arrive open-loop (Poisson, seeded: the
 * seed is printed) at a share of the shape's capacity; every contender sees the same arrivals, one
 * fresh ferry per point: adaptive dispatch (the default since ADR 0016, judged), the seeds' fixed
 * slots as they were the default until then ({@code fixed slots 16}), fixed slots with a 1 ms
 * and a 5 ms batch delay, fixed slots with direct calls off and as many slots as connections, and
 * one call per input (unbatched). At loads up to 90% the p99 of every contender is printed and the
 * issue's rule judged (at most max(1.1 x best other, best other + 1 ms)); from 100%, the inputs
 * delivered per second (at least 0.97 x the best other).
 */
final class VirtualShapes implements Scenario {
  private static final long MS = 1_000_000L;
  /** The arrivals' seed; {@code --seed} changes it. */
  static long seed = 17;
  /** Prints the limit over time for every point (diagnosis: {@code -Dxvirt.trace=true}). */
  static final boolean TRACE = Boolean.getBoolean("xvirt.trace");
  static final List<Integer> LOADS = List.of(1, 5, 10, 25, 50, 75, 90, 100, 110, 120);

  /**
   * A store and its key mix. {@code cores} 0: a FIFO pool of {@code pool}; otherwise at most
   * {@code pool} calls in service, sharing {@code cores} (processor sharing). {@code poolPhases}:
   * pool sizes taking turns every {@code phaseMs} (empty: fixed).
   */
  record Shape(String id, String name, int pool, int cores, double baseMs, double perInputMs, int keys, boolean zipf,
      int maxBatchSize, int[] poolPhases, long phaseMs, double maxRate) {
    Shape(String id, String name, int pool, int cores, double baseMs, double perInputMs, int keys, boolean zipf,
        int maxBatchSize, int[] poolPhases, long phaseMs) {
      this(id, name, pool, cores, baseMs, perInputMs, keys, zipf, maxBatchSize, poolPhases, phaseMs, 0);
    }

    /** Inputs per second with full batches at the smallest pool. */
    double capacity() {
      int servers = cores > 0 ? Math.min(cores, pool) : Arrays.stream(poolPhases.length == 0 ? new int[] {pool}
          : poolPhases).min().getAsInt();
      double full = servers * maxBatchSize / ((baseMs + perInputMs * maxBatchSize) / 1e3);
      return maxRate > 0 ? Math.min(full, maxRate) : full;
    }
  }

  static final List<Shape> SHAPES = List.of(
      new Shape("fifo4", "scenario 3: FIFO pool 4, 2 ms + 5 us/input, 16 keys", 4, 0, 2, 0.005, 16, false, 8,
          new int[0], 0),
      new Shape("fifo64", "(a) FIFO pool 64, 2 ms + 5 us/input, 256 keys", 64, 0, 2, 0.005, 256, false, 8,
          new int[0], 0),
      new Shape("zipf10k", "(b) FIFO pool 4, 2 ms + 5 us/input, 10,000 keys Zipf", 4, 0, 2, 0.005, 10_000, true, 8,
          new int[0], 0),
      new Shape("change", "(c) FIFO pool 16 -> 4 -> 16 every 1 s, 64 keys", 16, 0, 2, 0.005, 64, false, 8,
          new int[] {16, 4, 16}, 1_000),
      new Shape("fast", "(d) FIFO pool 4, 0.2 ms + 5 us/input, 16 keys", 4, 0, 0.2, 0.005, 16, false, 8,
          new int[0], 0),
      new Shape("hot10", "(e) FIFO pool 8, 2 ms + 0.1 ms/input, 64 keys Zipf, maxBatchSize 10", 8, 0, 2, 0.1, 64,
          true, 10, new int[0], 0),
      new Shape("ps2", "processor sharing: 2 cores, 16 connections, 1 ms + 0.1 ms/input, 1,000 keys Zipf", 16, 2, 1,
          0.1, 1_000, true, 20, new int[0], 0),
      new Shape("ps4", "processor sharing: 4 cores, 64 connections, 5 ms + 0.5 ms/input, 64 keys Zipf", 64, 4, 5, 0.5,
          64, true, 10, new int[0], 0),
      new Shape("slow", "FIFO pool 8, 20 ms + 0.2 ms/input, 2,000 keys Zipf, maxBatchSize 100", 8, 0, 20, 0.2, 2_000,
          true, 100, new int[0], 0));

  /**
   * Shapes run only when named in {@code -Dxvirt.shapes}: not part of the judged 90 points.
   * {@code x3a}: the real-time variant (a) as {@code ShapeVsLoad} runs it, loads capped at what its
   * generator sends (30,000/s), for diagnosing it in virtual time with {@code -Dxvirt.tick} and
   * {@code -Dxvirt.jitter}.
   */
  static final List<Shape> EXTRA = List.of(
      new Shape("x3a", "real-time (a): FIFO pool 64, 2 ms + 5 us/input, 256 keys, loads of 30,000/s", 64, 0, 2, 0.005,
          256, false, 8, new int[0], 0, 30_000));

  /**
   * Latency noise that does not grow with the calls in flight, as a real machine adds it: every
   * call's reply comes {@code jitter} ms late on average (exponential, seeded per point; a loaded
   * machine's scheduler, GC), and replies arrive on whole ticks of {@code tick} ms (Vert.x timers on
   * the NIO transport wake in whole milliseconds). 0: none (the default, and the judged sweep).
   */
  static final double TICK_MS = Double.parseDouble(System.getProperty("xvirt.tick", "0"));
  static final double JITTER_MS = Double.parseDouble(System.getProperty("xvirt.jitter", "0"));
  /**
   * {@code -Dxvirt.drift=N}: the jitter's mean is redrawn every N ms (exponential around {@link
   * #JITTER_MS}), as a loaded machine's spells of having a core or not; 0: the same throughout.
   */
  static final double DRIFT_MS = Double.parseDouble(System.getProperty("xvirt.drift", "0"));
  /**
   * {@code -Dxvirt.hits=H}: a cache in front of the store answers a share H of the calls (drawn per
   * call, seeded) in {@code -Dxvirt.hitMs} (0.2 ms by default) without taking a connection; 0: none.
   */
  static final double HITS = Double.parseDouble(System.getProperty("xvirt.hits", "0"));
  static final double HIT_MS = Double.parseDouble(System.getProperty("xvirt.hitMs", "0.2"));
  /**
   * {@code -Dxvirt.sigma=S}: each call's cost is multiplied by a lognormal factor of mean 1 and
   * shape S (a heavy-tailed downstream), seeded; 0: none.
   */
  static final double SIGMA = Double.parseDouble(System.getProperty("xvirt.sigma", "0"));

  /** A contender of this sweep: a per-key config, or null for one call per input (not {@link Contender}: no Vert.x here). */
  record Entrant(String name, Function<Shape, PerKeyConfig> config) {}

  private static final String CEILING = "adaptive ceiling";

  static final List<Entrant> ENTRANTS = List.of(
      // The default config, adaptive dispatch since ADR 0016: the contender judged.
      new Entrant("adaptive", s -> base(s).build()),
      new Entrant("fixed slots 16", s -> base(s).dispatch(Dispatch.FIXED_SLOTS).maxInFlightBatches(16).build()),
      new Entrant("fixed 1ms", s -> base(s).dispatch(Dispatch.FIXED_SLOTS).maxInFlightBatches(16)
          .maxBatchDelay(Duration.ofMillis(1)).build()),
      new Entrant("fixed 5ms", s -> base(s).dispatch(Dispatch.FIXED_SLOTS).maxInFlightBatches(16)
          .maxBatchDelay(Duration.ofMillis(5)).build()),
      new Entrant("direct off", s -> base(s).dispatch(Dispatch.FIXED_SLOTS).maxInFlightBatches(s.pool)
          .directIdleKeys(false).build()),
      new Entrant("unbatched", s -> null),
      // A reference, not a contender: adaptive dispatch with the limit pinned at the pool (what a
      // perfect controller would hold on a FIFO pool). Never counted as the best other.
      new Entrant("pinned@pool", s -> base(s).dispatch(Dispatch.ADAPTIVE).maxInFlightBatches(s.pool)
          .pinnedLimit(s.cores > 0 ? s.cores : s.pool).build()),
      new Entrant("pinned fcfs", s -> base(s).dispatch(Dispatch.ADAPTIVE).maxInFlightBatches(s.pool)
          .pinnedLimit(s.cores > 0 ? s.cores : s.pool).directIdleKeys(false).build()),
      new Entrant("adaptive fcfs", s -> base(s).dispatch(Dispatch.ADAPTIVE).directIdleKeys(false).build()),
      // Run only when named in -Dxvirt.contenders: the default with its ceiling (maxInFlightBatches)
      // at -Dxvirt.ceiling times the pool (2 by default), the workaround the per-key guide gives for
      // a cache in front of the store.
      new Entrant(CEILING, s -> base(s).maxInFlightBatches((int) Math.max(1,
          Double.parseDouble(System.getProperty("xvirt.ceiling", "2")) * s.pool)).build()));

  private static PerKeyConfig.Builder base(Shape s) {
    return PerKeyConfig.builder().maxBatchSize(s.maxBatchSize).maxQueueing(10_000_000);
  }

  /** One point: p99 in ms of the inputs submitted in the window, inputs answered per second, the limit's range. */
  record Point(double p50, double p99, double perSec, int limitLow, int limitHigh) {}

  @Override
  public String id() {
    return "xvirt";
  }

  @Override
  public String title() {
    return "Adaptive dispatch over many downstream shapes, in virtual time (seed " + seed + ")";
  }

  @Override
  public Outcome run(BenchEnv env) {
    String onlyShapes = System.getProperty("xvirt.shapes", "");
    String onlyContenders = System.getProperty("xvirt.contenders", "");
    String onlyLoads = System.getProperty("xvirt.loads", "");
    List<Integer> loads = !onlyLoads.isEmpty() ? Arrays.stream(onlyLoads.split(",")).map(Integer::valueOf).toList()
        : env.pick(LOADS, List.of(10, 50, 90, 110));
    List<Row> rows = new ArrayList<>();
    JsonArray data = new JsonArray();
    int met = 0;
    int judged = 0;
    System.out.printf("   seed %d%n", seed);
    List<Shape> shapes = new ArrayList<>(SHAPES);
    for (Shape extra : EXTRA) {
      if (Arrays.asList(onlyShapes.split(",")).contains(extra.id)) {
        shapes.add(extra);
      }
    }
    if (HITS > 0 || SIGMA > 0) {
      System.out.printf("   a cache answers %.0f%% of calls in %.2f ms; lognormal cost factor sigma %.2f%n", 100 * HITS,
          HIT_MS, SIGMA);
    }
    if (TICK_MS > 0 || JITTER_MS > 0) {
      System.out.printf("   latency noise: replies on %.2f ms ticks, %.2f ms mean jitter, redrawn every %.1f ms%n",
          TICK_MS, JITTER_MS, DRIFT_MS);
    }
    for (Shape shape : shapes) {
      if (!onlyShapes.isEmpty() && !Arrays.asList(onlyShapes.split(",")).contains(shape.id)) {
        continue;
      }
      List<Entrant> contenders = ENTRANTS.stream()
          .filter(c -> (onlyContenders.isEmpty() && !c.name.equals(CEILING))
              || Arrays.asList(onlyContenders.split(",")).contains(c.name) || c.name.equals("adaptive"))
          .toList();
      double capacity = capacity(shape);
      System.out.printf("   %s: %s (nominal capacity %,.0f/s, measured %,.0f/s)%n", shape.id, shape.name,
          shape.capacity(), capacity);
      StringBuilder head = new StringBuilder(String.format("      %5s", "load"));
      contenders.forEach(c -> head.append(String.format(" %14s", c.name)));
      System.out.println(head.append("  adaptive limit   met"));
      JsonArray points = new JsonArray();
      int shapeMet = 0;
      int shapeJudged = 0;
      for (int load : loads) {
        double rate = capacity * load / 100.0;
        List<Point> ps = new ArrayList<>();
        for (Entrant c : contenders) {
          ps.add(run(shape, c.config.apply(shape), rate, seed + load));
        }
        Point adaptive = ps.get(indexOf(contenders, "adaptive"));
        StringBuilder line = new StringBuilder(String.format("      %4d%%", load));
        JsonObject point = new JsonObject().put("load", load);
        double best = load <= 90 ? Double.MAX_VALUE : 0;
        for (int i = 0; i < contenders.size(); i++) {
          Point p = ps.get(i);
          line.append(load <= 90 ? String.format(" %11.1f ms", p.p99) : String.format(" %,12.0f/s", p.perSec));
          point.put(contenders.get(i).name, new JsonObject().put("p50Ms", p.p50).put("p99Ms", p.p99)
              .put("perSec", p.perSec));
          if (!contenders.get(i).name.equals("adaptive") && !contenders.get(i).name.startsWith("pinned")
              && !contenders.get(i).name.startsWith("adaptive")) {
            best = load <= 90 ? Math.min(best, p.p99) : Math.max(best, p.perSec);
          }
        }
        boolean ok = load <= 90 ? adaptive.p99 <= Math.max(1.1 * best, best + 1) : adaptive.perSec >= 0.97 * best;
        shapeJudged++;
        shapeMet += ok ? 1 : 0;
        line.append(String.format("   %4d..%-4d %5s", adaptive.limitLow, adaptive.limitHigh, ok ? "yes" : "NO"));
        System.out.println(line);
        points.add(point.put("adaptiveLimitLow", adaptive.limitLow).put("adaptiveLimitHigh", adaptive.limitHigh)
            .put("met", ok));
      }
      met += shapeMet;
      judged += shapeJudged;
      rows.add(new Row(id(), shape.id + ": points where adaptive meets the rule", shapeMet + " of " + shapeJudged,
          "all", shape.name, Row.verdict(shapeMet == shapeJudged)));
      data.add(new JsonObject().put("shape", shape.id).put("name", shape.name).put("capacityPerSec", shape.capacity())
          .put("measuredCapacityPerSec", capacity).put("points", points));
    }
    System.out.printf("   adaptive meets the rule at %d of %d points%n", met, judged);
    return new Outcome(new JsonObject().put("seed", seed).put("shapes", data), rows);
  }

  /**
   * What the shape really carries: the nominal capacity assumes full batches, which many keys or a
   * processor-sharing store never reach within a run. The most the seeds' mode delivers at twice
   * the nominal load, by default or tuned (direct calls off, as many slots as connections), is the
   * 100% of the loads.
   */
  static double capacity(Shape shape) {
    if (shape.maxRate > 0) {
      // As the real-time harness does: the generator's cap is the 100%.
      return shape.capacity();
    }
    double best = 0;
    for (Entrant c : ENTRANTS) {
      if (c.name.equals("fixed slots 16") || c.name.equals("direct off")) {
        best = Math.max(best, run(shape, c.config.apply(shape), 2 * shape.capacity(), seed).perSec);
      }
    }
    return best;
  }

  private static int indexOf(List<Entrant> cs, String name) {
    for (int i = 0; i < cs.size(); i++) {
      if (cs.get(i).name.equals(name)) {
        return i;
      }
    }
    throw new IllegalArgumentException(name);
  }

  /** An input: its key and when it was submitted. */
  record In(int key, long t0) {}

  /** One point: 1 s of warm-up, 3 s measured, then up to 2 s for the store to drain. */
  static Point run(Shape shape, PerKeyConfig config, double ratePerSec, long seed) {
    VirtualLoop loop = new VirtualLoop();
    Store store = new Store(loop, shape, seed * 31 + 7);
    long warmUp = 1_000 * MS;
    long measureFrom = loop.nanoTime() + warmUp;
    long end = measureFrom + 3_000 * MS;
    long[] lat = new long[(int) (ratePerSec * 4) + 1024];
    int[] n = {0};
    long[] submittedInWindow = {0};
    long[] answered = {0};
    Function<In, Future<In>> submit;
    PerKeyFerry<Integer, In, List<In>, In> ferry = config == null ? null
        : new PerKeyFerry<>(loop, config, In::key, null, null, (k, ins) -> store.call(ins.size()).map(v -> ins),
            (in, r) -> in);
    if (ferry == null) {
      submit = in -> store.call(1).map(v -> in);
    } else {
      submit = ferry::submit;
    }
    SplittableRandom rnd = new SplittableRandom(seed);
    double[] cdf = zipfCdf(shape);
    Runnable[] next = new Runnable[1];
    next[0] = () -> {
      long now = loop.nanoTime();
      if (now >= measureFrom && now < end) {
        submittedInWindow[0]++;
      }
      int key = cdf == null ? rnd.nextInt(shape.keys) : draw(cdf, rnd.nextDouble() * cdf[cdf.length - 1]);
      submit.apply(new In(key, now)).onComplete(ar -> {
        long t = loop.nanoTime();
        if (now >= measureFrom && now < end) {
          if (n[0] == lat.length) {
            return;
          }
          lat[n[0]++] = t - now;
        }
        if (t >= measureFrom && t < end) {
          answered[0]++;
        }
      });
      long gap = (long) (-Math.log(1 - rnd.nextDouble()) / ratePerSec * 1e9);
      if (now + gap < end) {
        loop.schedule(Math.max(1, gap), next[0]);
      }
    };
    loop.schedule(1, next[0]);
    if (shape.poolPhases.length > 0) {
      for (int i = 1; i < shape.poolPhases.length; i++) {
        int size = shape.poolPhases[i];
        loop.schedule(warmUp + i * shape.phaseMs * MS, () -> store.resize(size));
      }
    }
    int[] limit = {Integer.MAX_VALUE, 0};
    if (ferry != null) {
      Runnable[] sample = new Runnable[1];
      sample[0] = () -> {
        if (TRACE) {
          System.out.printf("        t %6.3f s limit %d in flight %d queued %d%n", loop.nanoTime() / 1e9,
              ferry.metrics().callLimit(), ferry.metrics().inFlightBatches(), ferry.metrics().queuedInputs());
        }
        if (loop.nanoTime() >= measureFrom) {
          int l = ferry.metrics().callLimit();
          limit[0] = Math.min(limit[0], l);
          limit[1] = Math.max(limit[1], l);
        }
        if (loop.nanoTime() < end) {
          loop.schedule((TRACE ? 50 : 10) * MS, sample[0]);
        }
      };
      loop.schedule(10 * MS, sample[0]);
    }
    loop.runPending();
    // Run to the end of the window; past it, what is still waiting is not counted (overload).
    while (loop.nextTimerAt() >= 0 && loop.nanoTime() < end + 2_000 * MS) {
      loop.advance(Math.max(1, loop.nextTimerAt() - loop.nanoTime()));
    }
    // Inputs of the window still unanswered 2 s after it count as the slowest (overload).
    long[] sorted = Arrays.copyOf(lat, (int) Math.max(n[0], Math.min(lat.length, submittedInWindow[0])));
    Arrays.fill(sorted, n[0], sorted.length, 9_999 * MS);
    Arrays.sort(sorted);
    double p50 = sorted.length == 0 ? -1 : sorted[sorted.length / 2] / 1e6;
    double p99 = sorted.length == 0 ? -1 : sorted[Math.min(sorted.length - 1, (int) (sorted.length * 0.99))] / 1e6;
    return new Point(p50, p99, answered[0] / 3.0, limit[0] == Integer.MAX_VALUE ? 0 : limit[0], limit[1]);
  }

  private static double[] zipfCdf(Shape shape) {
    if (!shape.zipf) {
      return null;
    }
    double[] cdf = new double[shape.keys];
    double sum = 0;
    for (int k = 0; k < shape.keys; k++) {
      sum += 1.0 / (k + 1);
      cdf[k] = sum;
    }
    return cdf;
  }

  private static int draw(double[] cdf, double u) {
    int k = Arrays.binarySearch(cdf, u);
    return Math.min(cdf.length - 1, k >= 0 ? k : -k - 1);
  }

  /**
   * The store in virtual time: at most {@code pool} calls in service (the rest wait, FIFO). With
   * {@code cores} 0 each call takes its cost; otherwise calls in service share the cores, each
   * progressing at {@code min(1, cores / n)} of its speed.
   */
  static final class Store {
    private final VirtualLoop loop;
    private final Shape shape;
    private int pool;
    private final ArrayDeque<Call> waiting = new ArrayDeque<>();
    private final List<Call> inService = new ArrayList<>();
    private long lastUpdate;
    private long timer = -1;
    /** The latency noise of {@link #TICK_MS} and {@link #JITTER_MS}: seeded per point. */
    private final SplittableRandom noise;
    /** The current spell of {@link #DRIFT_MS}: its index and its mean jitter in nanos. */
    private long spell = Long.MIN_VALUE;
    private double spellJitter;

    private static final class Call {
      final Promise<Void> promise = Promise.promise();
      double remaining;
      final int size;

      Call(double work, int size) {
        this.remaining = work;
        this.size = size;
      }
    }

    Store(VirtualLoop loop, Shape shape, long seed) {
      this.loop = loop;
      this.noise = new SplittableRandom(seed);
      this.shape = shape;
      this.pool = shape.poolPhases.length > 0 ? shape.poolPhases[0] : shape.pool;
    }

    Future<Void> call(int size) {
      if (HITS > 0 && noise.nextDouble() < HITS) {
        Promise<Void> hit = Promise.promise();
        loop.schedule(noisy(Math.max(1, (long) (HIT_MS * MS))), hit::complete);
        return hit.future();
      }
      double factor = SIGMA > 0 ? Math.exp(SIGMA * gaussian() - SIGMA * SIGMA / 2) : 1;
      Call c = new Call((shape.baseMs + shape.perInputMs * size) * MS * factor, size);
      waiting.add(c);
      startWaiting();
      return c.promise.future();
    }

    void resize(int size) {
      pool = size;
      startWaiting();
    }

    private void startWaiting() {
      if (waiting.isEmpty() || inService.size() >= pool) {
        return;
      }
      if (shape.cores == 0) {
        while (!waiting.isEmpty() && inService.size() < pool) {
          Call c = waiting.poll();
          inService.add(c);
          // The connection is held until the reply is back, noise included (as SimStore's timer does).
          loop.schedule(noisy((long) c.remaining), () -> {
            inService.remove(c);
            c.promise.complete();
            startWaiting();
          });
        }
        return;
      }
      progress();
      while (!waiting.isEmpty() && inService.size() < pool) {
        inService.add(waiting.poll());
      }
      reschedule();
    }

    /** Processor sharing: every call in service has progressed by the time since the last update at its share. */
    private void progress() {
      long now = loop.nanoTime();
      double rate = Math.min(1.0, shape.cores / (double) Math.max(1, inService.size()));
      for (Call c : inService) {
        c.remaining -= (now - lastUpdate) * rate;
      }
      lastUpdate = now;
    }

    private void reschedule() {
      if (timer >= 0) {
        loop.cancel(timer);
        timer = -1;
      }
      if (inService.isEmpty()) {
        return;
      }
      double rate = Math.min(1.0, shape.cores / (double) inService.size());
      double least = Double.MAX_VALUE;
      for (Call c : inService) {
        least = Math.min(least, c.remaining);
      }
      timer = loop.schedule(Math.max(1, (long) Math.ceil(least / rate)), () -> {
        timer = -1;
        progress();
        List<Call> done = new ArrayList<>();
        for (Call c : inService) {
          if (c.remaining <= 0.5) {
            done.add(c);
          }
        }
        inService.removeAll(done);
        while (!waiting.isEmpty() && inService.size() < pool) {
          inService.add(waiting.poll());
        }
        reschedule();
        // Processor sharing: the noise delays the replies, not the service.
        done.forEach(c -> {
          long delay = noisy(0);
          if (delay <= 0) {
            c.promise.complete();
          } else {
            loop.schedule(delay, () -> c.promise.complete());
          }
        });
      });
    }

    /** A standard normal draw (Box-Muller) from the store's seeded noise. */
    private double gaussian() {
      return Math.sqrt(-2 * Math.log(1 - noise.nextDouble())) * Math.cos(2 * Math.PI * noise.nextDouble());
    }

    /** {@code nanos} from now plus the noise, ending on a tick: the delay until the reply is back. */
    private long noisy(long nanos) {
      if (TICK_MS <= 0 && JITTER_MS <= 0) {
        return nanos;
      }
      long now = loop.nanoTime();
      double mean = JITTER_MS * MS;
      if (DRIFT_MS > 0) {
        long at = Math.floorDiv(now, (long) (DRIFT_MS * MS));
        if (at != spell) {
          spell = at;
          spellJitter = -Math.log(1 - noise.nextDouble()) * JITTER_MS * MS;
        }
        mean = spellJitter;
      }
      long end = now + nanos + (mean > 0 ? (long) (-Math.log(1 - noise.nextDouble()) * mean) : 0);
      if (TICK_MS > 0) {
        long tick = (long) (TICK_MS * MS);
        end = Math.floorDiv(end + tick - 1, tick) * tick;
      }
      return Math.max(nanos == 0 ? 0 : 1, end - now);
    }
  }
}
