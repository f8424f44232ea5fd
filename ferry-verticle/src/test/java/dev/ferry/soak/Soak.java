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
 *   <li>no key ever had two calls in flight (checked by the downstream, per ferry);
 *   <li>after a full GC, the heap is within 16 MB of its baseline and no lane is held.
 * </ul>
 *
 * Everything random comes from one seed, printed with every failure; threads make the
 * interleavings vary, so a seed reproduces the schedule of faults and configs, not every race.
 * Runs on a time budget: as many rounds as fit. Not thread-safe; one run per instance.
 */
final class Soak {
  /** What the soak does not fail on yet, each with the issue that owns it. */
  record Known(boolean undeployRaceNoReply) {
    /**
     * Issue 13 item 8 (engineer C, branch {@code cluster}): a request racing an undeploy of the
     * verticle may get no reply at all and wait for its send timeout. Counted and reported always;
     * a failure only when {@code ferry.soak.strict} is set, until that fix is on main.
     */
    static Known fromProperties() {
      return new Known(!Boolean.getBoolean("ferry.soak.strict"));
    }
  }

  static final long HEAP_SLACK = 16L << 20;
  /** The longest caller deadline the event-bus load sets. */
  static final int MAX_DEADLINE_MS = 3_000;

  private final long seed;
  private final Duration budget;
  private final Known known;
  private final Random rnd;
  private final List<String> findings = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private long baselineHeap = -1;
  private int rounds;
  private long inputs;

  Soak(long seed, Duration budget, Known known) {
    this.seed = seed;
    this.budget = budget;
    this.known = known;
    this.rnd = new Random(seed);
  }

  /** Runs rounds until the budget is spent; returns the report (findings empty when all held). */
  Report run() throws Exception {
    long end = System.nanoTime() + budget.toNanos();
    do {
      round(rounds);
      rounds++;
    } while (System.nanoTime() < end && findings.isEmpty());
    return new Report(seed, rounds, inputs, List.copyOf(findings), List.copyOf(notes));
  }

  record Report(long seed, int rounds, long inputs, List<String> findings, List<String> notes) {
    @Override
    public String toString() {
      return "soak seed " + seed + ": " + rounds + " rounds, " + inputs + " inputs, "
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
    Downstream down = new Downstream(r.nextLong());
    String downAddress = "soak.down";
    await(vertx.deployVerticle(down, new DeploymentOptions()));

    JsonObject verticleConfig = verticleConfig(r, downAddress);
    String verticleId = await(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
        new DeploymentOptions().setConfig(verticleConfig)));
    Owner owner = new Owner(r.nextLong(), down);
    String ownerId = await(vertx.deployVerticle(owner));

    EventBusLoad ebLoad = new EventBusLoad(vertx, r.nextLong(), verticleConfig);
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
      await(vertx.undeploy(ownerId));
      checkClosed(round, "library ferries after their verticle undeployed", before);
      owner = new Owner(r.nextLong(), down);
      ownerId = await(vertx.deployVerticle(owner));
      current.set(owner);
      if (r.nextBoolean() && !Boolean.getBoolean("ferry.soak.noVerticleUndeploy")) {
        // The verticle too: requests racing its undeploy must still be answered (issue 13 item 8).
        await(vertx.undeploy(verticleId));
        down.newVerticle();
        verticleId = await(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle",
            new DeploymentOptions().setConfig(verticleConfig)));
      }
    }
    checkBounds(round, vertx, verticleConfig, owner);

    // Event-bus callers first: their answers need a live Vert.x.
    ebLoad.stop();
    ebLoad.awaitAnswers(round);
    // Then close Vert.x under the library load: every library caller must still be answered.
    List<Ferry<?, ?>> last = owner.ferries;
    Thread.sleep(r.nextInt(200));
    await(vertx.close());
    libLoad.stop();
    libLoad.awaitAnswers(round);
    checkClosed(round, "library ferries after Vert.x closed", last);
    inputs += ebLoad.sent.get() + libLoad.sent.get();
    for (String v : down.violations) {
      find(round, v);
    }
    down.violations.clear();
    if (down.overlaps.get() > 0) {
      notes.add("round " + round + ": " + down.overlaps.get() + " verticle calls reached the downstream while it"
          + " still held one for their key (not decidable from the downstream under load; see Downstream)");
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

  // ------------------------------------------------------------------ the downstream

  /**
   * One event-bus consumer for the verticle, and a batch call for the library ferries, with the
   * same faults. It checks that no key ever has two calls in flight (per caller of the downstream):
   * a call it decides to hang, or to answer after the caller's timeout, it stops counting as in
   * flight at once (the caller is entitled to move on when its own timeout fires).
   */
  static final class Downstream extends VerticleBase {
    final List<String> violations = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Calls of the verticle that arrived while the downstream still held one for the same key. */
    final AtomicLong overlaps = new AtomicLong();

    /** The verticle was redeployed: calls of the old instance no longer count. */
    void newVerticle() {
      open.removeIf(k -> k.startsWith("verticle:"));
    }
    private final Set<String> open = ConcurrentHashMap.newKeySet();
    private final long seed;
    private final ThreadLocal<Random> random;

    Downstream(long seed) {
      this.seed = seed;
      this.random = ThreadLocal.withInitial(() -> new Random(seed ^ Thread.currentThread().getId()));
    }

    @Override
    public Future<?> start() {
      return vertx.eventBus().<JsonObject>consumer("soak.down", this::onBatch).completion();
    }

    private void onBatch(Message<JsonObject> m) {
      JsonObject body = m.body();
      String key = "verticle:" + body.getString("key");
      JsonArray inputs = body.getJsonArray("inputs");
      Fault fault = Fault.pick(random.get());
      if (!open.add(key)) {
        // Not a finding: the downstream cannot tell this apart from a call whose event-bus request
        // the verticle already gave up on (its callTimeoutMs passed while a loaded machine held
        // the downstream's answer back). The library per-key ferries check the guarantee soundly.
        overlaps.incrementAndGet();
      }
      switch (fault) {
        case HANG -> open.remove(key);
        case ERROR -> {
          open.remove(key);
          throw new StackOverflowError("soak: the downstream throws an Error");
        }
        case FAIL -> {
          open.remove(key);
          m.fail(500, "soak: the downstream failed");
        }
        case GARBAGE -> {
          open.remove(key);
          m.reply(random.get().nextBoolean() ? new JsonObject().put("outcomes", new JsonArray())
              : new JsonObject().put("nonsense", 1));
        }
        case LATE -> {
          open.remove(key); // may arrive after the caller's timeout: not counted as in flight
          vertx.setTimer(1 + random.get().nextInt(800), t -> m.reply(outcomes(inputs)));
        }
        default -> vertx.setTimer(1 + random.get().nextInt(5), t -> {
          open.remove(key);
          m.reply(outcomes(inputs));
        });
      }
    }

    private JsonObject outcomes(JsonArray inputs) {
      JsonArray out = new JsonArray();
      for (int i = 0; i < inputs.size(); i++) {
        out.add(random.get().nextInt(20) == 0 ? new JsonObject().put("error", "soak: rejected")
            : new JsonObject().put("ok", inputs.getJsonObject(i).getValue("id")));
      }
      return new JsonObject().put("outcomes", out);
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
          if (k != null) { open.remove(k); }
          return Promise.<List<I>>promise().future();
        }
        case ERROR -> {
          if (k != null) { open.remove(k); }
          throw new StackOverflowError("soak: the batch call throws an Error");
        }
        case FAIL, GARBAGE -> {
          if (k != null) { open.remove(k); }
          return Future.failedFuture("soak: the batch call failed");
        }
        case LATE -> {
          if (k != null) { open.remove(k); }
          Promise<List<I>> p = Promise.promise();
          vertx.setTimer(1 + r.nextInt(800), t -> p.tryComplete(inputs));
          return p.future();
        }
        default -> {
          Promise<List<I>> p = Promise.promise();
          vertx.setTimer(1 + r.nextInt(5), t -> {
            if (k != null) { open.remove(k); }
            p.tryComplete(inputs);
          });
          return p.future();
        }
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
              if (r.nextInt(50) == 0) {
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
    private final Vertx vertx;
    private final Random r;
    private final long sendTimeoutMs;
    private final Context context;
    private volatile boolean running;
    private final int maxOutstanding;

    EventBusLoad(Vertx vertx, long seed, JsonObject config) {
      this.vertx = vertx;
      this.r = new Random(seed);
      this.maxOutstanding = 50 + r.nextInt(2000);
      this.context = vertx.getOrCreateContext();
      // Longer than anything the ferry may take to answer an input with a deadline: the deadline, then
      // at most one call timeout (and a drain), plus room for a loaded machine.
      this.sendTimeoutMs = MAX_DEADLINE_MS + config.getLong("callTimeoutMs") + config.getLong("drainTimeoutMs") + 5_000;
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
        sendOne();
      }
      vertx.setTimer(1 + r.nextInt(3), t -> tick());
    }

    private void sendOne() {
      // Every request has a deadline, so that its answer is due within a known time: without one, an
      // input may rightly wait behind a long queue of slow calls for longer than any send timeout.
      DeliveryOptions o = new DeliveryOptions().setSendTimeout(sendTimeoutMs)
          .addHeader("key", "k" + r.nextInt(1 + r.nextInt(1000)))
          .addHeader("timeout-ms", String.valueOf(1 + r.nextInt(r.nextBoolean() ? 300 : MAX_DEADLINE_MS)));
      o.addHeader("order", String.valueOf(r.nextInt(10)));
      o.addHeader("id", String.valueOf(sent.get()));
      Object body = switch (r.nextInt(4)) {
        case 0 -> new JsonObject().put("v", "y".repeat(r.nextInt(2000)));
        case 1 -> new JsonArray().add(r.nextInt());
        case 2 -> "s" + r.nextInt();
        default -> r.nextInt();
      };
      sent.incrementAndGet();
      vertx.eventBus().request("soak.submit", body, o).onComplete(ar -> {
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
        String what = noReply.get() + " event-bus requests got no reply within their send timeout of "
            + sendTimeoutMs + " ms (issue 13 item 8, requests racing an undeploy)";
        if (known.undeployRaceNoReply()) {
          notes.add("round " + round + ": " + what);
        } else {
          find(round, what);
        }
      }
    }
  }
}
