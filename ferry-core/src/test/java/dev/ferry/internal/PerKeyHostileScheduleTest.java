package dev.ferry.internal;

import dev.ferry.Dispatch;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A hostile scheduler against the real per-key ferry ({@link PerKeyFerry} over {@link PerKeyEngine})
 * in virtual time, in both dispatch modes (even seeds fixed slots, odd seeds adaptive). Step by
 * step it submits (bursts, heavy inputs, deadlines, a key or weigh function that throws), completes
 * calls out of order, late (after their call timeout) or never, fails them in bursts, lets calls
 * complete inline (inside the call), throw or return null, lets {@code extract} and callers'
 * callbacks throw and callbacks submit again, moves a clock that jumps back and forth under the
 * learned limit, and closes, drains or closes the owner at a random moment. So the learned limit
 * ({@link CallLimit}) is fed, through the real engine, latencies of 0 (inline completions), of
 * hours, bursts of failures and a clock that goes backwards; it must stay in
 * {@code [1, maxInFlightBatches]}. After every step and at
 * every call it checks, from the outside:
 *
 * <ul>
 *   <li>one key per batch, never two calls in flight for a key, the batch bounds, each key's inputs
 *       sent in order (submission order, or the comparator's: no batch input after a waiting one)
 *       and batches as full as the bounds allow;
 *   <li>calls in flight within the limit in force and {@code maxInFlightBatches} (adaptive), batch
 *       and direct calls each within {@code maxInFlightBatches} (fixed slots); the limit in
 *       {@code [1, maxInFlightBatches]};
 *   <li>the engine's own audit ({@link PerKeyEngine#brokenInvariant}), and the metrics agree with
 *       what the test knows is waiting and in flight;
 *   <li>every input gets exactly one answer, its own, of a kind that fits what happened to it
 *       (TIMEOUT exactly at its deadline and never sent; REJECTED only when the room was full; ...);
 *   <li>fairness (runs whose transitions never nest, with no batch delay and a clock that does not
 *       jump), against an outside model of the ready lines: fixed slots, a lane in line is granted
 *       after at most the lanes ahead of it (ADR 0011 P5); adaptive (ADR 0011 P3-P5 as amended by
 *       ADR 0014 and its addendum): a busy grant goes to the smallest tag, a lane's tag being the
 *       admission number of the input it will send first (re-ranked when the one it named expired
 *       or, under a comparator, an input sorting first joined it); a busy lane is overtaken by at
 *       most {@code B + (B + 1) x maxBatchSize} grants (B: the inputs waiting when it took its tag
 *       that were admitted before it); an idle lane by at most {@code 2A + 1} (A: idle lanes ahead
 *       of it, the idle line being FIFO and every busy grant leaving credit for one idle grant); an
 *       idle grant made while busy lanes wait only while the idle grants since the last busy grant
 *       carried fewer inputs than it did (ADR 0014's addendum, which replaced ADR 0011's "at most
 *       one of any two consecutive grants"); an idle key under the limit with empty lines is called
 *       at once; a direct call never while lanes wait (adaptive).
 * </ul>
 *
 * Rerun one seed with {@code -Dferry.hostile.seed=N}; run more with {@code -Dferry.hostile.seeds=N}.
 */
class PerKeyHostileScheduleTest {
  static final long MS = 1_000_000L;

  static List<Long> seeds() {
    return HostileSeeds.of(40);
  }

  /** What the runs exercised, summed over seeds: printed with {@code -Dferry.hostile.stats=true}. */
  static final java.util.concurrent.ConcurrentSkipListMap<String, Long> STATS = new java.util.concurrent.ConcurrentSkipListMap<>();

  static void count(String what) {
    STATS.merge(what, 1L, Long::sum);
  }

  @org.junit.jupiter.api.AfterAll
  static void printStats() {
    if (Boolean.getBoolean("ferry.hostile.stats")) {
      System.out.println("hostile schedules: " + STATS);
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void propertiesHoldOnHostileSchedules(long seed) {
    Run run = new Run(seed);
    try {
      run.run();
    } catch (Throwable e) {
      throw new AssertionError("seed " + seed + " (" + run.describe() + "; rerun with -Dferry.hostile.seed="
          + seed + "): " + e.getMessage(), e);
    }
  }

  record In(int id, String key, long weight, long order) {
    @Override
    public String toString() {
      return key + "#" + id;
    }
  }

  /** A clock that jumps back and forth over the virtual loop's; timers keep their relative delays. */
  static final class SkewLoop implements Loop {
    final VirtualLoop inner;
    long skew;

    SkewLoop(VirtualLoop inner) {
      this.inner = inner;
    }

    @Override public boolean inLoop() { return inner.inLoop(); }
    @Override public void execute(Runnable task) { inner.execute(task); }
    @Override public long nanoTime() { return inner.nanoTime() + skew; }
    @Override public long schedule(long delayNanos, Runnable task) { return inner.schedule(delayNanos, task); }
    @Override public void cancel(long timerId) { inner.cancel(timerId); }
    @Override public void report(Throwable failure) { inner.report(failure); }
    @Override public Runnable onOwnerClose(java.util.function.Consumer<Runnable> hook) { return inner.onOwnerClose(hook); }
  }

  static final class Sub {
    final In in;
    final long seq;
    long deadline = Long.MAX_VALUE; // real virtual time
    Future<String> future;
    int answers;
    long answeredAt;
    boolean sent;
    Call call;
    boolean roomFull;
    boolean badInput;
    long submittedAt;

    Sub(In in, long seq) {
      this.in = in;
      this.seq = seq;
    }
  }

  static final class Call {
    final int no;
    final String key;
    final List<In> inputs;
    final boolean direct;
    final long startedAt;
    Promise<Map<Integer, String>> promise;
    boolean open = true;
    boolean never;
    boolean failed;
    boolean late;
    boolean again;
    io.vertx.core.Handler<io.vertx.core.AsyncResult<Map<Integer, String>>> handler;
    final java.util.Set<Integer> rejected = new java.util.HashSet<>();

    Call(int no, String key, List<In> inputs, boolean direct, long startedAt) {
      this.no = no;
      this.key = key;
      this.inputs = inputs;
      this.direct = direct;
      this.startedAt = startedAt;
    }
  }

  /** The fairness model's view of one key's lane. */
  static final class FLane {
    boolean inLine;
    boolean idle;
    long tag;
    /** When it joined the idle line: the idle line is FIFO (ADR 0196 reads its head). */
    long joined;
    final List<Sub> tagged = new ArrayList<>(List.of());
    int passed;
    long bound;
  }

  static final class Run {
    final long seed;
    final Random rnd;
    final VirtualLoop vloop = new VirtualLoop();
    final SkewLoop loop = new SkewLoop(vloop);
    final boolean adaptive;
    final boolean nested;
    final boolean skewed;
    final boolean customOrder;
    final boolean hostileFns;
    final PerKeyConfig config;
    final PerKeyFerry<String, In, Map<Integer, String>, String> ferry;
    final boolean fairness;
    final int keys;

    final List<Sub> subs = new ArrayList<>();
    final Map<Integer, Sub> byId = new HashMap<>();
    final Map<String, TreeSet<Sub>> waiting = new HashMap<>();
    final Map<String, Call> openByKey = new HashMap<>();
    final List<Call> calls = new ArrayList<>();
    final ArrayDeque<Boolean> directFlags = new ArrayDeque<>();
    final Map<String, FLane> lanes = new LinkedHashMap<>();
    /** The admission number at each key's last grant, and the keys served while a busy input waited (ADR 0183). */
    final Map<String, Long> grantedAt = new HashMap<>();
    final Map<String, Long> servedOver = new HashMap<>();
    final ArrayDeque<Object[]> servedOrder = new ArrayDeque<>();
    final Comparator<Sub> sendingOrder;
    int openBatch;
    int openDirect;
    int grants;
    long joins;
    int lastBusyGrant = 1;
    int idleInputsSinceBusy;
    boolean closing;
    long closingAt = Long.MAX_VALUE;
    boolean ownerClosed;
    Future<Void> closed;
    int nestedSubmits;
    boolean registering;
    int steps;
    int maxLimitSeen;
    final List<String> violations = new ArrayList<>();

    Run(long seed) {
      this.seed = seed;
      rnd = new Random(seed * 0x9E3779B97F4A7C15L + 17);
      adaptive = seed % 2 == 1;
      nested = rnd.nextBoolean();
      skewed = adaptive && rnd.nextInt(4) == 0;
      customOrder = rnd.nextInt(4) == 0;
      hostileFns = rnd.nextBoolean();
      keys = 1 + rnd.nextInt(rnd.nextBoolean() ? 4 : 40);
      PerKeyConfig.Builder b = PerKeyConfig.builder()
          .dispatch(adaptive ? Dispatch.ADAPTIVE : Dispatch.FIXED_SLOTS)
          .maxInFlightBatches(1 + rnd.nextInt(adaptive ? 8 : 4))
          .maxBatchSize(1 + rnd.nextInt(6))
          .maxQueueing(rnd.nextInt(3) == 0 ? 10_000 : 3 + rnd.nextInt(30))
          .directIdleKeys(rnd.nextInt(4) != 0)
          .callTimeout(Duration.ofMillis(rnd.nextBoolean() ? 30_000 : 5 + rnd.nextInt(40)))
          .drainTimeout(Duration.ofMillis(rnd.nextInt(60)));
      if (rnd.nextBoolean()) {
        b.maxBatchWeight(3 + rnd.nextInt(12));
      }
      if (rnd.nextInt(4) == 0) {
        b.maxQueuedWeight(10 + rnd.nextInt(100));
      }
      boolean delay = rnd.nextInt(5) == 0;
      if (delay) {
        b.maxBatchDelay(Duration.ofMillis(1 + rnd.nextInt(4)));
      }
      if (adaptive && rnd.nextInt(5) == 0) {
        b.pinnedLimit(1);
      }
      config = b.build();
      // A clock that jumps forward expires inputs at a grant, before their timers: the lane granted
      // for an input that expired the same instant is not a fairness failure, so no model there.
      fairness = !nested && !delay && !skewed;
      Comparator<In> order = customOrder ? Comparator.comparingLong(In::order) : null;
      sendingOrder = customOrder
          ? Comparator.<Sub>comparingLong(s -> s.in.order).thenComparingLong(s -> s.seq)
          : Comparator.comparingLong(s -> s.seq);
      ferry = new PerKeyFerry<>(loop, config, this::keyOf, this::weigh, order, this::call, this::extract);
      ferry.observe(new Probe() {
        @Override
        public void batchStarted(boolean direct, int size, long weight, long[] waits) {
          directFlags.add(direct);
          checkBoundAtGrant();
        }
      });
    }

    String describe() {
      return (adaptive ? "adaptive" : "fixed-slots") + (nested ? ", nested" : "") + (skewed ? ", skewed clock" : "")
          + (customOrder ? ", custom order" : "") + (hostileFns ? ", hostile functions" : "") + ", " + keys
          + " keys, " + config;
    }

    void violation(String what) {
      violations.add("t=" + vloop.nowMillis() + "ms: " + what);
    }

    long now() {
      return vloop.nanoTime();
    }

    // ------------------------------------------------------------ user functions

    String keyOf(In in) {
      if (hostileFns && in.id % 53 == 11) {
        throw new IllegalStateException("key function broke on " + in.id);
      }
      return in.key;
    }

    long weigh(In in) {
      if (hostileFns && in.id % 59 == 17) {
        return -1;
      }
      return in.weight;
    }

    String extract(In in, Map<Integer, String> result) {
      if (hostileFns && in.id % 31 == 5) {
        throw new IllegalArgumentException("extract broke on " + in.id);
      }
      if (hostileFns && in.id % 37 == 9) {
        throw new AssertionError("extract threw an Error on " + in.id);
      }
      String v = result.get(in.id);
      if (v == null) {
        throw FerryException.inputRejected("no " + in.id);
      }
      return v;
    }

    boolean extractBreaks(In in) {
      return hostileFns && (in.id % 31 == 5 || in.id % 37 == 9);
    }

    // ------------------------------------------------------------ the downstream

    void checkBoundAtGrant() {
      PerKeyEngine<String, In> e = ferry.engine();
      int max = config.maxInFlightBatches();
      if (adaptive) {
        if (e.inFlight() > e.callLimitNow()) {
          violation("a call started with " + e.inFlight() + " in flight over the limit " + e.callLimitNow());
        }
        if (e.inFlight() > max) {
          violation(e.inFlight() + " calls in flight over maxInFlightBatches " + max);
        }
      } else if (e.batchesInFlight() > max || e.inFlight() - e.batchesInFlight() > max) {
        violation("slots exceeded: " + e.batchesInFlight() + " batch, " + (e.inFlight() - e.batchesInFlight()) + " direct");
      }
    }

    Future<Map<Integer, String>> call(String key, List<In> inputs) {
      Boolean direct = directFlags.poll();
      if (direct == null) {
        violation("a call the probe never saw start");
        direct = false;
      }
      Call c = new Call(calls.size(), key, List.copyOf(inputs), direct, now());
      count(direct ? "calls direct" : "calls batch");
      if (fairness) {
        count("grants checked for fairness");
      }
      calls.add(c);
      checkCall(c);
      openByKey.put(key, c);
      if (c.direct) {
        openDirect++;
      } else {
        openBatch++;
      }
      if (adaptive ? openBatch + openDirect > config.maxInFlightBatches()
          : openBatch > config.maxInFlightBatches() || openDirect > config.maxInFlightBatches()) {
        violation("calls open: " + openBatch + " batch, " + openDirect + " direct, max " + config.maxInFlightBatches());
      }
      for (In in : inputs) {
        if (rnd.nextInt(8) == 0) {
          c.rejected.add(in.id);
        }
      }
      c.promise = Promise.promise();
      if (nested) {
        int r = rnd.nextInt(20);
        if (r < 5) {
          count(r == 0 ? "call function threw" : r == 1 ? "call function returned null" : "completed inline");
        }
        if (r == 0) {
          c.failed = true;
          closeCall(c);
          throw new IllegalStateException("the call function threw");
        }
        if (r == 1) {
          c.failed = true;
          closeCall(c);
          return null;
        }
        if (r < 5) {
          // Completed inline, inside the call.
          completeCall(c, rnd.nextInt(3) == 0);
          return c.promise.future();
        }
      }
      c.never = rnd.nextInt(40) == 0;
      if (rnd.nextInt(8) == 0) {
        return listenedTwice(c);
      }
      return c.promise.future();
    }

    /**
     * A hand-rolled Future over the call's promise that keeps the ferry's handler, so that a later
     * step can call it again: a second completion, or one that comes before the real one.
     */
    @SuppressWarnings("unchecked")
    Future<Map<Integer, String>> listenedTwice(Call c) {
      Future<Map<Integer, String>> real = c.promise.future();
      return (Future<Map<Integer, String>>) java.lang.reflect.Proxy.newProxyInstance(Future.class.getClassLoader(),
          new Class<?>[] {Future.class}, (proxy, method, args) -> {
            if (method.getName().equals("onComplete") && args != null && args.length == 1) {
              c.handler = (io.vertx.core.Handler<io.vertx.core.AsyncResult<Map<Integer, String>>>) args[0];
              real.onComplete(c.handler);
              return proxy;
            }
            throw new UnsupportedOperationException(method.getName());
          });
    }

    /** Calls a kept handler again, with a failure: after its call completed, or before. */
    void completeAgain() {
      List<Call> kept = calls.stream().filter(c -> c.handler != null && !c.again).toList();
      if (kept.isEmpty()) {
        return;
      }
      Call c = kept.get(rnd.nextInt(kept.size()));
      c.again = true;
      count(c.open ? "completed twice, the extra one first" : "completed twice");
      if (c.open) {
        // The first completion the ferry hears of: the call is over, failed.
        c.late = now() - c.startedAt >= config.callTimeout().toNanos();
        c.failed = true;
        closeCall(c);
      }
      c.handler.handle(Future.failedFuture(new IllegalStateException("call " + c.no + " completed again")));
    }

    void checkCall(Call c) {
      if (openByKey.containsKey(c.key)) {
        violation("two calls in flight for key " + c.key);
      }
      if (c.inputs.isEmpty()) {
        violation("an empty batch");
      }
      if (c.inputs.size() > config.maxBatchSize()) {
        violation("batch of " + c.inputs.size() + " over maxBatchSize");
      }
      long weight = c.inputs.stream().mapToLong(In::weight).sum();
      if (c.inputs.size() > 1 && weight > config.maxBatchWeight()) {
        violation("batch of weight " + weight + " over maxBatchWeight");
      }
      TreeSet<Sub> w = waiting.computeIfAbsent(c.key, k -> new TreeSet<>(sendingOrder));
      Sub prev = null;
      for (In in : c.inputs) {
        if (!in.key.equals(c.key)) {
          violation("batch for " + c.key + " carries " + in);
        }
        Sub s = byId.get(in.id);
        if (s == null) {
          violation("unknown input sent: " + in);
          continue;
        }
        if (s.sent) {
          violation(in + " sent twice");
        }
        if (s.answers > 0) {
          violation(in + " sent after it was answered");
        }
        if (s.deadline <= now() && !skewed) {
          violation(in + " sent at or after its deadline");
        }
        if (prev != null && sendingOrder.compare(prev, s) > 0) {
          violation("batch out of order: " + prev.in + " before " + in);
        }
        prev = s;
        s.sent = true;
        s.call = c;
        w.remove(s);
      }
      // Order across batches: nothing still waiting for the key goes before what was just sent.
      // Submission order: every input sent later has a higher sequence number than these.
      if (prev != null && !w.isEmpty() && sendingOrder.compare(w.first(), prev) < 0 && (!nested || !customOrder)) {
        violation("batch " + c.inputs + " left while " + w.first().in + " (earlier in the key's order) waits");
      }
      if (!customOrder) {
        Long last = lastSent.get(c.key);
        if (last != null && byId.get(c.inputs.get(0).id()).seq <= last) {
          violation("key " + c.key + " sent " + c.inputs.get(0) + " after seq " + last);
        }
        lastSent.put(c.key, byId.get(c.inputs.get(c.inputs.size() - 1).id()).seq);
      }
      // As full as the bounds allow: the next waiting input did not fit.
      if (!nested && !w.isEmpty() && c.inputs.size() < config.maxBatchSize()
          && w.first().in.weight <= config.maxBatchWeight() - weight) {
        violation("batch " + c.inputs + " left " + w.first().in + " behind though it fitted");
      }
      if (fairness) {
        grantInModel(c, weight);
      }
    }

    final Map<String, Long> lastSent = new HashMap<>();

    void closeCall(Call c) {
      if (!c.open) {
        return;
      }
      c.open = false;
      openByKey.remove(c.key, c);
      if (c.direct) {
        openDirect--;
      } else {
        openBatch--;
      }
      if (fairness) {
        completedInModel(c.key);
      }
    }

    void completeCall(Call c, boolean fail) {
      if (!c.open) {
        if (c.again && !c.promise.future().isComplete()) {
          // The real completion, after the one the ferry took as the first: ignored.
          c.promise.complete(Map.of());
        }
        return;
      }
      c.late = now() - c.startedAt >= config.callTimeout().toNanos();
      c.failed = fail;
      // The test's own state first: the completion is a transition that may start the key's next call.
      closeCall(c);
      if (fail) {
        c.promise.fail(new IllegalStateException("downstream failed call " + c.no));
      } else {
        Map<Integer, String> result = new HashMap<>();
        for (In in : c.inputs) {
          if (!c.rejected.contains(in.id)) {
            result.put(in.id, "v" + in.id);
          }
        }
        c.promise.complete(result);
      }
      // A second completion of the same call changes nothing.
      c.promise.tryComplete(Map.of());
    }

    // ------------------------------------------------------------ the fairness model

    FLane lane(String key) {
      return lanes.computeIfAbsent(key, k -> new FLane());
    }

    boolean hasLane(String key) {
      TreeSet<Sub> w = waiting.get(key);
      return openByKey.containsKey(key) || (w != null && !w.isEmpty());
    }

    void join(String key, boolean idle) {
      FLane l = lane(key);
      try {
      l.inLine = true;
      l.idle = idle && adaptive;
      l.passed = 0;
      l.joined = ++joins;
      if (!adaptive) {
        l.bound = lanes.values().stream().filter(o -> o != l && o.inLine).count();
      } else if (l.idle) {
        l.bound = 2 * lanes.values().stream().filter(o -> o != l && o.inLine && o.idle).count() + 1;
      } else {
        l.tag = waiting.get(key).first().seq;
        l.tagged.clear();
        l.tagged.add(waiting.get(key).first());
        long b = waiting.values().stream().flatMap(TreeSet::stream).filter(s -> s.seq < l.tag).count();
        l.bound = b + (b + 1) * config.maxBatchSize();
      }
      } finally {
        trace("join " + key + (idle ? " idle" : ""));
      }
    }

    void leave(String key) {
      FLane l = lanes.get(key);
      if (l != null) {
        l.inLine = false;
      }
    }

    static final boolean TRACE = Boolean.getBoolean("ferry.hostile.trace");

    void trace(String what) {
      if (TRACE) {
        System.out.println("t=" + now() + " " + what + "  lines=" + lineView());
      }
    }

    String lineView() {
      StringBuilder b = new StringBuilder();
      lanes.forEach((k, l) -> {
        if (l.inLine) {
          b.append(k).append(l.idle ? "(idle" : "(tag " + l.tag).append(" passed ").append(l.passed).append("/").append(l.bound).append(") ");
        }
      });
      return b.toString() + " waiting=" + waiting.entrySet().stream().filter(en -> !en.getValue().isEmpty())
          .map(en -> en.getKey() + en.getValue().stream().map(x -> "" + x.seq).toList()).toList()
          + " open=" + openByKey.keySet() + " limit=" + ferry.engine().callLimitNow();
    }

    void grantInModel(Call c, long weight) {
      trace("grant " + (c.direct ? "direct " : "") + c.key + c.inputs.stream().map(x -> x.id()).toList());
      grantedAt.put(c.key, -1L);
      FLane l = lane(c.key);
      if (c.direct) {
        if (adaptive && lanes.values().stream().anyMatch(o -> o != l && o.inLine)) {
          violation("a direct call for " + c.key + " while lanes wait in line");
        }
        l.inLine = false;
        return;
      }
      if (!l.inLine) {
        violation("granted " + c.key + ", which the model does not have in line");
        return;
      }
      grants++;
      boolean busyWait = lanes.values().stream().anyMatch(o -> o.inLine && !o.idle);
      if (adaptive && !l.idle) {
        long minTag = lanes.values().stream().filter(o -> o.inLine && !o.idle).mapToLong(o -> o.tag).min().getAsLong();
        if (l.tag != minTag) {
          violation("busy grant to " + c.key + " (tag " + l.tag + ") while tag " + minTag + " waits (P4)");
        }
        lastBusyGrant = c.inputs.size();
        idleInputsSinceBusy = 0;
      } else if (adaptive && busyWait) {
        // A head start over waiting busy lanes (ADR 0183): by the admission number the engine
        // gives the next input (every input submitted so far has a lower one).
        grantedAt.put(c.key, (long) subs.size());
        if (idleInputsSinceBusy >= lastBusyGrant) {
          violation("idle grant to " + c.key + " while busy lanes wait, after idle grants carrying "
              + idleInputsSinceBusy + " inputs since a busy grant of " + lastBusyGrant + " (ADR 0014 P3)");
        }
        idleInputsSinceBusy += c.inputs.size();
      }
      l.inLine = false;
      for (Map.Entry<String, FLane> o : lanes.entrySet()) {
        FLane ol = o.getValue();
        if (ol != l && ol.inLine && ++ol.passed > ol.bound) {
          violation("key " + o.getKey() + " (" + (ol.idle ? "idle" : "busy") + " lane) passed over by "
              + ol.passed + " grants, bound " + ol.bound);
        }
      }
    }

    void completedInModel(String key) {
      TreeSet<Sub> w = waiting.get(key);
      if (w != null && !w.isEmpty()) {
        join(key, false);
      } else if (adaptive && grantedAt.getOrDefault(key, -1L) >= 0) {
        // Let go of after a head start: remembered while an input admitted before it waits in the busy line.
        Long head = busyHeadTag();
        Long at = grantedAt.get(key);
        if (head != null && at > head) {
          servedOver.put(key, at);
          servedOrder.add(new Object[] {key, at});
        }
      }
    }

    /**
     * ADR 0183, as the engine keeps it: the busy line's oldest tag (null when no busy lane waits),
     * forgetting the keys served before it was admitted (all of them when none waits).
     */
    Long busyHeadTag() {
      java.util.OptionalLong min = lanes.values().stream().filter(o -> o.inLine && !o.idle).mapToLong(o -> o.tag).min();
      if (min.isEmpty()) {
        servedOver.clear();
        servedOrder.clear();
        return null;
      }
      while (!servedOrder.isEmpty() && (Long) servedOrder.peek()[1] <= min.getAsLong()) {
        Object[] old = servedOrder.poll();
        servedOver.remove(old[0], old[1]);
      }
      return min.getAsLong();
    }

    /** ADR 0183: the key was granted a call after the oldest input waiting in the busy line was admitted. */
    boolean servedWhileBusyWaits(String key) {
      Long head = busyHeadTag();
      if (head == null || servedOver.isEmpty()) {
        return false;
      }
      Long at = servedOver.get(key);
      return at != null && at > head && !idleLineBehind(head);
    }

    /** ADR 0196: the idle line's head waits with an input admitted before the busy line's oldest tag. */
    boolean idleLineBehind(long busyHead) {
      return lanes.entrySet().stream().filter(o -> o.getValue().inLine && o.getValue().idle)
          .min(Comparator.comparingLong(o -> o.getValue().joined))
          .map(o -> waiting.get(o.getKey()) != null && !waiting.get(o.getKey()).isEmpty()
              && waiting.get(o.getKey()).first().seq < busyHead).orElse(false);
    }

    // ------------------------------------------------------------ answers

    void answered(Sub s, io.vertx.core.AsyncResult<String> ar) {
      if (TRACE) {
        trace("answer " + s.in + " " + (ar.succeeded() ? ar.result() : ar.cause().getMessage()) + " skew " + loop.skew);
      }
      s.answers++;
      s.answeredAt = now();
      if (s.answers > 1) {
        violation(s.in + " answered twice");
      }
      TreeSet<Sub> w = waiting.get(s.in.key);
      if (!s.sent && w != null && w.remove(s) && fairness) {
        FLane l = lanes.get(s.in.key);
        if (w.isEmpty() && !openByKey.containsKey(s.in.key)) {
          leave(s.in.key);
        } else if (adaptive && l != null && l.inLine && !l.idle && l.tagged.contains(s)) {
          // Its tagged input expired: the lane is ranked by its next input from now on, and its
          // bound counts from here, over the inputs older than that one.
          join(s.in.key, false);
        }
      }
      if (nested && nestedSubmits < 200 && rnd.nextInt(6) == 0) {
        nestedSubmits++;
        submit(false);
      }
      if (hostileFns && !registering && rnd.nextInt(10) == 0) {
        // Thrown into the ferry's answering of this caller (registered before the answer came).
        throw new IllegalStateException("a caller's callback threw");
      }
    }

    // ------------------------------------------------------------ steps

    void submit(boolean topLevel) {
      int id = subs.size();
      String key = "k" + (rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(keys));
      long weight = rnd.nextInt(10) == 0 ? 1 + rnd.nextInt(40) : 1 + rnd.nextInt(4);
      In in = new In(id, key, weight, rnd.nextInt(4));
      Sub s = new Sub(in, id);
      s.submittedAt = now();
      subs.add(s);
      byId.put(id, s);
      s.badInput = hostileFns && (id % 53 == 11 || id % 59 == 17);
      PerKeyEngine<String, In> e = ferry.engine();
      long[] held = ferry.expiredStillHeld();
      s.roomFull = e.queuedInputs() + held[0] >= config.maxQueueing()
          || weight > config.maxQueuedWeight() - e.metrics().queuedWeight() - held[1];
      boolean keyIdle = !hasLane(key);
      boolean expectDirect = topLevel && fairness && adaptive && e.isOpen() && !s.badInput && keyIdle
          && config.directIdleKeys() && e.inFlight() < e.callLimitNow()
          && lanes.values().stream().noneMatch(l -> l.inLine);
      if (!s.badInput) {
        // Tentatively waiting (and, for the model, in line); taken back if it is answered at once.
        waiting.computeIfAbsent(key, k -> new TreeSet<>(sendingOrder)).add(s);
        if (fairness && keyIdle && e.isOpen()) {
          // The engine asks whether the key was served while a busy input waited (ADR 0183) only
          // for an input that waits in a new lane: not a direct call, not one refused for room.
          boolean direct = config.directIdleKeys() && e.inFlight() < e.callLimitNow()
              && lanes.values().stream().noneMatch(l -> l.inLine);
          join(key, config.directIdleKeys() && (direct || s.roomFull || !adaptive || !servedWhileBusyWaits(key)));
        }
      }
      long timeout = rnd.nextInt(4) == 0 ? (1 + rnd.nextInt(30)) * MS : 0;
      if (timeout > 0) {
        s.deadline = now() + timeout;
        s.future = ferry.submit(in, Duration.ofNanos(timeout));
      } else {
        s.future = ferry.submit(in);
      }
      boolean was = registering;
      registering = true;
      s.future.onComplete(ar -> answered(s, ar));
      registering = was;
      FLane fl = lanes.get(key);
      if (fairness && adaptive && customOrder && fl != null && fl.inLine && !fl.idle && s.answers == 0
          && waiting.get(key).first() == s) {
        // It sorts first in a waiting busy lane: the lane is ranked by it from now on (the input
        // it will send), and its bound counts from here.
        join(key, false);
      }
      if (expectDirect && !s.sent) {
        violation("an idle key's input " + in + " arrived under the limit with empty lines but was not called at once (P3)");
      }
    }

    void completeSome() {
      List<Call> open = calls.stream().filter(c -> (c.open || (c.again && !c.promise.future().isComplete())) && !c.never).toList();
      if (open.isEmpty()) {
        return;
      }
      // Out of order: any open call; in bursts of failures sometimes.
      boolean burst = rnd.nextInt(8) == 0;
      int n = burst ? open.size() : 1;
      List<Call> pick = new ArrayList<>(open);
      java.util.Collections.shuffle(pick, rnd);
      for (Call c : pick.subList(0, n)) {
        completeCall(c, burst || rnd.nextInt(8) == 0);
      }
    }

    void advance() {
      int r = rnd.nextInt(10);
      long nanos;
      if (r < 3) {
        nanos = 0;
      } else if (r < 8) {
        nanos = rnd.nextInt(3_000) * 1_000L;
      } else if (r < 9) {
        nanos = rnd.nextInt(30) == 0 ? TimeUnit.HOURS.toNanos(1 + rnd.nextInt(5)) : rnd.nextInt(60) * MS;
      } else {
        long next = vloop.nextTimerAt();
        nanos = next < 0 ? 0 : next - now();
      }
      vloop.advance(nanos);
    }

    void step(int i, int closeAt, int endMode) {
      if (i == closeAt) {
        beginEnd(endMode);
      }
      if (skewed && rnd.nextInt(10) == 0) {
        // The clock jumps: back by up to a second, or forward; now and then a huge jump.
        loop.skew += rnd.nextInt(5) == 0 ? (rnd.nextBoolean() ? -1 : 1) * (long) (rnd.nextDouble() * 1e13)
            : (long) ((rnd.nextDouble() - 0.6) * 1e9);
      }
      int r = rnd.nextInt(10);
      if (r < 4) {
        int burst = rnd.nextInt(6) == 0 ? 1 + rnd.nextInt(12) : 1;
        for (int b = 0; b < burst; b++) {
          submit(true);
        }
      } else if (r < 8) {
        if (rnd.nextInt(6) == 0) {
          completeAgain();
        } else {
          completeSome();
        }
      } else {
        advance();
      }
    }

    void beginEnd(int endMode) {
      if (closing) {
        return;
      }
      closing = true;
      closingAt = now();
      switch (endMode) {
        case 0 -> closed = ferry.close();
        case 1 -> closed = ferry.drain(Duration.ofMillis(rnd.nextInt(50)));
        default -> {
          ownerClosed = true;
          int[] done = vloop.closeOwner();
          closed = ferry.drain(Duration.ofDays(1)); // the ferry's own Future for its close
          if (done.length != 1) {
            violation("no owner hook");
          }
        }
      }
    }

    void check() {
      vloop.runPending();
      String broken = ferry.engine().brokenInvariant();
      if (broken != null) {
        violation("engine invariant: " + broken);
      }
      PerKeyEngine<String, In> e = ferry.engine();
      int limit = e.callLimitNow();
      maxLimitSeen = Math.max(maxLimitSeen, limit);
      if (limit < 1 || limit > config.maxInFlightBatches()) {
        violation("the limit in force " + limit + " is outside [1, " + config.maxInFlightBatches() + "]");
      }
      int modelWaiting = waiting.values().stream().mapToInt(TreeSet::size).sum();
      long modelWeight = waiting.values().stream().flatMap(TreeSet::stream).mapToLong(s -> s.in.weight).sum();
      var m = e.metrics();
      if (!callsForgotten()) {
        if (m.queuedInputs() != modelWaiting || m.queuedWeight() != modelWeight) {
          violation("metrics queued " + m.queuedInputs() + "/" + m.queuedWeight() + ", the test counts "
              + modelWaiting + "/" + modelWeight);
        }
        if (m.inFlightBatches() != openBatch + openDirect) {
          violation("metrics in flight " + m.inFlightBatches() + ", the test counts " + (openBatch + openDirect));
        }
        java.util.Set<String> activeKeys = new java.util.HashSet<>(openByKey.keySet());
        waiting.forEach((k, w) -> {
          if (!w.isEmpty()) {
            activeKeys.add(k);
          }
        });
        long active = activeKeys.size();
        if (m.activeLanes() != active) {
          violation("metrics active lanes " + m.activeLanes() + ", the test counts " + active);
        }
      }
      if (!violations.isEmpty()) {
        throw new AssertionError(violations.get(0) + (violations.size() > 1 ? " (+" + (violations.size() - 1) + " more)" : ""));
      }
    }

    boolean callsForgotten() {
      return ownerClosed && closed != null && closed.isComplete();
    }

    void run() {
      steps = 150 + rnd.nextInt(450);
      // Mostly near the end, now and then anywhere (what comes after is answered CLOSED).
      int closeAt = rnd.nextInt(3) == 0 ? rnd.nextInt(steps) : steps - rnd.nextInt(steps / 5) + rnd.nextInt(steps / 5);
      int endMode = rnd.nextInt(3);
      for (int i = 0; i < steps; i++) {
        step(i, closeAt, endMode);
        check();
      }
      beginEnd(endMode);
      check();
      for (int guard = 0; guard < 100_000 && !(closed.isComplete() && calls.stream().noneMatch(c -> c.open && !c.never)); guard++) {
        List<Call> open = calls.stream().filter(c -> c.open && (!c.never || !ownerClosed)).toList();
        if (!open.isEmpty() && rnd.nextBoolean()) {
          Call c = open.get(rnd.nextInt(open.size()));
          completeCall(c, rnd.nextInt(4) == 0);
        } else if (vloop.nextTimerAt() >= 0) {
          vloop.advance(vloop.nextTimerAt() - now());
        } else if (!open.isEmpty()) {
          completeCall(open.get(0), false);
        }
        check();
      }
      if (!closed.isComplete()) {
        throw new AssertionError("the close never completed");
      }
      // Calls given up at the owner's close may still complete: ignored.
      for (Call c : calls) {
        if (c.open) {
          completeCall(c, false);
        }
      }
      vloop.advance(0);
      if (!violations.isEmpty()) {
        throw new AssertionError(violations.get(0));
      }
      var m = ferry.metrics();
      if (m.activeLanes() != 0 || m.queuedInputs() != 0 || m.inFlightBatches() != 0) {
        throw new AssertionError("left behind: " + m);
      }
      if (vloop.liveTimers() != 0) {
        throw new AssertionError(vloop.liveTimers() + " timers left behind");
      }
      for (Sub s : subs) {
        checkOutcome(s);
      }
      count("runs " + (adaptive ? "adaptive" : "fixed-slots") + (fairness ? " with the fairness model" : ""));
      count("steps");
      STATS.merge("steps", (long) steps - 1, Long::sum);
      if (adaptive && config.pinnedLimit() == 0 && maxLimitSeen > 1) {
        count("adaptive runs whose learned limit rose above 1");
      }
      if (ownerClosed) {
        count("ended by the owner's close");
      }
      if (calls.stream().anyMatch(c -> c.late)) {
        count("runs with calls completing after their call timeout");
      }
    }

    void checkOutcome(Sub s) {
      count("outcome " + (s.future.succeeded() ? "ok" : ((FerryException) s.future.cause()).kind()));
      String who = s.in + (s.call == null ? "" : " (call " + s.call.no + ")");
      if (s.answers != 1) {
        throw new AssertionError(who + " answered " + s.answers + " times");
      }
      Future<String> f = s.future;
      if (f.succeeded()) {
        // A clock that jumps judges call timeouts in its own time: late or not is the ferry's call.
        if (!s.sent || s.call.failed || (s.call.late && !skewed) || s.call.rejected.contains(s.in.id) || extractBreaks(s.in)) {
          throw new AssertionError(who + " succeeded with " + f.result() + " but sent " + s.sent);
        }
        if (!f.result().equals("v" + s.in.id)) {
          throw new AssertionError(who + " got another input's outcome " + f.result());
        }
        return;
      }
      if (!(f.cause() instanceof FerryException fe)) {
        throw new AssertionError(who + " failed with a non-FerryException " + f.cause());
      }
      FerryError kind = fe.kind();
      switch (kind) {
        case BAD_INPUT -> {
          if (!s.badInput) {
            throw new AssertionError(who + " BAD_INPUT: " + fe.getMessage());
          }
        }
        case INPUT_REJECTED -> {
          // A clock that jumps judges call timeouts in its own time: late or not is the ferry's call.
        if (!s.sent || s.call.failed || (s.call.late && !skewed) || !s.call.rejected.contains(s.in.id) || extractBreaks(s.in)) {
            throw new AssertionError(who + " INPUT_REJECTED unexpectedly: " + fe.getMessage());
          }
        }
        case FAILED -> {
          if (!s.sent) {
            throw new AssertionError(who + " FAILED without being sent: " + fe.getMessage());
          }
          if (fe.getCause() == null) {
            throw new AssertionError(who + " FAILED without a cause");
          }
          boolean timedOut = s.answeredAt - s.call.startedAt >= config.callTimeout().toNanos();
          if (!s.call.failed && !timedOut && !extractBreaks(s.in) && !ownerClosed && !skewed) {
            throw new AssertionError(who + " FAILED though its call succeeded on time: " + fe.getMessage());
          }
        }
        case TIMEOUT -> {
          if (s.sent || s.deadline == Long.MAX_VALUE) {
            throw new AssertionError(who + " TIMEOUT but sent " + s.sent + ", deadline " + s.deadline);
          }
          if (!skewed && s.answeredAt != s.deadline) {
            throw new AssertionError(who + " TIMEOUT at " + s.answeredAt + ", its deadline " + s.deadline);
          }
        }
        case REJECTED -> {
          if (s.sent || !s.roomFull) {
            throw new AssertionError(who + " REJECTED with room: " + fe.getMessage());
          }
          if (s.answeredAt != s.submittedAt) {
            throw new AssertionError(who + " REJECTED later than at once");
          }
        }
        case CLOSED -> {
          if (s.sent || !closing || s.answeredAt < closingAt) {
            throw new AssertionError(who + " CLOSED but sent " + s.sent + " / closing " + closing);
          }
        }
        default -> throw new AssertionError(who + " unexpected " + kind);
      }
    }
  }
}
