package dev.ferry.demo;

import dev.ferry.FerryException;
import dev.ferry.examples.Accounts;
import dev.ferry.store.StoreService;
import dev.ferry.verticle.FerryClient;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Ferry's main job: one process with a FerryVerticle in front of a real SQL database, under a
 * realistic load, that shows what per-key batching buys against the same load without it, and
 * that nothing is lost on the way.
 *
 * <ul>
 *   <li>the database ({@link Database}: embedded PostgreSQL in a process of its own by default, or
 *       H2 in this JVM) holds bank accounts; {@link StoreService} runs the {@link Accounts}
 *       FoldWrite over it (one read, one conditional write with an event-log append per call) and
 *       answers Ferry's downstream protocol on the event bus;
 *   <li>a warm-up runs the load through Ferry first, once in each dispatch mode the job measures
 *       (fixed slots, then the default), and is reported apart: no measured run pays for a cold
 *       JVM or database; then the store's one-input round trip is measured alone, the yardstick
 *       for the quiet keys' latency;
 *   <li>the measured runs offer the same load ({@link Load}: a bulk import on a few hot accounts,
 *       quiet traffic on many others), through {@code dev.ferry.verticle.FerryVerticle} with the
 *       default config (adaptive dispatch, ADR 0016), through it with the seeds' fixed slots
 *       ({@code "dispatch": "fixed-slots"}), and straight to the store, one call per input;
 *   <li>after each run the database is checked against every acknowledged operation and emptied;
 *       a progress line is printed while a run goes, a side-by-side table at the end, and an HTML
 *       report with each run over time ({@link HtmlReport}).
 * </ul>
 *
 * <p>Exit code 0 when every submission got a reply and the database matched after every run; 1
 * otherwise; 2 for bad options. See {@code docs/guide/main-job.md}.
 */
public final class MainJob {
  /** Where the store answers Ferry's downstream protocol. */
  static final String STORE_ADDRESS = "demo.accounts.store";
  /** The store service's contexts, each on its own event loop; the pool has a connection for each and more. */
  static final int STORE_CONTEXTS = 4;
  static final int CONNECTIONS = 8;
  /**
   * A warm-up round in which the JIT compiled for less than this share of its time ends the
   * warm-up of its mode: what is left to compile no longer competes with the load for the cores.
   */
  static final double JIT_SETTLED = 0.05;
  /** Warm-up rounds per Ferry mode at most, whether or not the JIT has settled. */
  static final int MAX_WARMUP_ROUNDS = 4;
  static final String SUBMIT_ADDRESS = "ferry.submit";
  static final String METRICS_ADDRESS = "ferry.metrics";
  /** The run through Ferry with {@code "dispatch": "fixed-slots"} (its 16 slots), beside the default. */
  static final String FIXED_SLOTS_RUN = "fixed slots";
  /** One-input calls made one at a time to measure the store's round trip. */
  static final int ROUND_TRIP_PROBES = 200;

  private MainJob() {}

  public static void main(String[] args) {
    JobOptions options;
    try {
      options = JobOptions.parse(args);
    } catch (JobOptions.HelpRequested help) {
      System.out.println(JobOptions.USAGE);
      System.exit(0);
      return;
    } catch (JobOptions.BadOptions e) {
      System.err.println("error: " + e.getMessage());
      System.err.println();
      System.err.println(JobOptions.USAGE);
      System.exit(2);
      return;
    }
    System.exit(runSayingHow(() -> run(options, System.out).ok()));
  }

  /**
   * Runs the job and returns its exit code: 0 when {@code job} says it went well, 1 otherwise,
   * saying on stderr why it failed, or (from a shutdown hook) that it was stopped.
   */
  static int runSayingHow(java.util.concurrent.Callable<Boolean> job) {
    // SIGTERM or Ctrl-C mid-run: the embedded server's own hook stops it and deletes its folder,
    // and the run then fails on its lost connections. Without a word of the stop, what the user
    // read was that failure, a database error, as if the database had broken down.
    java.util.concurrent.atomic.AtomicBoolean finished = new java.util.concurrent.atomic.AtomicBoolean();
    putOut = null;
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      if (!finished.get()) {
        String out = putOut;
        System.err.println();
        System.err.println(out == null ? STOPPED : stoppedAfter(out));
        System.err.flush();
      }
    }, "ferry-main-job-stopped"));
    int code;
    try {
      code = job.call() ? 0 : 1;
    } catch (Exception | Error e) {
      // An Error too (an OutOfMemoryError, say): left uncaught, the JVM ended with the job not
      // finished, and the hook said it was stopped by SIGTERM or Ctrl-C (review AC).
      if (shuttingDown()) {
        // The stop's consequence, not a failure of its own: the hook said what happened.
        code = 1;
      } else {
        System.err.println();
        System.err.println("the main job failed: " + e);
        e.printStackTrace();
        code = 1;
      }
    }
    finished.set(true);
    return code;
  }

  static final String STOPPED = "the main job was stopped before it finished (SIGTERM or Ctrl-C): no table and no"
      + " report; the embedded database server, if any, is stopped and its data folder deleted";

  /**
   * What the job has put out, for the stop message: null until the table is printed. A stop while
   * the job shuts down after it (the database and Vert.x take seconds to close) said "no table and
   * no report" under a table the user had just read. Written by the job's thread, read by the hook.
   */
  private static volatile String putOut;

  static String stoppedAfter(String out) {
    return "the main job was stopped (SIGTERM or Ctrl-C) while it shut down, after " + out
        + ": those figures stand; the exit code is the signal's, not the table's verdict";
  }

  /** Whether the JVM is stopping: it takes no new shutdown hook from then on. */
  private static boolean shuttingDown() {
    Thread probe = new Thread(() -> {});
    try {
      Runtime.getRuntime().addShutdownHook(probe);
      Runtime.getRuntime().removeShutdownHook(probe);
      return false;
    } catch (IllegalStateException stopping) {
      return true;
    }
  }

  /**
   * The ferry's config: the documented defaults ({@code conf/ferry.json}: adaptive dispatch, {@code
   * maxInFlightBatches} left to follow the mode) with the store as downstream.
   */
  static JsonObject ferryConfig() {
    return new JsonObject()
        .put("address", SUBMIT_ADDRESS)
        .put("metricsAddress", METRICS_ADDRESS)
        .put("maxBatchSize", 100)
        .put("maxQueueing", 10_000)
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", STORE_ADDRESS));
  }

  /** The seeds' mode, {@code "dispatch": "fixed-slots"}, with its default of 16 slots: the default until ADR 0016. */
  static JsonObject fixedSlotsConfig() {
    return ferryConfig().put("dispatch", "fixed-slots");
  }

  /** Runs the job with its own Vert.x instance and database, prints to {@code out}, and reports. */
  public static JobReport run(JobOptions options, PrintStream out) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      return run(vertx, options, out);
    } finally {
      vertx.close().await(30, TimeUnit.SECONDS);
    }
  }

  private static JobReport run(Vertx vertx, JobOptions options, PrintStream out) throws Exception {
    out.printf(Locale.ROOT, "Ferry main job: %,d hot accounts get a bulk import of %,d deposits/s while %,d quiet accounts get %,d operations/s, for %s per run%s.%n",
        options.hot(), options.rate(), options.quiet(), options.quietRate(), JobOptions.format(options.duration()),
        options.warmup().isZero() ? "" : " after " + JobOptions.format(options.warmup()) + " of warm-up"
            + (options.compare() ? " in each Ferry mode" : ""));
    out.flush();
    try (Database database = Database.open(vertx, options.store(), CONNECTIONS, out)) {
      out.println("Path: FerryClient -> ferry.submit (FerryVerticle) -> " + STORE_ADDRESS
          + " (StoreService, Accounts FoldWrite) -> " + database.describe() + ".");
      out.flush();
      DownstreamCounter counter = new DownstreamCounter(STORE_ADDRESS, Load.BUSY_PREFIX);
      vertx.eventBus().addOutboundInterceptor(counter);
      // One service at the address: it writes one batch per key at a time, which only holds within
      // one service (ADR 0138). Ferry sends a key's next batch only after the previous call ended,
      // but a call timeout ends it for Ferry while the write may still run; with several services
      // the event bus would hand that next batch to another one, to race the first. The service
      // spreads its keys over event loops of their own (registered from this non-Vert.x thread),
      // so the folds and store calls of different keys run side by side.
      List<StoreService> services = List.of(
          StoreService.start(vertx, STORE_ADDRESS, Accounts.foldWrite(database.store()), Object.class,
              StoreService.DEFAULT_MAX_WAIT, STORE_CONTEXTS).await(30, TimeUnit.SECONDS));
      // The load lives on a context of its own (an event loop apart from the ferry's); captured once.
      Context loadContext = vertx.getOrCreateContext();
      Job job = new Job(vertx, options, out, database, counter, loadContext);

      // Each Ferry mode measured warms up first, the default last, right before it is measured: a
      // cold JVM would otherwise handicap whichever mode runs first (docs/guide/main-job.md).
      List<RunReport> warmups = new ArrayList<>();
      if (!options.warmup().isZero()) {
        if (options.compare()) {
          job.warmUp("warm-up, " + FIXED_SLOTS_RUN, fixedSlotsConfig(), warmups);
        }
        job.warmUp("warm-up, Ferry", ferryConfig(), warmups);
      }
      double[] roundTrip = job.storeRoundTrip();
      List<RunReport> runs = new ArrayList<>();
      runs.add(job.throughFerry("Ferry", options.duration(), ferryConfig()));
      if (options.compare()) {
        runs.add(job.throughFerry(FIXED_SLOTS_RUN, options.duration(), fixedSlotsConfig()));
        runs.add(job.unbatched("unbatched", options.duration()));
      }

      for (StoreService service : services) {
        service.stop().await(30, TimeUnit.SECONDS);
      }
      vertx.eventBus().removeOutboundInterceptor(counter);

      JobReport report = new JobReport(options, database.describe(), warmups, roundTrip[0], roundTrip[1], runs, null);
      return finish(report, out, options.report() == null ? null
          : () -> HtmlReport.write(options.report(), options, database.describe(), warmups, runs));
    }
  }

  /**
   * Prints the table, then writes the HTML report with {@code html} (null: none asked for). In this
   * order: a report that cannot be written at the end (a full disk; the path was checked up front)
   * fails the job after the table is out, rather than losing minutes of measurements with it.
   */
  static JobReport finish(JobReport report, PrintStream out, java.util.function.Supplier<Path> html) {
    report.print(out);
    out.flush();
    String table = "its table was printed (verdict: " + (report.ok() ? "exit 0" : "exit 1") + ")";
    putOut = table;
    if (html == null) {
      return report;
    }
    Path written = html.get();
    out.println("report: " + written.toAbsolutePath().normalize());
    out.flush();
    putOut = table + " and its report written";
    return new JobReport(report.options(), report.database(), report.warmups(), report.storeRoundTripP50Ms(),
        report.storeRoundTripP99Ms(), report.runs(), written);
  }

  /** The runs of one job, sharing its Vert.x, database, counter and load context. */
  private record Job(Vertx vertx, JobOptions options, PrintStream out, Database database,
      DownstreamCounter counter, Context loadContext) {

    /** The load through a FerryVerticle deployed for this run with {@code config}. */
    RunReport throughFerry(String label, Duration duration, JsonObject config) throws Exception {
      String deployment = vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(config))
          .await(30, TimeUnit.SECONDS);
      FerryClient client = FerryClient.create(vertx, SUBMIT_ADDRESS);
      RunReport report = run(label, duration, client::submit, true);
      vertx.undeploy(deployment).await(30, TimeUnit.SECONDS);
      return report;
    }

    /**
     * Warms one Ferry mode up: rounds of {@code --warmup} each, until a round in which the JIT
     * compiled for less than {@link #JIT_SETTLED} of its time, or {@link #MAX_WARMUP_ROUNDS}
     * rounds. A fixed warm-up did not cover the JIT: in the first measured run after 5 s, the C2
     * compiler still took a third of the JVM's CPU samples, so the run measured first paid for it
     * and the comparison favoured whichever mode came later (docs/guide/main-job.md).
     */
    void warmUp(String label, JsonObject config, List<RunReport> warmups) throws Exception {
      for (int round = 1; ; round++) {
        RunReport r = throughFerry(round == 1 ? label : label + " (" + round + ")", options.warmup(), config);
        warmups.add(r);
        if (!jitStillCompiling(r) || round == MAX_WARMUP_ROUNDS) {
          return;
        }
      }
    }

    /** The same load without Ferry: every input is its own call to the store. */
    RunReport unbatched(String label, Duration duration) throws Exception {
      return run(label, duration, (key, op) -> callStore(vertx, key, op), false);
    }

    private RunReport run(String label, Duration duration, Load.Sender sender, boolean ferry) throws Exception {
      long callsBefore = counter.calls();
      long busyCalls = counter.busyCalls();
      long busyCarried = counter.busyCarried();
      long quietCalls = counter.quietCalls();
      long quietCarried = counter.quietCarried();
      long jvmCpu = jvmCpuNanos();
      long jit = jitMillis();
      Duration serverCpu = database.serverCpu();

      Load load = new Load(vertx, options, duration, sender, (key, op) -> callStore(vertx, key, op), counter);
      Progress progress = new Progress(vertx, label, load, counter, out, options.progress());
      Promise<Void> loaded = Promise.promise();
      loadContext.runOnContext(v -> {
        progress.start();
        load.start().onComplete(ar -> progress.stop().onComplete(p -> loaded.handle(ar)));
      });
      // Every submission is answered within the client's 30 s send timeout of being sent.
      loaded.future().await(duration.toSeconds() + 90, TimeUnit.SECONDS);
      double jvmCpuSeconds = (jvmCpuNanos() - jvmCpu) / 1e9;
      double jitSeconds = (jitMillis() - jit) / 1e3;
      double serverCpuSeconds = database.serverCpu().minus(serverCpu).toNanos() / 1e9;

      long calls;
      if (ferry) {
        Promise<Long> batches = Promise.promise();
        loadContext.runOnContext(v -> vertx.eventBus().<JsonObject>request(METRICS_ADDRESS, new JsonObject())
            .map(Message::body)
            .map(m -> m.getLong("batches"))
            .onComplete(batches));
        calls = batches.future().await(30, TimeUnit.SECONDS);
      } else {
        calls = counter.calls() - callsBefore;
      }
      Check check = check(database.contents().await(60, TimeUnit.SECONDS), load);
      database.clear().await(60, TimeUnit.SECONDS);

      return new RunReport(label,
          load.sentBusy, load.sentQuiet, load.acked, load.refused, load.rejected, load.failed, load.other, load.inFlight,
          calls,
          counter.busyCalls() - busyCalls, counter.busyCarried() - busyCarried,
          counter.quietCalls() - quietCalls, counter.quietCarried() - quietCarried,
          load.busyLatency.percentileMs(50), load.busyLatency.percentileMs(99),
          load.quietLatency.percentileMs(50), load.quietLatency.percentileMs(99),
          load.probeLatency.percentileMs(50), load.probeLatency.percentileMs(99), load.probesSent,
          (load.lastReplyNanos - load.startNanos()) / 1e9,
          load.planned(), check.checked, check.unverifiable, check.mismatches,
          jvmCpuSeconds, serverCpuSeconds, jitSeconds, load.timeline().toJson());
    }

    /**
     * The store's round trip for one input with nothing else running: {@link #ROUND_TRIP_PROBES}
     * deposits on fresh accounts, one call at a time, from the load's context; p50 and p99 in ms.
     */
    double[] storeRoundTrip() throws Exception {
      Promise<Load.Latencies> done = Promise.promise();
      Load.Latencies latencies = new Load.Latencies();
      loadContext.runOnContext(v -> probe(0, latencies, done));
      done.future().await(60, TimeUnit.SECONDS);
      database.clear().await(60, TimeUnit.SECONDS);
      return new double[] {latencies.percentileMs(50), latencies.percentileMs(99)};
    }

    private void probe(int i, Load.Latencies latencies, Promise<Load.Latencies> done) {
      if (i == ROUND_TRIP_PROBES) {
        done.complete(latencies);
        return;
      }
      String key = "probe-" + i;
      long t0 = System.nanoTime();
      callStore(vertx, key, Accounts.deposit(key, 1)).onComplete(ar -> {
        if (ar.failed()) {
          done.fail(ar.cause());
          return;
        }
        latencies.add(System.nanoTime() - t0);
        probe(i + 1, latencies, done);
      });
    }
  }

  /**
   * One operation as its own call to the store, in Ferry's downstream protocol (a batch of one),
   * with the replies mapped as the ferry would: an {@code error} outcome is INPUT_REJECTED, a
   * failed call FAILED.
   */
  static Future<Object> callStore(Vertx vertx, String key, JsonObject op) {
    JsonObject request = new JsonObject().put("key", key)
        .put("inputs", new JsonArray().add(new JsonObject().put("id", "1").put("input", op)));
    return vertx.eventBus().<JsonObject>request(STORE_ADDRESS, request).transform(ar -> {
      if (ar.failed()) {
        return Future.failedFuture(FerryClient.toFerryException(ar.cause()));
      }
      JsonObject outcome = ar.result().body().getJsonArray("outcomes").getJsonObject(0);
      return outcome.containsKey("error")
          ? Future.failedFuture(FerryException.inputRejected(String.valueOf(outcome.getValue("error"))))
          : Future.succeededFuture(outcome.getValue("ok"));
    });
  }

  /** True when the JIT compiled for at least {@link #JIT_SETTLED} of the run's time. */
  static boolean jitStillCompiling(RunReport run) {
    return run.jitSeconds() >= JIT_SETTLED * run.seconds();
  }

  /** Time the JIT compilers have spent so far, in ms (0 where the JVM does not say). */
  private static long jitMillis() {
    var jit = ManagementFactory.getCompilationMXBean();
    return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
  }

  private static long jvmCpuNanos() {
    return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
        ? os.getProcessCpuTime() : 0;
  }

  /** Accounts compared, accounts skipped, and what differed. */
  private record Check(int checked, int unverifiable, List<String> mismatches) {}

  /**
   * Compares the database with what the callers were told: each balance must be the sum of the
   * account's acknowledged operations, and the event log must hold exactly one event per
   * acknowledged operation. Accounts with a FAILED reply are skipped (that call may or may not have
   * been written); an account nobody touched must be absent.
   */
  private static Check check(Database.Contents contents, Load load) {
    List<String> mismatches = new ArrayList<>();
    int checked = 0;
    int unverifiable = 0;
    for (int i = 0; i < load.hotBalance.length; i++) {
      if (load.hotAmbiguous[i]) {
        unverifiable++;
      } else {
        checked++;
        compare(Load.hotKey(i), load.hotBalance[i], load.hotOps[i], contents, mismatches);
      }
    }
    for (int i = 0; i < load.quietBalance.length; i++) {
      if (load.quietAmbiguous[i]) {
        unverifiable++;
      } else {
        checked++;
        compare(Load.quietKey(i), load.quietBalance[i], load.quietOps[i], contents, mismatches);
      }
    }
    for (int i = 0; i < load.probesSent; i++) {
      if (load.probeAmbiguous.get(i)) {
        unverifiable++;
      } else {
        checked++;
        boolean acked = load.probeAcked.get(i);
        compare(Load.probeKey(i), acked ? 1 : 0, acked ? 1 : 0, contents, mismatches);
      }
    }
    for (String key : contents.balances().keySet()) {
      if (!isOurs(key, load)) {
        mismatches.add(key + ": in the database but never submitted");
      }
    }
    return new Check(checked, unverifiable, mismatches);
  }

  private static void compare(String key, long balance, long ops, Database.Contents contents, List<String> mismatches) {
    Map<String, Long> balances = contents.balances();
    long inDb = balances.getOrDefault(key, 0L);
    long eventsInDb = contents.events().getOrDefault(key, 0L);
    if (inDb != balance || eventsInDb != ops) {
      mismatches.add(key + ": balance " + inDb + " and " + eventsInDb + " events in the database, but "
          + ops + " acknowledged operations add up to " + balance);
    }
  }

  private static boolean isOurs(String key, Load load) {
    try {
      if (key.startsWith(Load.BUSY_PREFIX)) {
        int i = Integer.parseInt(key.substring(Load.BUSY_PREFIX.length()));
        return i >= 0 && i < load.hotBalance.length;
      }
      if (key.startsWith(Load.QUIET_PREFIX)) {
        int i = Integer.parseInt(key.substring(Load.QUIET_PREFIX.length()));
        return i >= 0 && i < load.quietBalance.length;
      }
      if (key.startsWith(Load.PROBE_PREFIX)) {
        long i = Long.parseLong(key.substring(Load.PROBE_PREFIX.length()));
        return i >= 0 && i < load.probesSent;
      }
    } catch (NumberFormatException e) {
      return false;
    }
    return false;
  }
}
