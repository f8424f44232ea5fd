package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.ferry.Dispatch;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Deterministic simulation of the real per-key engine: a seeded scheduler picks, step by step, one
 * enabled event (a submit, a call completing or failing, time moving to the next timer, close or
 * drain) and the engine's invariants are checked after every step, the guarantees at every call.
 * The events are those of the Spin model (formal/PerKey.pml), over the real code.
 *
 * <p>Both dispatch modes run (ADR 0011): in the adaptive one the limit is learned from the calls'
 * virtual latencies, so it changes under the engine as the run goes, and every call is checked
 * against the limit in force when it started (P1); the engine's own audit checks work conservation
 * (P2) and the idle keys' bound (P3) after every step.
 *
 * <p>Thousands of seeds run in a few seconds. A failure prints its seed; replay one with
 * {@code -Dferry.sim.seed=N}, or run more with {@code -Dferry.sim.seeds=N}.
 */
class SimulationTest {
  record In(int id, int key, int weight) {}

  @Test
  void perKeyEngineUnderRandomInterleavings() {
    String one = System.getProperty("ferry.sim.seed");
    int seeds = Integer.getInteger("ferry.sim.seeds", 3000);
    long first = one != null ? Long.parseLong(one) : 1;
    long last = one != null ? first : seeds;
    Set<Integer> limitsSeen = new HashSet<>();
    for (long seed = first; seed <= last; seed++) {
      try {
        PerKeySim sim = new PerKeySim(seed);
        sim.run();
        limitsSeen.addAll(sim.limitsSeen);
      } catch (AssertionError e) {
        throw new AssertionError("seed " + seed + " (replay with -Dferry.sim.seed=" + seed + "): " + e.getMessage(), e);
      }
    }
    if (one == null) {
      assertTrue(limitsSeen.size() >= 2, "the learned limit never moved: " + limitsSeen);
    }
  }

  private static final class PerKeySim {
    final Random rnd;
    final VirtualLoop loop = new VirtualLoop();
    final PerKeyConfig config;
    final PerKeyFerry<Integer, In, Set<Integer>, Integer> ferry;
    final List<Call> open = new ArrayList<>();
    final Set<Integer> openKeys = new HashSet<>();
    final Map<Integer, Integer> lastSent = new HashMap<>();
    final Set<Integer> sent = new HashSet<>();
    final Map<Integer, Long> deadlines = new HashMap<>();
    final List<Future<Integer>> outcomes = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    /** Keys whose hand-off has begun and not finished: none of their calls may start here. */
    final Set<Integer> handingOff = new HashSet<>();
    final Set<Integer> forwardedIds = new HashSet<>();
    /** Learned limits in force when calls started. */
    final Set<Integer> limitsSeen = new HashSet<>();

    record Call(int key, List<In> inputs, Promise<Set<Integer>> promise) {}

    PerKeySim(long seed) {
      rnd = new Random(seed);
      boolean adaptive = rnd.nextBoolean();
      PerKeyConfig.Builder b = PerKeyConfig.builder()
          .dispatch(adaptive ? Dispatch.ADAPTIVE : Dispatch.FIXED_SLOTS)
          .maxInFlightBatches(1 + rnd.nextInt(adaptive ? 4 : 2))
          .maxBatchSize(1 + rnd.nextInt(3))
          .maxQueueing(2 + rnd.nextInt(6))
          .directIdleKeys(rnd.nextBoolean())
          .callTimeout(Duration.ofMillis(5 + rnd.nextInt(20)));
      if (rnd.nextBoolean()) {
        b.maxBatchWeight(2 + rnd.nextInt(3));
      }
      if (rnd.nextInt(4) == 0) {
        b.maxBatchDelay(Duration.ofMillis(1 + rnd.nextInt(3)));
      }
      if (adaptive && rnd.nextInt(4) == 0) {
        b.pinnedLimit(1);
      }
      config = b.build();
      ferry = new PerKeyFerry<>(loop, config, In::key, In::weight, null, this::call, (in, ok) -> {
        if (!ok.contains(in.id)) {
          throw FerryException.inputRejected("no");
        }
        return in.id;
      });
    }

    Future<Set<Integer>> call(Integer key, List<In> inputs) {
      if (handingOff.contains(key)) {
        violations.add("a call for key " + key + " started during its hand-off");
      }
      if (!openKeys.add(key)) {
        violations.add("two calls in flight for key " + key);
      }
      PerKeyEngine<Integer, In> engine = ferry.engine();
      if (config.dispatch() == Dispatch.ADAPTIVE) {
        if (engine.inFlight() > engine.callLimitNow()) {
          violations.add(engine.inFlight() + " calls in flight over the limit in force " + engine.callLimitNow());
        }
        if (config.pinnedLimit() == 0) {
          limitsSeen.add(engine.callLimitNow());
        }
      } else if (engine.batchesInFlight() > config.maxInFlightBatches()
          || engine.inFlight() - engine.batchesInFlight() > config.maxInFlightBatches()) {
        violations.add("slots exceeded: " + engine.batchesInFlight() + " batch calls, "
            + (engine.inFlight() - engine.batchesInFlight()) + " direct");
      }
      if (inputs.size() > config.maxBatchSize()) {
        violations.add("batch of " + inputs.size());
      }
      if (inputs.size() > 1 && inputs.stream().mapToLong(In::weight).sum() > config.maxBatchWeight()) {
        violations.add("batch too heavy");
      }
      for (In in : inputs) {
        if (in.key != key) {
          violations.add("mixed keys");
        }
        if (!sent.add(in.id)) {
          violations.add("input " + in.id + " sent twice");
        }
        if (in.id <= lastSent.getOrDefault(key, -1)) {
          violations.add("input " + in.id + " overtook " + lastSent.get(key));
        }
        lastSent.put(key, in.id);
        Long deadline = deadlines.get(in.id);
        if (deadline != null && deadline <= loop.nanoTime()) {
          violations.add("input " + in.id + " sent after its deadline");
        }
      }
      Promise<Set<Integer>> p = Promise.promise();
      open.add(new Call(key, inputs, p));
      return p.future();
    }

    void step() {
      int choice = rnd.nextInt(10);
      if (choice < 5) {
        int id = outcomes.size();
        In in = new In(id, rnd.nextInt(3), 1 + rnd.nextInt(2));
        if (rnd.nextInt(3) == 0) {
          long ms = 1 + rnd.nextInt(10);
          deadlines.put(id, loop.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms));
          outcomes.add(ferry.submit(in, Duration.ofMillis(ms)));
        } else {
          outcomes.add(ferry.submit(in));
        }
      } else if (choice < 8 && !open.isEmpty()) {
        completeOne();
      } else if (choice == 8 && rnd.nextInt(4) == 0) {
        int key = rnd.nextInt(3);
        if (handingOff.add(key)) {
          // The new owner answers every forwarded input at once.
          ferry.handOff(key, (in, remaining) -> {
            forwardedIds.add(in.id);
            if (sent.contains(in.id)) {
              violations.add("input " + in.id + " forwarded after being sent");
            }
            return Future.succeededFuture(in.id);
          })
              .onComplete(done -> handingOff.remove(key));
        }
      } else if (choice == 8) {
        long next = loop.nextTimerAt();
        if (next >= 0) {
          loop.advance(next - loop.nanoTime());
        }
      } else {
        loop.advance(TimeUnit.MICROSECONDS.toNanos(rnd.nextInt(2000)));
      }
    }

    void completeOne() {
      Call c = open.remove(rnd.nextInt(open.size()));
      openKeys.remove(c.key);
      if (rnd.nextInt(5) == 0) {
        c.promise.fail("down");
      } else {
        Set<Integer> ok = new HashSet<>();
        c.inputs.forEach(in -> {
          if (rnd.nextInt(6) != 0) {
            ok.add(in.id);
          }
        });
        c.promise.complete(ok);
      }
    }

    void check() {
      loop.runPending();
      String broken = ferry.engine().brokenInvariant();
      if (broken != null) {
        violations.add(broken);
      }
      if (!violations.isEmpty()) {
        fail(violations.get(0));
      }
    }

    void run() {
      int steps = 20 + rnd.nextInt(120);
      int closeAt = rnd.nextInt(steps + 20);
      boolean drain = rnd.nextBoolean();
      Future<Void> closed = null;
      for (int i = 0; i < steps; i++) {
        if (i == closeAt) {
          closed = drain ? ferry.drain(Duration.ofMillis(rnd.nextInt(10))) : ferry.close();
        }
        step();
        check();
      }
      if (closed == null) {
        closed = drain ? ferry.drain(Duration.ofMillis(rnd.nextInt(10))) : ferry.close();
      }
      check();
      // Let everything finish: calls complete, timers fire.
      for (int guard = 0; guard < 10_000 && (!open.isEmpty() || loop.nextTimerAt() >= 0); guard++) {
        if (!open.isEmpty() && rnd.nextBoolean()) {
          completeOne();
        } else if (loop.nextTimerAt() >= 0) {
          loop.advance(loop.nextTimerAt() - loop.nanoTime());
        }
        check();
      }
      assertTrue(closed.succeeded(), "close did not complete");
      assertEquals(0, ferry.metrics().activeLanes(), "lanes left");
      for (int id = 0; id < outcomes.size(); id++) {
        Future<Integer> f = outcomes.get(id);
        assertTrue(f.isComplete(), "input " + id + " was stranded");
        if (f.failed()) {
          FerryError kind = ((FerryException) f.cause()).kind();
          boolean wasSent = sent.contains(id);
          boolean expectSent = kind == FerryError.FAILED || kind == FerryError.INPUT_REJECTED;
          assertEquals(expectSent, wasSent, "input " + id + " failed with " + kind + (wasSent ? " after" : " without") + " being sent");
        } else {
          assertTrue(sent.contains(id) || forwardedIds.contains(id), "success without being sent: " + id);
        }
      }
    }
  }
}
