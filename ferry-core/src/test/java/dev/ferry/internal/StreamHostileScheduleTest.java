package dev.ferry.internal;

import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.testing.HostileFutures;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A hostile scheduler against the two stream ferries, {@code Ferry.make} ({@link StreamFerry} over
 * {@link StreamEngine}) and {@code Ferry.keyed} ({@link KeyedFerry}), in virtual time: the
 * counterpart of {@link PerKeyHostileScheduleTest}. A stream ferry has one dispatch rule, the fixed
 * count of call slots ({@code maxInFlightBatches}); the learned call limit is per-key only.
 *
 * <p>Each run draws a config (batch count and weight bounds, slots, room, batch delay, call and
 * drain timeouts) and, step by step, submits (bursts, heavy inputs, deadlines, inputs or keys the
 * ferry must refuse), completes calls out of order, late (after their call timeout), never, twice,
 * inline (inside the call), or makes the call throw, return null, or return a Future that throws
 * when listened to; lets {@code extract} throw or answer null and callers' callbacks throw or
 * submit again; answers keyed lookups with missing keys, null values, keys nobody asked for, a null
 * map or a map that throws on reading; stalls the loop (time moves on while its timers wait, as
 * when a handler hogs it) right before a completion or a submit; and closes, drains or closes the
 * owner at a random moment. After every step and at every call it checks, from the outside:
 *
 * <ul>
 *   <li>batches within {@code maxBatchSize} and {@code maxBatchWeight} (one heavier input alone),
 *       never empty; for keyed, distinct keys;
 *   <li>calls open never above {@code maxInFlightBatches}; none started once the ferry is closed;
 *   <li>order: inputs (keyed: keys, by when they were first asked for) leave in arrival order, a
 *       batch as full as the bounds allow, nothing left behind an input sent after it;
 *   <li>no starvation: with a slot free, nothing waits that is due (no delay, draining, a full
 *       batch, or the oldest waited the delay);
 *   <li>the metrics agree with what the test knows waits and is out;
 *   <li>every input (keyed: every caller) gets exactly one answer, its own, of a kind that fits
 *       what happened to it: TIMEOUT only for what had not left by its deadline, and never a value
 *       for a caller whose deadline passed before its input left; REJECTED only when the room was
 *       full, at once; CLOSED only for what was never sent, after the close began; FAILED with a
 *       cause, only when its call failed, timed out or its outcome could not be read.
 * </ul>
 *
 * Rerun one seed with {@code -Dferry.hostile.seed=N}; run more with {@code -Dferry.hostile.seeds=N}.
 */
class StreamHostileScheduleTest {
  static final long MS = 1_000_000L;

  static List<Long> seeds() {
    return HostileSeeds.of(25);
  }

  @ParameterizedTest(name = "make, seed {0}")
  @MethodSource("seeds")
  void makeKeepsItsGuaranteesOnHostileSchedules(long seed) {
    run(new MakeRun(seed), seed);
  }

  @ParameterizedTest(name = "keyed, seed {0}")
  @MethodSource("seeds")
  void keyedKeepsItsGuaranteesOnHostileSchedules(long seed) {
    run(new KeyedRun(seed), seed);
  }

  private static void run(Run run, long seed) {
    try {
      run.run();
    } catch (Throwable e) {
      throw new AssertionError(run.name() + " seed " + seed + " (" + run.config + "; rerun with -Dferry.hostile.seed="
          + seed + "): " + e.getMessage(), e);
    }
  }

  /** One call as the downstream sees it. */
  static final class Call {
    final int no;
    final List<Object> inputs;
    final long startedAt;
    Promise<Map<Object, String>> promise;
    boolean open = true;
    boolean never;
    boolean failed;
    /** Completed at or after its call timeout with no stall in between: the ferry must have failed it. */
    boolean late;
    /** The loop stalled while the call was open: a completion may beat its overdue timeout timer. */
    boolean stalled;
    boolean again;
    boolean nullMap;
    Object brokenKey;
    Handler<AsyncResult<Map<Object, String>>> handler;
    final Set<Object> missing = new HashSet<>();
    final Set<Object> nullValue = new HashSet<>();

    Call(int no, List<Object> inputs, long startedAt) {
      this.no = no;
      this.inputs = inputs;
      this.startedAt = startedAt;
    }
  }

  /** What both runs share: the config, the downstream's calls, the schedule and the end. */
  abstract static class Run {
    final long seed;
    final Random rnd;
    final VirtualLoop vloop = new VirtualLoop();
    final FerryConfig config;
    final boolean nested;
    final boolean hostileFns;
    final boolean stalls;
    final long delayNanos;
    final List<Call> calls = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    int openCalls;
    boolean closing;
    long closingAt = Long.MAX_VALUE;
    /** When the ferry stops sending: at the close, at the drain's end. */
    long sendsEndAt = Long.MAX_VALUE;
    boolean ownerClosed;
    boolean stalled;
    Future<Void> closed;
    int nestedSubmits;
    boolean registering;

    Run(long seed, boolean keyed) {
      this.seed = seed;
      rnd = new Random(seed * 0x9E3779B97F4A7C15L + (keyed ? 29 : 23));
      nested = rnd.nextBoolean();
      hostileFns = rnd.nextBoolean();
      stalls = rnd.nextInt(3) != 0;
      FerryConfig.Builder b = FerryConfig.builder()
          .maxInFlightBatches(1 + rnd.nextInt(4))
          .maxBatchSize(1 + rnd.nextInt(6))
          .maxQueueing(rnd.nextInt(3) == 0 ? 10_000 : 2 + rnd.nextInt(30))
          .callTimeout(Duration.ofMillis(rnd.nextBoolean() ? 30_000 : 5 + rnd.nextInt(40)))
          .drainTimeout(Duration.ofMillis(rnd.nextInt(60)));
      if (rnd.nextBoolean()) {
        b.maxBatchWeight(keyed ? 1 + rnd.nextInt(5) : 3 + rnd.nextInt(12));
      }
      if (rnd.nextInt(4) == 0) {
        b.maxQueuedWeight(keyed ? 1 + rnd.nextInt(20) : 10 + rnd.nextInt(100));
      }
      if (rnd.nextInt(3) == 0) {
        b.maxBatchDelay(Duration.ofMillis(1 + rnd.nextInt(4)));
      }
      config = b.build();
      delayNanos = config.maxBatchDelay().toNanos();
    }

    abstract String name();

    abstract void submit();

    /** A caller's callback submits again. */
    abstract void submitAgain();

    /** Checks one call as it starts; returns the result the downstream will answer. */
    abstract Map<Object, String> started(Call c);

    /** The test's view after every step: what waits (count, weight, oldest arrival), checked against the ferry. */
    abstract void checkState();

    abstract void checkOutcomes();

    abstract dev.ferry.FerryMetrics metrics();

    abstract Future<Void> close();

    abstract Future<Void> drain(Duration timeout);

    void violation(String what) {
      violations.add("t=" + vloop.nowMillis() + "ms: " + what);
    }

    long now() {
      return vloop.nanoTime();
    }

    // ------------------------------------------------------------ the downstream

    @SuppressWarnings("unchecked")
    Future<Map<Object, String>> call(List<?> inputs) {
      Call c = new Call(calls.size(), List.copyOf(inputs), now());
      calls.add(c);
      openCalls++;
      if (openCalls > config.maxInFlightBatches()) {
        violation(openCalls + " calls open, maxInFlightBatches " + config.maxInFlightBatches());
      }
      if (c.inputs.isEmpty()) {
        violation("an empty batch");
      }
      if (c.inputs.size() > config.maxBatchSize()) {
        violation("a batch of " + c.inputs.size() + " over maxBatchSize");
      }
      if (now() > sendsEndAt) {
        violation("call " + c.no + " started after the ferry stopped sending");
      }
      Map<Object, String> result = started(c);
      c.promise = Promise.promise();
      if (nested) {
        int r = rnd.nextInt(20);
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
          complete(c, result, rnd.nextInt(3) == 0);
          return c.promise.future();
        }
      }
      int r = rnd.nextInt(40);
      if (r == 0) {
        // Ends the call at once, failed; a completion that comes later is ignored.
        c.failed = true;
        closeCall(c);
        c.again = true;
        return HostileFutures.throwingOnListen(c.promise.future(), new IllegalStateException("cannot listen"));
      }
      c.never = r == 1;
      if (r < 6) {
        Future<Map<Object, String>> real = c.promise.future();
        return (Future<Map<Object, String>>) java.lang.reflect.Proxy.newProxyInstance(Future.class.getClassLoader(),
            new Class<?>[] {Future.class}, (proxy, method, args) -> {
              if (method.getName().equals("onComplete") && args != null && args.length == 1) {
                c.handler = (Handler<AsyncResult<Map<Object, String>>>) args[0];
                real.onComplete(c.handler);
                return proxy;
              }
              // A keyed lookup's Future is composed: listened to through a function.
              Object out = method.invoke(real, args);
              return out;
            });
      }
      return c.promise.future();
    }

    void closeCall(Call c) {
      if (!c.open) {
        return;
      }
      c.open = false;
      openCalls--;
    }

    void complete(Call c, Map<Object, String> result, boolean fail) {
      if (!c.open) {
        if (c.again) {
          // After the completion the ferry took as the call's end: ignored.
          c.promise.tryComplete(result);
        }
        return;
      }
      c.late = now() - c.startedAt >= config.callTimeout().toNanos() && !c.stalled;
      c.failed = fail;
      closeCall(c);
      if (fail) {
        c.promise.fail(new IllegalStateException("downstream failed call " + c.no));
      } else {
        c.promise.complete(result);
      }
      c.promise.tryComplete(Map.of());
    }

    final Map<Integer, Map<Object, String>> results = new HashMap<>();

    void completeSome() {
      List<Call> open = calls.stream().filter(c -> c.open && !c.never).toList();
      if (open.isEmpty()) {
        return;
      }
      boolean burst = rnd.nextInt(8) == 0;
      List<Call> pick = new ArrayList<>(open);
      Collections.shuffle(pick, rnd);
      for (Call c : pick.subList(0, burst ? pick.size() : 1)) {
        complete(c, results.get(c.no), burst || rnd.nextInt(8) == 0);
      }
    }

    /** Calls a kept handler again, failed: before the call's real completion, or after. */
    void completeAgain() {
      List<Call> kept = calls.stream().filter(c -> c.handler != null && !c.again).toList();
      if (kept.isEmpty()) {
        completeSome();
        return;
      }
      Call c = kept.get(rnd.nextInt(kept.size()));
      c.again = true;
      if (c.open) {
        c.late = now() - c.startedAt >= config.callTimeout().toNanos() && !c.stalled;
        c.failed = true;
        closeCall(c);
      }
      c.handler.handle(Future.failedFuture(new IllegalStateException("call " + c.no + " completed again")));
    }

    // ------------------------------------------------------------ steps

    void step(int i, int closeAt, int endMode) {
      if (i == closeAt) {
        beginEnd(endMode);
      }
      int r = rnd.nextInt(10);
      if (stalls && rnd.nextInt(12) == 0) {
        // The loop is busy elsewhere: time moves on, timers wait; then a completion or a submit
        // reaches it before the timers that fell due meanwhile.
        vloop.stallMillis(1 + rnd.nextInt(rnd.nextBoolean() ? 5 : 60));
        stalled = true;
        for (Call c : calls) {
          if (c.open) {
            c.stalled = true;
          }
        }
        r = rnd.nextBoolean() ? 0 : 5;
      }
      if (r < 4) {
        int burst = rnd.nextInt(6) == 0 ? 1 + rnd.nextInt(12) : 1;
        for (int b = 0; b < burst; b++) {
          submit();
        }
      } else if (r < 8) {
        if (rnd.nextInt(6) == 0) {
          completeAgain();
        } else {
          completeSome();
        }
      } else {
        int a = rnd.nextInt(10);
        long nanos = a < 3 ? 0 : a < 8 ? rnd.nextInt(3_000) * 1_000L : a < 9 ? rnd.nextInt(60) * MS
            : Math.max(0, vloop.nextTimerAt() - now());
        vloop.advance(nanos);
      }
    }

    void beginEnd(int endMode) {
      if (closing) {
        return;
      }
      closing = true;
      closingAt = now();
      switch (endMode) {
        case 0 -> {
          sendsEndAt = now();
          closed = close();
        }
        case 1 -> {
          long ms = rnd.nextInt(50);
          sendsEndAt = now() + ms * MS;
          closed = drain(Duration.ofMillis(ms));
        }
        default -> {
          ownerClosed = true;
          sendsEndAt = now() + config.drainTimeout().toNanos();
          int[] done = vloop.closeOwner();
          closed = drain(Duration.ofDays(1)); // the ferry's own Future for its close
          if (done.length != 1) {
            violation("no owner hook");
          }
        }
      }
    }

    /** Whether the ferry may still send: open, or draining before its end. */
    boolean sending() {
      return now() < sendsEndAt || !closing;
    }

    boolean callsForgotten() {
      return ownerClosed && closed != null && closed.isComplete();
    }

    /** Quiescent: pending tasks and the timers that fell due (late, after a stall) have run. */
    void check() {
      vloop.advance(0);
      var m = metrics();
      if (!callsForgotten() && m.inFlightBatches() != openCalls) {
        violation("metrics in flight " + m.inFlightBatches() + ", the test counts " + openCalls);
      }
      if (m.activeLanes() != 0 || m.directCalls() != 0) {
        violation("a stream ferry reports lanes or direct calls: " + m);
      }
      checkState();
      if (!violations.isEmpty()) {
        throw new AssertionError(violations.get(0) + (violations.size() > 1 ? " (+" + (violations.size() - 1) + " more)" : ""));
      }
    }

    /** No starvation: with a slot free, what waits is not due. */
    void checkNotDue(int waiting, long weight, long oldestArrival) {
      if (waiting == 0 || openCalls >= config.maxInFlightBatches() || callsForgotten()) {
        return;
      }
      if (!sending()) {
        violation(waiting + " inputs still wait after the ferry stopped sending");
        return;
      }
      boolean due = delayNanos == 0 || closing || waiting >= config.maxBatchSize()
          || weight >= config.maxBatchWeight() || now() - oldestArrival >= delayNanos;
      if (due) {
        violation(waiting + " inputs (weight " + weight + ", oldest waited " + (now() - oldestArrival)
            + " ns) are due while " + openCalls + " of " + config.maxInFlightBatches() + " slots are busy");
      }
    }

    void run() {
      int steps = 150 + rnd.nextInt(350);
      int closeAt = rnd.nextInt(3) == 0 ? rnd.nextInt(steps) : steps - rnd.nextInt(steps / 5);
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
          complete(c, results.get(c.no), rnd.nextInt(4) == 0);
        } else if (vloop.nextTimerAt() >= 0) {
          vloop.advance(vloop.nextTimerAt() - now());
        } else if (!open.isEmpty()) {
          complete(open.get(0), results.get(open.get(0).no), false);
        }
        check();
      }
      if (!closed.isComplete()) {
        throw new AssertionError("the close never completed");
      }
      for (Call c : calls) {
        if (c.open || c.again) {
          complete(c, results.get(c.no), false); // given up at the owner's close, or ended already: ignored
        }
      }
      vloop.advance(0);
      if (!violations.isEmpty()) {
        throw new AssertionError(violations.get(0));
      }
      var m = metrics();
      if (m.queuedInputs() != 0 || m.inFlightBatches() != 0 || m.queuedWeight() != 0) {
        throw new AssertionError("left behind: " + m);
      }
      if (vloop.liveTimers() != 0) {
        throw new AssertionError(vloop.liveTimers() + " timers left behind");
      }
      checkOutcomes();
    }

    /** Called back with an answer: nests a submit now and then, and throws now and then. */
    void afterAnswer() {
      if (nested && nestedSubmits < 200 && rnd.nextInt(6) == 0) {
        nestedSubmits++;
        submitAgain();
      }
      if (hostileFns && !registering && rnd.nextInt(10) == 0) {
        throw new IllegalStateException("a caller's callback threw");
      }
    }
  }

  // ==================================================================== make

  record In(int id, long weight) {}

  static final class Sub {
    final In in;
    long deadline = Long.MAX_VALUE;
    long submittedAt;
    Future<String> future;
    int answers;
    long answeredAt;
    boolean sent;
    Call call;
    boolean roomFull;
    boolean bad;

    Sub(In in) {
      this.in = in;
    }
  }

  static final class MakeRun extends Run {
    final StreamFerry<In, Map<Object, String>, String> ferry;
    final List<Sub> subs = new ArrayList<>();
    /** Accepted, not sent and not answered, in arrival order. */
    final LinkedHashMap<Integer, Sub> waiting = new LinkedHashMap<>();
    int lastSent = -1;

    MakeRun(long seed) {
      super(seed, false);
      ferry = new StreamFerry<>(vloop, config, this::weigh, this::call, this::extract);
    }

    @Override
    String name() {
      return "make" + (nested ? ", nested" : "") + (hostileFns ? ", hostile functions" : "") + (stalls ? ", stalls" : "");
    }

    @Override
    void submitAgain() {
      submit(); // inside the ferry's answering
    }

    long weigh(In in) {
      if (hostileFns && in.id % 53 == 11) {
        throw new IllegalStateException("weigh broke on " + in.id);
      }
      return hostileFns && in.id % 59 == 17 ? -1 : in.weight;
    }

    boolean extractBreaks(In in) {
      return hostileFns && (in.id % 31 == 5 || in.id % 37 == 9);
    }

    boolean extractsNull(In in) {
      return hostileFns && in.id % 41 == 3;
    }

    String extract(In in, Map<Object, String> result) {
      if (hostileFns && in.id % 31 == 5) {
        throw new IllegalArgumentException("extract broke on " + in.id);
      }
      if (hostileFns && in.id % 37 == 9) {
        throw new AssertionError("extract threw an Error on " + in.id);
      }
      if (extractsNull(in)) {
        return null;
      }
      String v = result.get(in.id);
      if (v == null) {
        throw FerryException.inputRejected("no " + in.id);
      }
      return v;
    }

    @Override
    void submit() {
      int id = subs.size();
      long weight = rnd.nextInt(10) == 0 ? 1 + rnd.nextInt(40) : rnd.nextInt(5);
      Sub s = new Sub(new In(id, weight));
      subs.add(s);
      s.submittedAt = now();
      s.bad = hostileFns && (id % 53 == 11 || id % 59 == 17);
      long[] held = ferry.expiredStillHeld();
      long waitingWeight = waiting.values().stream().mapToLong(w -> w.in.weight).sum();
      s.roomFull = waiting.size() + held[0] >= config.maxQueueing()
          || weight > config.maxQueuedWeight() - waitingWeight - held[1];
      if (!s.bad) {
        waiting.put(id, s); // tentatively: taken back if it is answered at once
      }
      long timeout = rnd.nextInt(4) == 0 ? (1 + rnd.nextInt(30)) * MS : 0;
      if (timeout > 0) {
        s.deadline = now() + timeout;
        s.future = ferry.submit(s.in, Duration.ofNanos(timeout));
      } else {
        s.future = ferry.submit(s.in);
      }
      boolean was = registering;
      registering = true;
      s.future.onComplete(ar -> answered(s));
      registering = was;
    }

    void answered(Sub s) {
      s.answers++;
      s.answeredAt = now();
      if (s.answers > 1) {
        violation(s.in + " answered twice");
      }
      if (!s.sent) {
        waiting.remove(s.in.id);
      }
      afterAnswer();
    }

    @Override
    Map<Object, String> started(Call c) {
      long weight = 0;
      int first = -1;
      Map<Object, String> result = new HashMap<>();
      for (Object o : c.inputs) {
        In in = (In) o;
        weight += in.weight;
        Sub s = in.id < subs.size() ? subs.get(in.id) : null;
        if (s == null || s.in != in) {
          violation("an unknown input sent: " + in);
          continue;
        }
        if (s.sent) {
          violation(in + " sent twice");
        }
        if (s.answers > 0) {
          violation(in + " sent after it was answered");
        }
        if (s.deadline <= now()) {
          violation(in + " sent at or after its deadline");
        }
        if (in.id <= lastSent) {
          violation(in + " sent after input " + lastSent + ": out of arrival order");
        }
        if (first < 0) {
          first = in.id;
        }
        lastSent = in.id;
        s.sent = true;
        s.call = c;
        waiting.remove(in.id);
        if (rnd.nextInt(8) != 0) {
          result.put(in.id, "v" + in.id);
        }
      }
      if (c.inputs.size() > 1 && weight > config.maxBatchWeight()) {
        violation("a batch of weight " + weight + " over maxBatchWeight");
      }
      for (Sub w : waiting.values()) {
        if (w.in.id < lastSent && w.deadline > now()) {
          violation(w.in + " left waiting behind " + lastSent + ", sent");
        }
        if (!nested && w.deadline > now() && c.inputs.size() < config.maxBatchSize()
            && w.in.weight <= config.maxBatchWeight() - weight) {
          violation("batch " + c.inputs + " left " + w.in + " behind though it fitted");
        }
        break;
      }
      results.put(c.no, result);
      return result;
    }

    @Override
    void checkState() {
      var m = ferry.metrics();
      long weight = waiting.values().stream().mapToLong(w -> w.in.weight).sum();
      if (m.queuedInputs() != waiting.size() || m.queuedWeight() != weight) {
        violation("metrics queued " + m.queuedInputs() + "/" + m.queuedWeight() + ", the test counts "
            + waiting.size() + "/" + weight);
      }
      long oldest = waiting.values().stream().mapToLong(w -> w.submittedAt).min().orElse(Long.MAX_VALUE);
      checkNotDue(waiting.size(), weight, oldest);
    }

    @Override
    dev.ferry.FerryMetrics metrics() {
      return ferry.metrics();
    }

    @Override
    Future<Void> close() {
      return ferry.close();
    }

    @Override
    Future<Void> drain(Duration timeout) {
      return ferry.drain(timeout);
    }

    @Override
    void checkOutcomes() {
      for (Sub s : subs) {
        String who = s.in + (s.call == null ? "" : " (call " + s.call.no + ")");
        if (s.answers != 1) {
          throw new AssertionError(who + " answered " + s.answers + " times");
        }
        Future<String> f = s.future;
        if (f.succeeded()) {
          if (!s.sent || s.call.failed || s.call.late || extractBreaks(s.in)) {
            throw new AssertionError(who + " succeeded with " + f.result() + " but sent " + s.sent);
          }
          String expected = extractsNull(s.in) ? null : results.get(s.call.no).get(s.in.id);
          if (expected == null && !extractsNull(s.in)) {
            throw new AssertionError(who + " succeeded though the downstream left it out");
          }
          if (!java.util.Objects.equals(expected, f.result())) {
            throw new AssertionError(who + " got " + f.result() + ", not its own outcome " + expected);
          }
          continue;
        }
        if (!(f.cause() instanceof FerryException fe)) {
          throw new AssertionError(who + " failed with a non-FerryException " + f.cause());
        }
        switch (fe.kind()) {
          case BAD_INPUT -> {
            if (!s.bad) {
              throw new AssertionError(who + " BAD_INPUT: " + fe.getMessage());
            }
          }
          case INPUT_REJECTED -> {
            if (!s.sent || s.call.failed || s.call.late || extractBreaks(s.in)
                || results.get(s.call.no).containsKey(s.in.id)) {
              throw new AssertionError(who + " INPUT_REJECTED unexpectedly: " + fe.getMessage());
            }
          }
          case FAILED -> {
            if (!s.sent || fe.getCause() == null) {
              throw new AssertionError(who + " FAILED, sent " + s.sent + ", cause " + fe.getCause());
            }
            boolean timedOut = s.answeredAt - s.call.startedAt >= config.callTimeout().toNanos();
            if (!s.call.failed && !timedOut && !extractBreaks(s.in) && !ownerClosed) {
              throw new AssertionError(who + " FAILED though its call succeeded in time: " + fe.getMessage());
            }
          }
          case TIMEOUT -> {
            if (s.sent || s.deadline == Long.MAX_VALUE || s.answeredAt < s.deadline
                || (!stalled && s.answeredAt != s.deadline)) {
              throw new AssertionError(who + " TIMEOUT at " + s.answeredAt + ", deadline " + s.deadline + ", sent " + s.sent);
            }
          }
          case REJECTED -> {
            if (s.sent || !s.roomFull || s.answeredAt != s.submittedAt) {
              throw new AssertionError(who + " REJECTED with room, or later than at once: " + fe.getMessage());
            }
          }
          case CLOSED -> {
            if (s.sent || !closing || s.answeredAt < closingAt) {
              throw new AssertionError(who + " CLOSED but sent " + s.sent + " / closing " + closing);
            }
          }
          default -> throw new AssertionError(who + " unexpected " + fe.kind());
        }
      }
    }
  }

  // ==================================================================== keyed

  /** A key; a brittle one's hashCode throws, so the ferry must refuse it. */
  static final class Key {
    final String name;
    final boolean brittle;

    Key(String name, boolean brittle) {
      this.name = name;
      this.brittle = brittle;
    }

    @Override
    public int hashCode() {
      if (brittle) {
        throw new IllegalStateException("brittle key " + name);
      }
      return name.hashCode();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && k.name.equals(name);
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** One entry of a key while it waits: the callers that share it. */
  static final class Gen {
    final String key;
    final long seq;
    final long createdAt;
    final List<KSub> callers = new ArrayList<>();
    boolean sent;

    Gen(String key, long seq, long createdAt) {
      this.key = key;
      this.seq = seq;
      this.createdAt = createdAt;
    }
  }

  static final class KSub {
    final int id;
    final String key;
    Gen gen;
    boolean sharer;
    long deadline = Long.MAX_VALUE;
    long submittedAt;
    Future<Optional<String>> future;
    int answers;
    long answeredAt;
    boolean sent;
    long sentAt;
    Call call;
    boolean roomFull;
    boolean bad;

    KSub(int id, String key) {
      this.id = id;
      this.key = key;
    }

    @Override
    public String toString() {
      return key + "#" + id;
    }
  }

  static final class KeyedRun extends Run {
    final KeyedFerry<Key, String> ferry;
    final StreamFerry<?, ?, ?> queue;
    final int keys;
    final List<KSub> subs = new ArrayList<>();
    /** Each key's entry while it waits, by key; in creation order. */
    final LinkedHashMap<String, Gen> waiting = new LinkedHashMap<>();
    long genSeq;
    long lastSentSeq = -1;

    KeyedRun(long seed) {
      super(seed, true);
      keys = 1 + rnd.nextInt(rnd.nextBoolean() ? 4 : 30);
      ferry = new KeyedFerry<>(vloop, config, this::lookup);
      try {
        java.lang.reflect.Field f = KeyedFerry.class.getDeclaredField("queue");
        f.setAccessible(true);
        queue = (StreamFerry<?, ?, ?>) f.get(ferry);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException(e);
      }
    }

    @Override
    String name() {
      return "keyed, " + keys + " keys" + (nested ? ", nested" : "") + (hostileFns ? ", hostile functions" : "")
          + (stalls ? ", stalls" : "");
    }

    /**
     * A caller's callback submits again, from the loop's next task: inline, it could ask for a key
     * whose batch was taken in the transition whose answers are being given, before the call (an
     * effect after them) tells the test which keys left; the outside model cannot see that.
     */
    @Override
    void submitAgain() {
      vloop.execute(this::submit);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    Future<Map<Key, String>> lookup(List<Key> keys) {
      return (Future) call(keys);
    }

    @Override
    void submit() {
      int id = subs.size();
      String name = "k" + (rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(keys));
      KSub s = new KSub(id, name);
      subs.add(s);
      s.submittedAt = now();
      s.bad = hostileFns && id % 29 == 7;
      Key key = s.bad && id % 2 == 0 ? null : new Key(name, s.bad);
      long[] held = queue.expiredStillHeld();
      int sharing = 0;
      for (Gen g : waiting.values()) {
        for (KSub c : g.callers) {
          if (c.sharer) {
            sharing++;
          }
        }
      }
      Gen gen = waiting.get(name);
      s.roomFull = sharing + waiting.size() + held[0] >= config.maxQueueing()
          || (gen == null && 1 > config.maxQueuedWeight() - waiting.size() - held[1]);
      if (!s.bad) {
        // Tentatively: taken back if it is answered at once.
        if (gen == null) {
          gen = new Gen(name, genSeq++, now());
          waiting.put(name, gen);
        } else {
          s.sharer = true;
        }
        s.gen = gen;
        gen.callers.add(s);
      }
      long timeout = rnd.nextInt(3) == 0 ? (1 + rnd.nextInt(30)) * MS : 0;
      if (timeout > 0) {
        s.deadline = now() + timeout;
        s.future = ferry.submit(key, Duration.ofNanos(timeout));
      } else {
        s.future = ferry.submit(key);
      }
      boolean was = registering;
      registering = true;
      s.future.onComplete(ar -> answered(s));
      registering = was;
    }

    void answered(KSub s) {
      s.answers++;
      s.answeredAt = now();
      if (s.answers > 1) {
        violation(s + " answered twice");
      }
      if (!s.sent && s.gen != null) {
        s.gen.callers.remove(s);
        if (s.gen.callers.isEmpty()) {
          waiting.remove(s.key, s.gen);
        }
      }
      afterAnswer();
    }

    @Override
    Map<Object, String> started(Call c) {
      Set<String> seen = new HashSet<>();
      Map<Object, String> result = new HashMap<>();
      long lastSeq = -1;
      if (c.inputs.size() > config.maxBatchWeight()) {
        violation("a batch of " + c.inputs.size() + " keys over maxBatchWeight (each key weighs 1)");
      }
      for (Object o : c.inputs) {
        Key k = (Key) o;
        if (!seen.add(k.name)) {
          violation("key " + k + " twice in call " + c.no);
          continue;
        }
        Gen g = waiting.remove(k.name);
        if (g == null) {
          violation("key " + k + " sent though no caller waits for it");
          continue;
        }
        if (g.callers.stream().allMatch(w -> w.deadline <= now())) {
          violation("key " + k + " sent though every caller's deadline had passed: " + g.callers);
        }
        if (g.seq <= lastSentSeq) {
          violation("key " + k + " sent out of the order it was first asked for");
        }
        lastSentSeq = g.seq;
        lastSeq = g.seq;
        g.sent = true;
        for (KSub w : g.callers) {
          w.sent = true;
          w.sentAt = now();
          w.call = c;
        }
        int r = rnd.nextInt(12);
        if (r == 0) {
          c.missing.add(k.name);
        } else if (r == 1) {
          c.nullValue.add(k.name);
          result.put(k, null);
        } else {
          result.put(k, "v" + k.name + "@" + c.no);
        }
      }
      result.put(new Key("nobody-asked", false), "stray");
      for (Gen w : waiting.values()) {
        boolean live = w.callers.stream().anyMatch(x -> x.deadline > now());
        if (live && w.seq < lastSeq) {
          violation("key " + w.key + " left waiting behind a key first asked for after it");
        }
        if (live && !nested && c.inputs.size() < Math.min(config.maxBatchSize(), config.maxBatchWeight())) {
          violation("call " + c.inputs + " left " + w.key + " behind though it fitted");
        }
        break;
      }
      int r = rnd.nextInt(30);
      if (r == 0) {
        c.nullMap = true;
        result = null;
      } else if (r == 1 && !c.inputs.isEmpty()) {
        Key broken = (Key) c.inputs.get(rnd.nextInt(c.inputs.size()));
        c.brokenKey = broken.name;
        result = new HashMap<>(result) {
          @Override
          public String get(Object key) {
            if (key.equals(broken)) {
              throw new IllegalStateException("the map broke on " + broken);
            }
            return super.get(key);
          }
        };
      }
      results.put(c.no, result);
      return result;
    }

    @Override
    void checkState() {
      var m = ferry.metrics();
      if (m.queuedInputs() != waiting.size()) {
        violation("metrics queued keys " + m.queuedInputs() + ", the test counts " + waiting.size());
      }
      long oldest = waiting.values().stream().mapToLong(g -> g.createdAt).min().orElse(Long.MAX_VALUE);
      checkNotDue(waiting.size(), waiting.size(), oldest);
    }

    @Override
    dev.ferry.FerryMetrics metrics() {
      return ferry.metrics();
    }

    @Override
    Future<Void> close() {
      return ferry.close();
    }

    @Override
    Future<Void> drain(Duration timeout) {
      return ferry.drain(timeout);
    }

    @Override
    void checkOutcomes() {
      for (KSub s : subs) {
        String who = s + (s.call == null ? "" : " (call " + s.call.no + ")");
        if (s.answers != 1) {
          throw new AssertionError(who + " answered " + s.answers + " times");
        }
        Future<Optional<String>> f = s.future;
        if (f.succeeded()) {
          if (!s.sent || s.call.failed || s.call.late || s.call.nullMap || s.key.equals(s.call.brokenKey)) {
            throw new AssertionError(who + " succeeded with " + f.result() + " but sent " + s.sent);
          }
          if (s.deadline <= s.sentAt) {
            throw new AssertionError(who + " got a value though its deadline passed before its key was sent");
          }
          Optional<String> expected = Optional.ofNullable(results.get(s.call.no).get(new Key(s.key, false)));
          if (!expected.equals(f.result())) {
            throw new AssertionError(who + " got " + f.result() + ", not its key's outcome " + expected);
          }
          continue;
        }
        if (!(f.cause() instanceof FerryException fe)) {
          throw new AssertionError(who + " failed with a non-FerryException " + f.cause());
        }
        FerryError kind = fe.kind();
        switch (kind) {
          case BAD_INPUT -> {
            if (!s.bad) {
              throw new AssertionError(who + " BAD_INPUT: " + fe.getMessage());
            }
          }
          case FAILED -> {
            if (!s.sent || fe.getCause() == null) {
              throw new AssertionError(who + " FAILED, sent " + s.sent + ", cause " + fe.getCause());
            }
            boolean timedOut = s.answeredAt - s.call.startedAt >= config.callTimeout().toNanos();
            if (!s.call.failed && !s.call.nullMap && !s.key.equals(s.call.brokenKey) && !timedOut && !ownerClosed) {
              throw new AssertionError(who + " FAILED though its call succeeded in time: " + fe.getMessage());
            }
          }
          case TIMEOUT -> {
            if (s.deadline == Long.MAX_VALUE || s.answeredAt < s.deadline || (s.sent && s.sentAt < s.deadline)
                || (!stalled && s.answeredAt != s.deadline)) {
              throw new AssertionError(who + " TIMEOUT at " + s.answeredAt + ", deadline " + s.deadline
                  + ", sent " + s.sent + " at " + s.sentAt);
            }
          }
          case REJECTED -> {
            if (s.sent || !s.roomFull || s.answeredAt != s.submittedAt) {
              throw new AssertionError(who + " REJECTED with room, or later than at once: " + fe.getMessage());
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
}
