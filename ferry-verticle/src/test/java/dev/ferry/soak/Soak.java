package dev.ferry.soak;

import dev.ferry.Ferry;
import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.Driver;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A soak you can leave running: rounds of random load against the deployable verticle and against
 * library ferries (per key, single queue, keyed) owned by a verticle, over a downstream that
 * succeeds, fails, hangs, answers late, answers garbage, rejects single inputs and throws {@link
 * Error}s; the owners are undeployed and redeployed under load, and each round ends by closing
 * Vert.x under load. After every round it checks what users rely on:
 *
 * <ul>
 *   <li>every accepted input got exactly one answer (a reply or a failure code for the event bus,
 *       a completed Future for the library: never a send timeout, never nothing);
 *   <li>no bound was exceeded ({@code maxQueueing}, {@code maxQueuedWeight} with expired inputs
 *       still held, {@code maxInFlightBatches}), sampled on each ferry's own context;
 *   <li>no key ever had two calls in flight (checked by the downstream, per ferry; for the
 *       verticle across its undeploys and redeploys, see {@link VerticleCalls});
 *   <li>after a full GC, the heap is within 16 MB of its baseline and no lane is held.
 * </ul>
 *
 * A share of the rounds sends the verticle's batches to an HTTP downstream (a Vert.x HTTP server
 * in the same process, port 0) with HTTP's own faults besides the common ones: a server that
 * trickles bytes, and answers longer than {@code maxResponseBytes}.
 *
 * Everything random comes from one seed, printed with every failure; threads make the
 * interleavings vary, so a seed reproduces the schedule of faults and configs, not every race.
 * Runs on a time budget: as many rounds as fit. Not thread-safe; one run per instance.
 */
final class Soak {
  static final long HEAP_SLACK = 16L << 20;
  /** The longest caller deadline the event-bus load sets. */
  static final int MAX_DEADLINE_MS = 3_000;
  /**
   * How long past its bound (its deadline, then one call timeout and a drain) an event-bus request
   * waits for its answer before the soak calls it unanswered: a hang guard. It was 5 s, which a
   * loaded machine's stalls (a starved event loop, GC, the busy library load beside it) could use
   * up with every bound held; the slowest answer's lateness is reported in the notes instead
   * (review AK).
   */
  static final long ANSWER_GUARD_MS = 60_000;

  private final long seed;
  private final Duration budget;
  private final Random rnd;
  private final List<String> findings = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private long baselineHeap = -1;
  private int rounds;
  private long inputs;
  /** The latest any event-bus answer came past its own bound, in ms (negative: all within it). */
  private long latestPastBoundMs = Long.MIN_VALUE;
  private int httpRounds;

  Soak(long seed, Duration budget) {
    this.seed = seed;
    this.budget = budget;
    this.rnd = new Random(seed);
  }

  /** Runs rounds until the budget is spent; returns the report (findings empty when all held). */
  Report run() throws Exception {
    long end = System.nanoTime() + budget.toNanos();
    do {
      try {
        round(rounds);
      } catch (Exception | AssertionError e) {
        // A hang guard's timeout carries no seed of its own: without this line a failed run could not be replayed.
        throw new AssertionError("soak seed " + seed + ", round " + rounds + ": " + e, e);
      }
      rounds++;
    } while (System.nanoTime() < end && findings.isEmpty());
    if (latestPastBoundMs != Long.MIN_VALUE) {
      notes.add("slowest event-bus answer: " + latestPastBoundMs + " ms past its deadline + callTimeoutMs + drainTimeoutMs"
          + " (unanswered only after " + ANSWER_GUARD_MS + " ms past it)");
    }
    return new Report(seed, rounds, httpRounds, inputs, List.copyOf(findings), List.copyOf(notes));
  }

  record Report(long seed, int rounds, int httpRounds, long inputs, List<String> findings, List<String> notes) {
    @Override
    public String toString() {
      return "soak seed " + seed + ": " + rounds + " rounds (" + httpRounds + " on the HTTP downstream), "
          + inputs + " inputs, "
          + (findings.isEmpty() ? "nothing found" : findings.size() + " finding(s):\n  " + String.join("\n  ", findings))
          + (notes.isEmpty() ? "" : "\n notes:\n  " + String.join("\n  ", notes));
    }
  }

  private void find(int round, String what) {
    findings.add("round " + round + " (seed " + seed + "): " + what);
  }

  // ------------------------------------------------------------------ one round

  private void round(int round) throws Exception {
    long roundSeed = rnd.nextLong();
    Random r = new Random(roundSeed);
    Vertx vertx = Vertx.vertx();
    // A share of the rounds on the HTTP downstream.
    boolean http = r.nextInt(3) == 0;
    JsonObject verticleConfig = verticleConfig(r, "soak.down");
    // When the load submitted each input id: the downstream's sound clock (VerticleCalls).
    Map<String, Long> submittedAt = new ConcurrentHashMap<>();
    VerticleCalls verticleCalls = new VerticleCalls(submittedAt, http ? httpDownstream(r, verticleConfig)
        : verticleConfig.getLong("callTimeoutMs"));
    Downstream down = new Downstream(r.nextLong(), verticleCalls);
    await(vertx.deployVerticle(down, new DeploymentOptions()));
    if (http) {
      httpRounds++;
      HttpServerDownstream server = new HttpServerDownstream(r.nextLong(), verticleCalls,
          verticleConfig.getJsonObject("downstream").getLong("maxResponseBytes"));
      await(vertx.deployVerticle(server));
      verticleConfig.getJsonObject("downstream").put("url", "http://127.0.0.1:" + server.port + "/batch");
    }
    String verticleId = await(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
        new DeploymentOptions().setConfig(verticleConfig)));
    Owner owner = new Owner(r.nextLong(), down);
    String ownerId = await(vertx.deployVerticle(owner));

    EventBusLoad ebLoad = new EventBusLoad(vertx, r.nextLong(), verticleConfig, submittedAt);
    LibraryLoad libLoad = new LibraryLoad(r.nextLong());
    long roundMillis = 1500 + r.nextInt(2500);
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(roundMillis);
    ebLoad.start();
    java.util.concurrent.atomic.AtomicReference<Owner> current = new java.util.concurrent.atomic.AtomicReference<>(owner);
    libLoad.start(() -> current.get().ferries);

    // Undeploy and redeploy the owners under load, a few times.
    int cycles = 1 + r.nextInt(3);
    for (int c = 0; c < cycles && System.nanoTime() < until; c++) {
      Thread.sleep(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime()) / (cycles + 1 - c)));
      checkBounds(round, vertx, verticleConfig, owner);
      List<Ferry<?, ?>> before = owner.ferries;
      await(vertx.undeploy(ownerId), "the library owner's undeploy");
      checkClosed(round, "library ferries after their verticle undeployed", before);
      owner = new Owner(r.nextLong(), down);
      ownerId = await(vertx.deployVerticle(owner));
      current.set(owner);
      if (r.nextBoolean() && !Boolean.getBoolean("ferry.soak.noVerticleUndeploy")) {
        // The verticle too: requests racing its undeploy must still be answered (issue 13 item 8).
        // No reset of the downstream's view: a redeployed verticle's calls must respect the old
        // one's calls exactly as its own (ADR 0064).
        await(vertx.undeploy(verticleId), "the FerryVerticle's undeploy under load" + (http ? " (HTTP downstream)" : ""));
        verticleId = await(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
            new DeploymentOptions().setConfig(verticleConfig)));
        ebLoad.probe(verticleCalls.unanswered());
      }
    }
    checkBounds(round, vertx, verticleConfig, owner);

    // Event-bus callers first: their answers need a live Vert.x.
    ebLoad.stop();
    ebLoad.awaitAnswers(round);
    for (String v : await(down.awaitedTwice())) {
      find(round, "event-bus downstream: " + v);
    }
    // Then close Vert.x under the library load: every library caller must still be answered.
    List<Ferry<?, ?>> last = owner.ferries;
    Thread.sleep(r.nextInt(200));
    await(vertx.close());
    libLoad.stop();
    libLoad.awaitAnswers(round);
    checkClosed(round, "library ferries after Vert.x closed", last);
    inputs += ebLoad.sent.get() + libLoad.sent.get();
    latestPastBoundMs = Math.max(latestPastBoundMs, ebLoad.latestPastBoundMs.get());
    if (Boolean.getBoolean("ferry.soak.verbose")) {
      notes.add("round " + round + (http ? " (HTTP)" : "") + ": event bus " + ebLoad.sent.get() + " sent, "
          + ebLoad.notAccepted.get() + " not accepted, failure codes " + ebLoad.codes + "; library " + libLoad.sent.get()
          + " sent, failures " + libLoad.kinds + "; verticle " + verticleCalls.calls + " calls");
    }
    for (String v : down.violations) {
      find(round, v);
    }
    for (String v : verticleCalls.violations) {
      find(round, (http ? "HTTP downstream: " : "event-bus downstream: ") + v);
    }
    if (verticleCalls.afterGiveUp > 0) {
      notes.add("round " + round + (http ? " (HTTP)" : "") + ": " + verticleCalls.afterGiveUp + " verticle calls"
          + " reached the downstream while the key's previous call was still unanswered there, each after that call's"
          + " timeout had given it up (allowed, ADR 0005/0064; the closest "
          + TimeUnit.NANOSECONDS.toMillis(verticleCalls.closest) + " ms after)");
    }
    checkHeap(round);
  }

  /** A random verticle config within the documented ranges, on the event-bus downstream. */
  private static JsonObject verticleConfig(Random r, String down) {
    JsonObject c = new JsonObject()
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", down))
        .put("address", "soak.submit").put("metricsAddress", "soak.metrics")
        .put("maxBatchSize", 1 + r.nextInt(50))
        .put("maxInFlightBatches", 1 + r.nextInt(32))
        .put("maxQueueing", 1 + r.nextInt(2000))
        .put("callTimeoutMs", 50 + r.nextInt(500))
        .put("drainTimeoutMs", r.nextInt(300))
        .put("directIdleKeys", r.nextBoolean())
        .put("dispatch", r.nextBoolean() ? "adaptive" : "fixed-slots");
    if (r.nextBoolean()) {
      c.put("maxQueuedWeight", 1 + r.nextInt(200_000));
    }
    if (r.nextInt(4) == 0) {
      c.put("maxBatchWeight", 1 + r.nextInt(20_000));
    }
    if (r.nextInt(4) == 0) {
      c.put("maxBatchDelayMs", r.nextInt(20));
    }
    if (r.nextInt(3) == 0) {
      c.put("order", "header");
    }
    return c;
  }

  /**
   * Turns {@code config}'s downstream into an HTTP one (its url is set once the server listens),
   * with a random total deadline and answer bound; returns the deadline, the time after which the
   * verticle has given a call up (the event bus's send timeout is {@code callTimeoutMs}).
   */
  private static long httpDownstream(Random r, JsonObject config) {
    JsonObject d = new JsonObject().put("type", "http").put("maxResponseBytes", 2_000 + r.nextInt(200_000));
    long timeoutMs = config.getLong("callTimeoutMs");
    if (r.nextBoolean()) {
      timeoutMs = 50 + r.nextInt(600);
      d.put("timeoutMs", timeoutMs);
    }
    config.put("downstream", d);
    return timeoutMs;
  }

  // ------------------------------------------------------------------ checks

  private void checkBounds(int round, Vertx vertx, JsonObject config, Owner owner) throws Exception {
    try {
      JsonObject m = (JsonObject) await(vertx.eventBus().request("soak.metrics", null)).body();
      if (m.getLong("queuedInputs") > config.getLong("maxQueueing")) {
        find(round, "the verticle holds " + m.getLong("queuedInputs") + " waiting inputs, maxQueueing " + config.getLong("maxQueueing"));
      }
      // Fixed slots: direct calls come on top of batch calls, up to maxInFlightBatches again.
      long calls = config.getLong("maxInFlightBatches") * ("fixed-slots".equals(config.getString("dispatch")) ? 2 : 1);
      if (m.getLong("inFlightBatches") > calls) {
        find(round, "the verticle has " + m.getLong("inFlightBatches") + " calls in flight, maxInFlightBatches " + config.getLong("maxInFlightBatches"));
      }
      if (config.containsKey("maxQueuedWeight") && m.getLong("queuedWeight") > config.getLong("maxQueuedWeight")) {
        find(round, "the verticle holds weight " + m.getLong("queuedWeight") + ", maxQueuedWeight " + config.getLong("maxQueuedWeight"));
      }
    } catch (Exception e) {
      // Between an undeploy and a redeploy nobody answers: not a finding.
    }
    for (int i = 0; i < owner.ferries.size(); i++) {
      Ferry<?, ?> f = owner.ferries.get(i);
      dev.ferry.FerryBounds bounds = owner.bounds.get(i);
      Promise<String> broken = Promise.promise();
      owner.context().runOnContext(v -> broken.complete(overBounds(f, bounds)));
      String b = await(broken.future());
      if (b != null) {
        find(round, "library ferry " + i + ": " + b);
      }
    }
  }

  /** On the ferry's context: its waiting room (expired inputs still held included) and calls against its bounds. */
  private static String overBounds(Ferry<?, ?> f, dev.ferry.FerryBounds bounds) {
    dev.ferry.FerryMetrics m = f.metrics();
    long[] held = f instanceof Driver<?, ?, ?, ?> d ? d.expiredStillHeld() : new long[2];
    if (m.queuedInputs() + held[0] > bounds.maxQueueing()) {
      return (m.queuedInputs() + held[0]) + " inputs held, maxQueueing " + bounds.maxQueueing();
    }
    if (m.queuedWeight() + held[1] > bounds.maxQueuedWeight()) {
      return (m.queuedWeight() + held[1]) + " weight held, maxQueuedWeight " + bounds.maxQueuedWeight();
    }
    boolean fixedSlots = bounds instanceof PerKeyConfig p && p.dispatch() == dev.ferry.Dispatch.FIXED_SLOTS;
    if (m.inFlightBatches() > (fixedSlots ? 2L : 1L) * bounds.maxInFlightBatches()) {
      return m.inFlightBatches() + " calls in flight, maxInFlightBatches " + bounds.maxInFlightBatches();
    }
    return null;
  }

  private void checkClosed(int round, String when, List<Ferry<?, ?>> ferries) {
    for (int i = 0; i < ferries.size(); i++) {
      dev.ferry.FerryMetrics m = ferries.get(i).metrics();
      if (m.activeLanes() != 0 || m.queuedInputs() != 0) {
        find(round, when + ": ferry " + i + " still holds " + m.activeLanes() + " lanes, " + m.queuedInputs() + " inputs");
      }
    }
  }

  private void checkHeap(int round) {
    long used = usedAfterGc();
    if (baselineHeap < 0) {
      baselineHeap = used;
      notes.add("heap baseline after round " + round + ": " + (used >> 20) + " MB");
      return;
    }
    if (used > baselineHeap + HEAP_SLACK) {
      find(round, "heap after a full GC is " + (used >> 20) + " MB, baseline " + (baselineHeap >> 20) + " MB");
    }
  }

  private static long usedAfterGc() {
    Runtime rt = Runtime.getRuntime();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      System.gc();
      used = Math.min(used, rt.totalMemory() - rt.freeMemory());
    }
    return used;
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  /** {@link #await(Future)}, naming what did not complete within the minute. */
  static <T> T await(Future<T> f, String what) throws Exception {
    try {
      return await(f);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError(what + " did not complete within 60 s", e);
    }
  }

  // ------------------------------------------------------------------ the downstreams

  /**
   * Guarantee 2 for the verticle, decided soundly from the downstream's side under any load, across
   * the verticle's undeploys and redeploys. The verticle sends a key's next call only after the
   * previous one ended: its answer came back, or the downstream's own timeout ({@code giveUpMs},
   * whose timer starts when the call is sent) gave it up. So for each call the downstream keeps a
   * lower bound on when the verticle sent it: after every input in it was submitted (the load
   * stamps each id before sending it), and after the key's previous call ended, i.e. after the
   * earlier of its answer (sent by this downstream) and its give-up (its own bound plus {@code
   * giveUpMs}). A call arriving while the key's previous call is unanswered here, earlier than that
   * call's bound plus {@code giveUpMs}, is a violation: no timing assumption, only that a timer never
   * fires early. A call cut before its timeout (as ADR 0061's undeploy did) shows up here.
   *
   * <p>The event bus delivers one sender's calls to the consumer in sending order; over HTTP a
   * call that waited unread on its connection for a whole {@code giveUpMs} could in principle be
   * read after the key's next call, which this would report. Called from the event-bus consumer's
   * and the HTTP server's loops: synchronized (test code).
   */
  static final class VerticleCalls {
    final List<String> violations = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Map<String, Long> submittedAt;
    private final long giveUpNanos;
    private final long giveUpMs;
    private final Map<String, Call> last = new java.util.HashMap<>();
    /** Calls that arrived while the key's previous one was unanswered here, after it was given up. */
    long afterGiveUp;
    /** Of those, the shortest time between the give-up and the next call's arrival, in nanos. */
    long closest = Long.MAX_VALUE;
    long calls;

    /** One call as the downstream saw it. */
    static final class Call {
      /** A lower bound on when the verticle sent it (nanoTime), or MIN_VALUE when unknown. */
      final long sentAfter;
      /** When this downstream answered it, or MAX_VALUE while it has not. */
      long answeredAt = Long.MAX_VALUE;

      Call(long sentAfter) {
        this.sentAfter = sentAfter;
      }
    }

    VerticleCalls(Map<String, Long> submittedAt, long giveUpMs) {
      this.submittedAt = submittedAt;
      this.giveUpMs = giveUpMs;
      this.giveUpNanos = TimeUnit.MILLISECONDS.toNanos(giveUpMs);
    }

    /** A call for {@code key} arrived with {@code inputs}; returns its handle for {@link #answered}. */
    synchronized Call arrived(String key, JsonArray inputs) {
      long now = System.nanoTime();
      calls++;
      long bound = Long.MIN_VALUE;
      for (int i = 0; i < inputs.size(); i++) {
        Long at = submittedAt.get(String.valueOf(inputs.getJsonObject(i).getValue("id")));
        bound = at == null ? bound : Math.max(bound, at);
      }
      Call previous = last.get(key);
      if (previous != null) {
        long givenUp = previous.sentAfter == Long.MIN_VALUE ? Long.MIN_VALUE : previous.sentAfter + giveUpNanos;
        if (previous.answeredAt == Long.MAX_VALUE && givenUp != Long.MIN_VALUE && now - givenUp < 0) {
          violations.add("key " + key + " had two calls in flight: one arrived "
              + TimeUnit.NANOSECONDS.toMillis(givenUp - now) + " ms before the key's unanswered previous call"
              + " could have been given up at its timeout (" + giveUpMs + " ms)");
        }
        if (previous.answeredAt == Long.MAX_VALUE && givenUp != Long.MIN_VALUE && now - givenUp >= 0) {
          afterGiveUp++;
          closest = Math.min(closest, now - givenUp);
        }
        bound = Math.max(bound, Math.min(previous.answeredAt, givenUp));
      }
      Call call = new Call(bound);
      last.put(key, call);
      return call;
    }

    /** The keys whose last call this downstream has not answered (hung, or still to be answered). */
    synchronized List<String> unanswered() {
      List<String> keys = new ArrayList<>();
      last.forEach((key, call) -> {
        if (call.answeredAt == Long.MAX_VALUE) {
          keys.add(key);
        }
      });
      return keys;
    }

    /** The downstream answers {@code call} now (before sending the answer). */
    synchronized void answered(String key, Call call) {
      call.answeredAt = Math.min(call.answeredAt, System.nanoTime());
    }
  }

  /**
   * The event-bus consumer for the verticle (checked by {@link VerticleCalls}), and a batch call
   * for the library ferries, with the same faults. For the library the check is exact: a per-key
   * ferry keeps a key reserved until the call's Future completes (ADR 0005), so a call that hangs
   * holds its key for good, and one answered late until it is answered.
   */
  static final class Downstream extends VerticleBase {
    final List<String> violations = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final VerticleCalls verticleCalls;
    /** The verticle's last call per key, while this consumer has not answered it; on its loop only. */
    private final Map<String, Message<JsonObject>> unanswered = new java.util.HashMap<>();
    /** Replies sent to requests the verticle should have been over with, until refused; on its loop only. */
    private final Map<Future<Message<Object>>, String> stillAwaited = new java.util.HashMap<>();
    /** Library keys ("ferry:key") whose call has not completed. */
    private final Set<String> open = ConcurrentHashMap.newKeySet();
    private final ThreadLocal<Random> random;

    Downstream(long seed, VerticleCalls verticleCalls) {
      this.verticleCalls = verticleCalls;
      this.random = ThreadLocal.withInitial(() -> new Random(seed ^ Thread.currentThread().getId()));
    }

    @Override
    public Future<?> start() {
      return vertx.eventBus().<JsonObject>consumer("soak.down", this::onBatch).completion();
    }

    private void onBatch(Message<JsonObject> m) {
      JsonObject body = m.body();
      String key = body.getString("key");
      JsonArray inputs = body.getJsonArray("inputs");
      VerticleCalls.Call call = verticleCalls.arrived(key, inputs);
      askWhetherStillAwaited(key, unanswered.put(key, m));
      switch (Fault.pick(random.get())) {
        case HANG -> { } // never answered: open until the verticle's send timeout gives it up
        case ERROR -> {
          answered(key, call, m); // whatever Vert.x makes of a throwing consumer
          throw new StackOverflowError("soak: the downstream throws an Error");
        }
        case FAIL -> {
          answered(key, call, m);
          m.fail(500, "soak: the downstream failed");
        }
        case GARBAGE -> {
          answered(key, call, m);
          m.reply(random.get().nextBoolean() ? new JsonObject().put("outcomes", new JsonArray())
              : new JsonObject().put("nonsense", 1));
        }
        // Late: maybe after the send timeout; open until answered either way.
        case LATE -> vertx.setTimer(1 + random.get().nextInt(800), t -> {
          answered(key, call, m);
          m.reply(outcomes(random.get(), inputs));
        });
        default -> vertx.setTimer(1 + random.get().nextInt(5), t -> {
          answered(key, call, m);
          m.reply(outcomes(random.get(), inputs));
        });
      }
    }

    private void answered(String key, VerticleCalls.Call call, Message<JsonObject> m) {
      verticleCalls.answered(key, call);
      unanswered.remove(key, m);
    }

    /**
     * The exact check, for the event bus and within one verticle instance: a key's call arrived
     * while this downstream had not answered the key's previous one. The verticle may send it only
     * once that previous request is over for it, and Vert.x removes a request's reply handler the
     * moment it is over (answer or send timeout), before anything hears of it. So a reply to the
     * previous request now must find no handler (NO_HANDLERS, decided as it is sent); one that is
     * delivered means the verticle was still waiting for that call: two calls in flight for the
     * key, with no timing at all. An undeploy removes the instance's reply handlers too, so across
     * a redeploy {@link VerticleCalls} is the check.
     */
    private void askWhetherStillAwaited(String key, Message<JsonObject> previous) {
      if (previous == null) {
        return;
      }
      Future<Message<Object>> asked = previous.replyAndRequest(new JsonObject().put("soak", "still waiting?"),
          new DeliveryOptions().setSendTimeout(TimeUnit.MINUTES.toMillis(10)));
      stillAwaited.put(asked, key);
      asked.onComplete(ar -> {
        if (ar.failed() && ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS) {
          stillAwaited.remove(asked);
        }
      });
    }

    /**
     * Read on this consumer's context, once the round's callers were all answered: each reply of
     * {@link #askWhetherStillAwaited} not refused with NO_HANDLERS reached a live request.
     */
    Future<List<String>> awaitedTwice() {
      Promise<List<String>> found = Promise.promise();
      context.runOnContext(v -> found.complete(stillAwaited.values().stream()
          .map(k -> "key " + k + " had two calls in flight: a call arrived while the verticle still waited for the"
              + " answer to the key's previous call (its request's reply handler was still there)")
          .toList()));
      return found.future();
    }

    /** The library side: the same faults, and an Error thrown straight out of the call. */
    <I> Future<List<I>> call(Vertx vertx, String ferry, Object key, List<I> inputs) {
      Random r = random.get();
      Fault fault = Fault.pick(r);
      // Only a per-key ferry promises one call per key; make and keyed run calls side by side.
      String k = key == null ? null : ferry + ":" + key;
      if (k != null && !open.add(k)) {
        violations.add("key " + k + " had two calls in flight");
      }
      switch (fault) {
        case HANG -> {
          return Promise.<List<I>>promise().future(); // holds its key for good (ADR 0005)
        }
        case ERROR -> {
          if (k != null) { open.remove(k); }
          throw new StackOverflowError("soak: the batch call throws an Error");
        }
        case FAIL, GARBAGE -> {
          if (k != null) { open.remove(k); }
          return Future.failedFuture("soak: the batch call failed");
        }
        default -> {
          Promise<List<I>> p = Promise.promise();
          vertx.setTimer(1 + r.nextInt(fault == Fault.LATE ? 800 : 5), t -> {
            if (k != null) { open.remove(k); }
            p.tryComplete(inputs);
          });
          return p.future();
        }
      }
    }
  }

  /** One outcome per input: its id, or now and then a rejection of that input alone. */
  static JsonObject outcomes(Random r, JsonArray inputs) {
    JsonArray out = new JsonArray();
    for (int i = 0; i < inputs.size(); i++) {
      out.add(r.nextInt(20) == 0 ? new JsonObject().put("error", "soak: rejected")
          : new JsonObject().put("ok", inputs.getJsonObject(i).getValue("id")));
    }
    return new JsonObject().put("outcomes", out);
  }

  /**
   * The verticle's HTTP downstream: a Vert.x HTTP server on 127.0.0.1, port 0, with the common
   * faults plus HTTP's own: a server that trickles bytes and never ends (the client's total
   * deadline resets it), and an answer longer than the verticle's {@code maxResponseBytes}.
   */
  static final class HttpServerDownstream extends VerticleBase {
    private final VerticleCalls verticleCalls;
    private final long maxResponseBytes;
    private final Random random;
    volatile int port;

    HttpServerDownstream(long seed, VerticleCalls verticleCalls, long maxResponseBytes) {
      this.verticleCalls = verticleCalls;
      this.maxResponseBytes = maxResponseBytes;
      this.random = new Random(seed); // one server verticle: one event loop
    }

    @Override
    public Future<?> start() {
      return vertx.createHttpServer()
          .requestHandler(req -> req.body().onSuccess(body -> onBatch(req, body.toJsonObject())))
          .listen(0, "127.0.0.1")
          .onSuccess(server -> port = server.actualPort());
    }

    private void onBatch(io.vertx.core.http.HttpServerRequest req, JsonObject body) {
      String key = body.getString("key");
      JsonArray inputs = body.getJsonArray("inputs");
      VerticleCalls.Call call = verticleCalls.arrived(key, inputs);
      io.vertx.core.http.HttpServerResponse response = req.response();
      int p = random.nextInt(100);
      if (p < 64) {
        vertx.setTimer(1 + random.nextInt(5), t -> {
          verticleCalls.answered(key, call);
          response.end(outcomes(random, inputs).toBuffer());
        });
      } else if (p < 70) {
        verticleCalls.answered(key, call);
        response.setStatusCode(500).end("soak: the downstream failed");
      } else if (p < 74) {
        // Hangs: never answered; the client's deadline resets the request.
      } else if (p < 82) {
        vertx.setTimer(1 + random.nextInt(800), t -> {
          verticleCalls.answered(key, call);
          if (!response.closed()) {
            response.end(outcomes(random, inputs).toBuffer());
          }
        });
      } else if (p < 88) {
        verticleCalls.answered(key, call);
        response.end(random.nextBoolean() ? "{\"outcomes\": [" : new JsonObject().put("outcomes", new JsonArray()).encode());
      } else if (p < 91) {
        verticleCalls.answered(key, call); // the client may fail the batch on the first bytes
        response.end(new JsonObject().put("outcomes", new JsonArray()).put("pad", "x".repeat((int) maxResponseBytes)).toBuffer());
      } else if (p < 96) {
        // Trickles: headers and a byte every few ms, never the end; open until the deadline.
        response.setChunked(true).write("{\"outcomes\": [");
        long[] timer = {0};
        timer[0] = vertx.setPeriodic(5, t -> {
          if (response.closed() || response.ended()) {
            vertx.cancelTimer(timer[0]);
          } else {
            response.write(" ");
          }
        });
      } else {
        verticleCalls.answered(key, call); // whatever Vert.x makes of a throwing handler
        throw new StackOverflowError("soak: the HTTP downstream throws an Error");
      }
    }
  }

  enum Fault {
    OK, FAIL, HANG, LATE, GARBAGE, ERROR;

    private static final String ONLY = System.getProperty("ferry.soak.faults", "");

    static Fault pick(Random r) {
      if (!ONLY.isEmpty()) {
        Fault f = values()[r.nextInt(values().length)];
        return ONLY.contains(f.name()) ? f : OK;
      }
      int p = r.nextInt(100);
      return p < 70 ? OK : p < 76 ? FAIL : p < 80 ? HANG : p < 88 ? LATE : p < 94 ? GARBAGE : ERROR;
    }
  }

  // ------------------------------------------------------------------ library ferries, owned by a verticle

  /** A verticle whose start creates three library ferries on its own context, with random configs. */
  static final class Owner extends VerticleBase {
    private final long seed;
    private final Downstream down;
    volatile List<Ferry<?, ?>> ferries = List.of();
    final List<dev.ferry.FerryBounds> bounds = new ArrayList<>();

    Owner(long seed, Downstream down) {
      this.seed = seed;
      this.down = down;
    }

    Context context() {
      return context;
    }

    @Override
    public Future<?> start() {
      Random r = new Random(seed);
      PerKeyConfig perKey = PerKeyConfig.builder()
          .maxBatchSize(1 + r.nextInt(50)).maxInFlightBatches(1 + r.nextInt(32)).maxQueueing(1 + r.nextInt(2000))
          .maxQueuedWeight(r.nextBoolean() ? Long.MAX_VALUE : 1 + r.nextInt(100_000))
          .callTimeout(Duration.ofMillis(50 + r.nextInt(500))).drainTimeout(Duration.ofMillis(r.nextInt(300)))
          .directIdleKeys(r.nextBoolean())
          .dispatch(r.nextBoolean() ? dev.ferry.Dispatch.ADAPTIVE : dev.ferry.Dispatch.FIXED_SLOTS)
          .build();
      FerryConfig stream = FerryConfig.builder()
          .maxBatchSize(1 + r.nextInt(50)).maxInFlightBatches(1 + r.nextInt(8)).maxQueueing(1 + r.nextInt(2000))
          .maxBatchDelay(Duration.ofMillis(r.nextInt(3) == 0 ? r.nextInt(20) : 0))
          .callTimeout(Duration.ofMillis(50 + r.nextInt(500))).drainTimeout(Duration.ofMillis(r.nextInt(300)))
          .build();
      FerryConfig keyedConfig = stream.toBuilder().maxQueueing(1 + r.nextInt(2000)).build();
      Ferry<String, String> a = Ferry.perKey(context, perKey, (String s) -> s.substring(0, s.indexOf('/')),
          String::length, r.nextBoolean() ? null : java.util.Comparator.<String>naturalOrder(),
          (String key, List<String> in) -> down.call(vertx, "perKey@" + seed, key, in), (in, res) -> in);
      Ferry<String, String> b = Ferry.make(context, stream, String::length,
          in -> down.call(vertx, "make@" + seed, null, in), (in, res) -> in);
      Ferry<String, Optional<Integer>> c = Ferry.keyed(context, keyedConfig,
          keys -> down.call(vertx, "keyed@" + seed, null, keys).map(ks -> {
            java.util.HashMap<String, Integer> values = new java.util.HashMap<>();
            for (String k : ks) {
              values.put(k, k.length());
            }
            return (Map<String, Integer>) values;
          }));
      bounds.add(perKey);
      bounds.add(stream);
      bounds.add(keyedConfig);
      ferries = List.of(a, b, c);
      return Future.succeededFuture();
    }
  }

  // ------------------------------------------------------------------ loads

  /** Library submits from foreign threads; counts every Future that completes, and how often. */
  final class LibraryLoad {
    final AtomicLong sent = new AtomicLong();
    final AtomicLong answered = new AtomicLong();
    final AtomicLong thrown = new AtomicLong();
    final Map<FerryError, AtomicLong> kinds = new ConcurrentHashMap<>();
    private final long seed;
    private final ExecutorService threads = Executors.newFixedThreadPool(2);
    private volatile boolean running = true;
    private final CountDownLatch stopped = new CountDownLatch(2);

    LibraryLoad(long seed) {
      this.seed = seed;
    }

    void start(Supplier<List<Ferry<?, ?>>> ferries) {
      for (int t = 0; t < 2; t++) {
        Random r = new Random(seed + t);
        threads.execute(() -> {
          try {
            while (running) {
              submitOne(r, ferries.get());
              if (r.nextInt(8) == 0) { // leaves the verticle its share of a small machine
                Thread.sleep(1);
              }
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            stopped.countDown();
          }
        });
      }
    }

    @SuppressWarnings("unchecked")
    private void submitOne(Random r, List<Ferry<?, ?>> ferries) {
      if (ferries.isEmpty()) {
        return;
      }
      int which = r.nextInt(ferries.size());
      String key = "k" + r.nextInt(1 + r.nextInt(500));
      String input = key + "/" + "x".repeat(r.nextInt(200));
      Duration deadline = r.nextInt(3) == 0 ? Duration.ofMillis(1 + r.nextInt(300)) : null;
      Future<?> f;
      try {
        Ferry<String, Object> ferry = (Ferry<String, Object>) ferries.get(which);
        String in = which == 2 ? key : input;
        f = deadline == null ? ferry.submit(in) : ferry.submit(in, deadline);
      } catch (RuntimeException e) {
        thrown.incrementAndGet(); // a submit must never throw
        return;
      }
      sent.incrementAndGet();
      f.onComplete(ar -> {
        answered.incrementAndGet();
        if (ar.failed()) {
          FerryError kind = ar.cause() instanceof FerryException fe ? fe.kind() : null;
          kinds.computeIfAbsent(kind == null ? FerryError.FAILED : kind, k -> new AtomicLong()).incrementAndGet();
        }
      });
    }

    void stop() throws InterruptedException {
      running = false;
      stopped.await(30, TimeUnit.SECONDS);
      threads.shutdown();
    }

    /** Every Future completes once Vert.x is closed: each caller was answered (accepted or not). */
    void awaitAnswers(int round) throws InterruptedException {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (answered.get() < sent.get() && System.nanoTime() < until) {
        Thread.sleep(10);
      }
      if (answered.get() < sent.get()) {
        find(round, (sent.get() - answered.get()) + " library callers never answered (of " + sent.get() + ")");
      }
      if (thrown.get() > 0) {
        find(round, thrown.get() + " library submits threw instead of returning a Future");
      }
    }
  }

  /** Event-bus submits to the verticle, from one context, with random keys, payloads and deadlines. */
  final class EventBusLoad {
    final AtomicLong sent = new AtomicLong();
    final AtomicLong answered = new AtomicLong();
    final AtomicLong noReply = new AtomicLong();
    final AtomicLong notAccepted = new AtomicLong();
    final Map<Integer, AtomicLong> codes = new ConcurrentHashMap<>();
    /** The latest an answer came past its request's bound (its deadline + {@link #afterDeadlineMs}), in ms. */
    final AtomicLong latestPastBoundMs = new AtomicLong(Long.MIN_VALUE);
    private final Vertx vertx;
    private final Random r;
    /** What the ferry may take to answer an input after its deadline: one call timeout, and a drain. */
    private final long afterDeadlineMs;
    private final long sendTimeoutMs;
    private final Context context;
    private volatile boolean running;
    private final int maxOutstanding;

    private final Map<String, Long> submittedAt;

    EventBusLoad(Vertx vertx, long seed, JsonObject config, Map<String, Long> submittedAt) {
      this.vertx = vertx;
      this.submittedAt = submittedAt;
      this.r = new Random(seed);
      this.maxOutstanding = 50 + r.nextInt(2000);
      this.context = vertx.getOrCreateContext();
      // Anything the ferry may take to answer an input with a deadline: the deadline, then at most
      // one call timeout (and a drain). The send timeout is a hang guard well beyond that.
      long callMs = Math.max(config.getLong("callTimeoutMs"), config.getJsonObject("downstream").getLong("timeoutMs", 0L));
      this.afterDeadlineMs = callMs + config.getLong("drainTimeoutMs");
      this.sendTimeoutMs = MAX_DEADLINE_MS + afterDeadlineMs + ANSWER_GUARD_MS;
    }

    void start() {
      running = true;
      context.runOnContext(v -> tick());
    }

    private void tick() {
      if (!running) {
        return;
      }
      // A bounded number of requests out at once: the event bus's own queues are not Ferry's to
      // bound, and an unbounded backlog there would turn into send timeouts that say nothing.
      int burst = 1 + r.nextInt(40);
      for (int i = 0; i < burst && outstanding() < maxOutstanding; i++) {
        sendOne("k" + r.nextInt(1 + r.nextInt(1000)));
      }
      vertx.setTimer(1 + r.nextInt(3), t -> tick());
    }

    /**
     * One input now for each of {@code keys}: after a redeploy, the keys whose last call the
     * downstream still holds, so that a call the old verticle let go of too early meets the new
     * verticle's next call for its key (VerticleCalls) instead of being outlived by chance.
     */
    void probe(List<String> keys) {
      context.runOnContext(v -> keys.forEach(this::sendOne));
    }

    private void sendOne(String key) {
      // Every request has a deadline, so that its answer is due within a known time: without one, an
      // input may rightly wait behind a long queue of slow calls for longer than any send timeout.
      int deadlineMs = 1 + r.nextInt(r.nextBoolean() ? 300 : MAX_DEADLINE_MS);
      DeliveryOptions o = new DeliveryOptions().setSendTimeout(sendTimeoutMs)
          .addHeader("key", key)
          .addHeader("timeout-ms", String.valueOf(deadlineMs));
      o.addHeader("order", String.valueOf(r.nextInt(10)));
      String id = String.valueOf(sent.get());
      o.addHeader("id", id);
      Object body = switch (r.nextInt(4)) {
        case 0 -> new JsonObject().put("v", "y".repeat(r.nextInt(2000)));
        case 1 -> new JsonArray().add(r.nextInt());
        case 2 -> "s" + r.nextInt();
        default -> r.nextInt();
      };
      sent.incrementAndGet();
      long sentAt = System.nanoTime();
      submittedAt.put(id, sentAt); // before the verticle can have it (VerticleCalls)
      vertx.eventBus().request("soak.submit", body, o).onComplete(ar -> {
        if (!(ar.cause() instanceof ReplyException t && t.failureType() == ReplyFailure.TIMEOUT)) {
          long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt);
          latestPastBoundMs.accumulateAndGet(tookMs - deadlineMs - afterDeadlineMs, Math::max);
        }
        if (ar.succeeded()) {
          answered.incrementAndGet();
          return;
        }
        if (ar.cause() instanceof ReplyException re) {
          if (re.failureType() == ReplyFailure.NO_HANDLERS) {
            notAccepted.incrementAndGet(); // between undeploy and redeploy: never accepted
          } else if (re.failureType() == ReplyFailure.TIMEOUT) {
            noReply.incrementAndGet();
          } else {
            answered.incrementAndGet();
            codes.computeIfAbsent(re.failureCode(), k -> new AtomicLong()).incrementAndGet();
          }
        } else {
          answered.incrementAndGet();
        }
      });
    }

    private long outstanding() {
      return sent.get() - answered.get() - noReply.get() - notAccepted.get();
    }

    void stop() {
      running = false;
    }

    void awaitAnswers(int round) throws InterruptedException {
      long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(sendTimeoutMs + 10_000);
      while (answered.get() + noReply.get() + notAccepted.get() < sent.get() && System.nanoTime() < until) {
        Thread.sleep(10);
      }
      long missing = sent.get() - answered.get() - noReply.get() - notAccepted.get();
      if (missing > 0) {
        find(round, missing + " event-bus requests never completed at all");
      }
      if (noReply.get() > 0) {
        find(round, noReply.get() + " event-bus requests got no reply within their send timeout of "
            + sendTimeoutMs + " ms");
      }
    }
  }
}
