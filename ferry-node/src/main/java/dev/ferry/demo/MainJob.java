package dev.ferry.demo;

import dev.ferry.verticle.FerryClient;
import dev.ferry.examples.Accounts;
import dev.ferry.store.JdbcStore;
import dev.ferry.store.StoreService;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Ferry's main job: one process with a FerryVerticle in front of a real SQL database, under a
 * realistic load, that shows what per-key batching saves and that nothing is lost on the way.
 *
 * <ul>
 *   <li>an embedded H2 database (in memory, in this process) holds bank accounts; {@link
 *       StoreService} runs the {@link Accounts} FoldWrite over it (one read, one conditional write
 *       and an event-log append per batch) and answers Ferry's downstream protocol on the event bus;
 *   <li>{@code dev.ferry.verticle.FerryVerticle} is deployed with the default config and that address as its
 *       downstream;
 *   <li>{@link Load} submits operations to {@code ferry.submit} with {@link FerryClient}: a bulk
 *       import of deposits on a few hot accounts at a high rate, and quiet traffic now and then on
 *       many other accounts;
 *   <li>a progress line is printed while it runs, a table at the end, and the database is checked
 *       against every acknowledged operation.
 * </ul>
 *
 * <p>Exit code 0 when every submission got a reply and the database matches; 1 otherwise; 2 for
 * bad options. See {@code docs/guide/main-job.md}.
 */
public final class MainJob {
  /** Where the store answers Ferry's downstream protocol. */
  static final String STORE_ADDRESS = "demo.accounts.store";
  /** Store consumers, each on its own event loop; the JDBC pool has a connection for each and more. */
  static final int STORE_CONSUMERS = 4;
  static final String SUBMIT_ADDRESS = "ferry.submit";
  static final String METRICS_ADDRESS = "ferry.metrics";

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
    int code;
    try {
      code = run(options, System.out).ok() ? 0 : 1;
    } catch (Exception e) {
      System.err.println();
      System.err.println("the main job failed: " + e);
      e.printStackTrace();
      code = 1;
    }
    System.exit(code);
  }

  /** The ferry's config: the documented defaults ({@code conf/ferry.json}) with the store as downstream. */
  static JsonObject ferryConfig() {
    return new JsonObject()
        .put("address", SUBMIT_ADDRESS)
        .put("metricsAddress", METRICS_ADDRESS)
        .put("maxBatchSize", 100)
        .put("maxInFlightBatches", 16)
        .put("maxQueueing", 10_000)
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", STORE_ADDRESS));
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
    out.printf(Locale.ROOT, "Ferry main job: %,d hot accounts get a bulk import of %,d deposits/s while %,d quiet accounts get %,d operations/s, for %s.%n",
        options.hot(), options.rate(), options.quiet(), options.quietRate(), JobOptions.format(options.duration()));
    out.println("Path: FerryClient -> ferry.submit (FerryVerticle) -> " + STORE_ADDRESS
        + " (StoreService, Accounts FoldWrite) -> embedded H2 database, all in this process.");

    // The database: in memory, kept while the JVM lives, a name of its own for every run. The store
    // gets a pool of its own (see JdbcStore#pool: Vert.x 5.0.7's JDBC autocommit bug).
    String url = "jdbc:h2:mem:ferry-demo-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
    JdbcStore store = JdbcStore.withEvents(JdbcStore.h2Pool(vertx, url, 8), "accounts", "account_events");
    store.createTables().await(30, TimeUnit.SECONDS);

    DownstreamCounter counter = new DownstreamCounter(STORE_ADDRESS, Load.BUSY_PREFIX);
    vertx.eventBus().addOutboundInterceptor(counter);
    // Several consumers, each on an event loop of its own (registered from this non-Vert.x thread),
    // so the store's calls for different keys run side by side: Ferry already guarantees that one
    // key never has two calls in flight, whichever consumer takes them.
    List<StoreService> services = new ArrayList<>();
    for (int i = 0; i < STORE_CONSUMERS; i++) {
      services.add(StoreService.start(vertx, STORE_ADDRESS, Accounts.foldWrite(store), Object.class)
          .await(30, TimeUnit.SECONDS));
    }
    String deployment = vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(ferryConfig()))
        .await(30, TimeUnit.SECONDS);

    // The load lives on a context of its own (an event loop apart from the ferry's); captured once.
    Context loadContext = vertx.getOrCreateContext();
    Load load = new Load(vertx, options, FerryClient.create(vertx, SUBMIT_ADDRESS));
    Progress progress = new Progress(vertx, load, out, options.progress());
    Promise<Void> loaded = Promise.promise();
    loadContext.runOnContext(v -> {
      progress.start();
      load.start().onComplete(ar -> progress.stop().onComplete(p -> loaded.handle(ar)));
    });
    // Every submission is answered within the client's 30 s send timeout of being sent.
    long waitSeconds = options.duration().toSeconds() + 90;
    loaded.future().await(waitSeconds, TimeUnit.SECONDS);

    Promise<Long> calls = Promise.promise();
    loadContext.runOnContext(v -> vertx.eventBus().<JsonObject>request(METRICS_ADDRESS, new JsonObject())
        .map(Message::body)
        .map(m -> m.getLong("batches"))
        .onComplete(calls));
    long batches = calls.future().await(30, TimeUnit.SECONDS);

    Check check = checkDatabase(store, load).await(60, TimeUnit.SECONDS);

    vertx.undeploy(deployment).await(30, TimeUnit.SECONDS);
    for (StoreService service : services) {
      service.stop().await(30, TimeUnit.SECONDS);
    }
    vertx.eventBus().removeOutboundInterceptor(counter);
    store.tx(conn -> conn.query("DROP ALL OBJECTS").execute()).await(30, TimeUnit.SECONDS);
    store.pool().close().await(30, TimeUnit.SECONDS);

    long planned = (long) (options.rate() * (options.duration().toNanos() / 1e9))
        + (long) (options.quietRate() * (options.duration().toNanos() / 1e9));
    JobReport report = new JobReport(options,
        load.sentBusy, load.sentQuiet, load.acked, load.refused, load.rejected, load.failed, load.other, load.inFlight,
        batches,
        counter.busyCalls.get(), counter.busyInputs.get(), counter.quietCalls.get(), counter.quietInputs.get(),
        load.busyLatency.percentileMs(50), load.busyLatency.percentileMs(99),
        load.quietLatency.percentileMs(50), load.quietLatency.percentileMs(99),
        (load.lastReplyNanos - load.startNanos()) / 1e9,
        planned, check.checked, check.unverifiable, check.mismatches);
    report.print(out);
    out.flush();
    return report;
  }

  /** Accounts compared, accounts skipped, and what differed. */
  private record Check(int checked, int unverifiable, List<String> mismatches) {}

  /**
   * Reads every account row and the event count per account, and compares them with what the
   * callers were told: the balance must be the sum of the acknowledged operations, and the event
   * log must hold exactly one event per acknowledged operation. Accounts with a FAILED reply are
   * skipped (that batch may or may not have been written); an account nobody touched must be absent.
   */
  private static Future<Check> checkDatabase(JdbcStore store, Load load) {
    return store.tx(conn -> conn.query("SELECT \"key\", state FROM accounts").execute()
        .compose(states -> conn.query("SELECT \"key\", COUNT(*) FROM account_events GROUP BY \"key\"").execute()
            .map(events -> {
              Map<String, Long> balances = new HashMap<>();
              for (Row r : states) {
                balances.put(r.getString(0), new JsonObject(r.getString(1)).getLong("balance"));
              }
              Map<String, Long> counts = new HashMap<>();
              for (Row r : events) {
                counts.put(r.getString(0), r.getLong(1));
              }
              List<String> mismatches = new ArrayList<>();
              int checked = 0;
              int unverifiable = 0;
              for (int i = 0; i < load.hotBalance.length; i++) {
                if (load.hotAmbiguous[i]) {
                  unverifiable++;
                } else {
                  checked++;
                  compare(Load.hotKey(i), load.hotBalance[i], load.hotOps[i], balances, counts, mismatches);
                }
              }
              for (int i = 0; i < load.quietBalance.length; i++) {
                if (load.quietAmbiguous[i]) {
                  unverifiable++;
                } else {
                  checked++;
                  compare(Load.quietKey(i), load.quietBalance[i], load.quietOps[i], balances, counts, mismatches);
                }
              }
              for (String key : balances.keySet()) {
                if (!isOurs(key, load)) {
                  mismatches.add(key + ": in the database but never submitted");
                }
              }
              return new Check(checked, unverifiable, mismatches);
            })));
  }

  private static void compare(String key, long balance, long ops, Map<String, Long> balances,
      Map<String, Long> counts, List<String> mismatches) {
    long inDb = balances.getOrDefault(key, 0L);
    long eventsInDb = counts.getOrDefault(key, 0L);
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
    } catch (NumberFormatException e) {
      return false;
    }
    return false;
  }
}
