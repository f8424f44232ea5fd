package dev.ferry.demo;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.examples.Accounts;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The workload: an open-loop generator that sends account operations through a {@link Sender}
 * (to {@code ferry.submit}, or straight to the store for the run without Ferry), and records what
 * each caller was told, and a {@link Timeline} of it.
 *
 * <p>Every {@code tick} it sends whatever the schedule says is due by now (so a late timer catches
 * up instead of lowering the rate): bulk-import deposits round-robin over the hot accounts at
 * {@code rate} per second, and quiet operations on quiet accounts picked at random at {@code
 * quietRate} per second (mostly deposits, some withdrawals, which the store refuses when they would
 * overdraw). The import is a client with a window: at most {@code importWindow} of its deposits
 * await a reply, and past that it holds back (the schedule keeps running, so it catches up when
 * replies come in), as a real importer would. Quiet traffic is open loop: it never waits for the
 * import, so its latency shows what a quiet key sees while a bulk import runs.
 *
 * <p>All state lives on the one Vert.x context it is started on: replies to requests sent from a
 * context come back on it, so no field needs a lock.
 */
final class Load {
  static final String BUSY_PREFIX = "hot-";
  static final String QUIET_PREFIX = "quiet-";
  /** Accounts of the one-input calls made straight to the store beside the load (never through Ferry). */
  static final String PROBE_PREFIX = "probe-";
  private static final long TICK_MS = 1;
  /** One store probe every this many ms while the load runs: 50 per second, a few percent of the calls. */
  static final long PROBE_EVERY_MS = 20;

  private final Vertx vertx;
  private final JobOptions options;
  private final Duration duration;
  private final Sender sender;
  /** Sends a one-input call straight to the store, bypassing Ferry; null for no probes. */
  private final Sender probe;
  private final Timeline timeline;
  private final SplittableRandom random;
  private final Promise<Void> finished = Promise.promise();

  // schedule
  private long startNanos;
  private long endNanos;
  private long tickTimer = -1;
  private boolean generating;
  private int nextHot;

  // what happened
  long sentBusy;
  long sentQuiet;
  int inFlight;
  int busyInFlight;
  long acked;
  long refused; // INPUT_REJECTED: the store refused this one operation (an overdraft)
  long rejected; // REJECTED (429): the ferry's waiting room was full
  long failed; // FAILED (502): the batch may or may not have been written
  long other; // CLOSED, TIMEOUT, BAD_INPUT: never written
  long lastReplyNanos;
  final Latencies busyLatency = new Latencies();
  final Latencies quietLatency = new Latencies();
  /**
   * One-input deposits of 1 made straight to the store on fresh accounts ({@link #PROBE_PREFIX}),
   * open loop beside the load: the store's own round trip under this very load, which the quiet
   * keys' latency is compared with (what Ferry adds to it, rather than what the load adds).
   */
  final Latencies probeLatency = new Latencies();
  long probesSent;
  /** Probes acknowledged (their account must hold 1 and one event) and probes whose call failed (unknown). */
  final java.util.BitSet probeAcked = new java.util.BitSet();
  final java.util.BitSet probeAmbiguous = new java.util.BitSet();

  // per account: the balance the acknowledged operations add up to, how many were acknowledged,
  // and whether a FAILED reply makes its database row unverifiable
  final long[] hotBalance;
  final long[] hotOps;
  final boolean[] hotAmbiguous;
  final long[] quietBalance;
  final long[] quietOps;
  final boolean[] quietAmbiguous;

  /** Sends one operation and completes with its result, or fails with a {@link FerryException}. */
  @FunctionalInterface
  interface Sender {
    Future<Object> send(String key, JsonObject op);
  }

  /**
   * @param duration how long to offer load (the measured window, or the warm-up)
   * @param calls the store's calls so far, for the timeline's batch sizes
   */
  Load(Vertx vertx, JobOptions options, Duration duration, Sender sender, Sender probe, Timeline.Calls calls) {
    this.vertx = vertx;
    this.options = options;
    this.duration = duration;
    this.sender = sender;
    this.probe = probe;
    this.timeline = new Timeline(this, calls);
    this.random = new SplittableRandom(options.seed());
    hotBalance = new long[options.hot()];
    hotOps = new long[options.hot()];
    hotAmbiguous = new boolean[options.hot()];
    quietBalance = new long[options.quiet()];
    quietOps = new long[options.quiet()];
    quietAmbiguous = new boolean[options.quiet()];
  }

  static String hotKey(int i) {
    return BUSY_PREFIX + i;
  }

  static String quietKey(int i) {
    return QUIET_PREFIX + i;
  }

  static String probeKey(long i) {
    return PROBE_PREFIX + i;
  }

  /** Starts generating; call on the context the load lives on. Completes once every reply is in. */
  Future<Void> start() {
    startNanos = System.nanoTime();
    endNanos = startNanos + duration.toNanos();
    lastReplyNanos = startNanos;
    generating = true;
    timeline.start(vertx);
    tickTimer = vertx.setPeriodic(TICK_MS, id -> tick());
    tick();
    return finished.future();
  }

  long startNanos() {
    return startNanos;
  }

  Duration duration() {
    return duration;
  }

  Timeline timeline() {
    return timeline;
  }

  /** What the schedule asked for over the duration. */
  long planned() {
    double seconds = duration.toNanos() / 1e9;
    return (long) (options.rate() * seconds) + (long) (options.quietRate() * seconds);
  }

  long answered() {
    return acked + refused + rejected + failed + other;
  }

  private void tick() {
    assert Context.isOnEventLoopThread() : "the load runs on its own event loop only";
    if (!generating) {
      return;
    }
    long now = System.nanoTime();
    long elapsed = Math.min(now, endNanos) - startNanos;
    long dueBusy = due(options.rate(), elapsed) - sentBusy;
    long dueQuiet = due(options.quietRate(), elapsed) - sentQuiet;
    while (dueQuiet > 0) {
      sendQuiet();
      dueQuiet--;
    }
    while (dueBusy > 0 && busyInFlight < options.importWindow()) {
      sendBusy();
      dueBusy--;
    }
    if (probe != null) {
      long dueProbes = elapsed / (PROBE_EVERY_MS * 1_000_000) - probesSent;
      while (dueProbes-- > 0) {
        sendProbe();
      }
    }
    if (now >= endNanos) {
      generating = false;
      vertx.cancelTimer(tickTimer);
      checkFinished();
    }
  }

  /** Inputs due by {@code elapsedNanos} at {@code perSecond}. */
  private static long due(long perSecond, long elapsedNanos) {
    return (long) (perSecond * (elapsedNanos / 1e9));
  }

  private void sendBusy() {
    int k = nextHot;
    nextHot = (nextHot + 1) % options.hot();
    long amount = 1 + random.nextInt(100);
    sentBusy++;
    submit(true, k, Accounts.deposit(hotKey(k), amount), amount);
  }

  private void sendQuiet() {
    int k = random.nextInt(options.quiet());
    sentQuiet++;
    // Mostly deposits; one in six a withdrawal, refused when it would overdraw the account.
    if (random.nextInt(6) == 0) {
      long amount = 1 + random.nextInt(600);
      submit(false, k, Accounts.withdraw(quietKey(k), amount), -amount);
    } else {
      long amount = 1 + random.nextInt(500);
      submit(false, k, Accounts.deposit(quietKey(k), amount), amount);
    }
  }

  private void sendProbe() {
    long i = probesSent++;
    String key = probeKey(i);
    inFlight++;
    long t0 = System.nanoTime();
    probe.send(key, Accounts.deposit(key, 1)).onComplete(ar -> {
      inFlight--;
      if (ar.succeeded()) {
        probeLatency.add(System.nanoTime() - t0);
        probeAcked.set((int) i);
      } else {
        probeAmbiguous.set((int) i);
      }
      checkFinished();
    });
  }

  private void submit(boolean busy, int k, JsonObject op, long delta) {
    inFlight++;
    if (busy) {
      busyInFlight++;
    }
    long t0 = System.nanoTime();
    String key = busy ? hotKey(k) : quietKey(k);
    sender.send(key, op).onComplete(ar -> {
      long t1 = System.nanoTime();
      inFlight--;
      if (busy) {
        busyInFlight--;
      }
      lastReplyNanos = t1;
      Latencies latency = busy ? busyLatency : quietLatency;
      if (ar.succeeded()) {
        acked++;
        latency.add(t1 - t0);
        if (busy) {
          hotBalance[k] += delta;
          hotOps[k]++;
        } else {
          quietBalance[k] += delta;
          quietOps[k]++;
        }
      } else {
        FerryError kind = ar.cause() instanceof FerryException e ? e.kind() : FerryError.FAILED;
        switch (kind) {
          case INPUT_REJECTED -> {
            refused++;
            latency.add(t1 - t0); // it went to the database and back like an acknowledged one
          }
          case REJECTED -> rejected++;
          case FAILED -> {
            failed++;
            if (busy) {
              hotAmbiguous[k] = true;
            } else {
              quietAmbiguous[k] = true;
            }
          }
          default -> other++;
        }
      }
      checkFinished();
    });
  }

  private void checkFinished() {
    if (!generating && inFlight == 0 && !finished.future().isComplete()) {
      timeline.stop(vertx);
      finished.tryComplete();
    }
  }

  /** A growable list of latencies in nanoseconds, with percentiles. Single-threaded. */
  static final class Latencies {
    private long[] values = new long[1024];
    private int size;

    void add(long nanos) {
      if (size == values.length) {
        values = Arrays.copyOf(values, size * 2);
      }
      values[size++] = nanos;
    }

    int size() {
      return size;
    }

    /** The {@code p}-th percentile in milliseconds of the values added from {@code from} on; NaN when none. */
    double percentileMs(double p, int from) {
      if (from >= size) {
        return Double.NaN;
      }
      long[] sorted = Arrays.copyOfRange(values, from, size);
      Arrays.sort(sorted);
      int rank = (int) Math.ceil(p / 100.0 * sorted.length);
      return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)] / 1e6;
    }

    /** The {@code p}-th percentile (0 < p <= 100) in milliseconds, nearest rank; NaN when empty. */
    double percentileMs(double p) {
      return percentileMs(p, 0);
    }
  }
}
