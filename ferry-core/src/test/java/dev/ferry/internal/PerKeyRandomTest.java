package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.ferry.Dispatch;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.Seeds;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Thousands of inputs over many keys with random arrivals, call latencies, failures, deadlines,
 * configs and a close or drain, in virtual time. Guarantees 1-7 are checked on every recorded call
 * as it starts, and at the end every submit must have exactly one outcome that agrees with what
 * was sent, in both dispatch modes (even seeds fixed slots, odd seeds adaptive with a learned
 * limit). A failure names its seed; rerun one with {@code -Dferry.seed=N}.
 */
class PerKeyRandomTest {
  record In(long id, String key, long weight, long order) {}

  static List<Long> seeds() {
    return Seeds.of(40, 7919);
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void guaranteesHoldOnRandomSchedules(long seed) {
    Seeds.check(seed, () -> new Run(seed).run());
  }

  private static final class Run {
    final Random rnd;
    final VirtualLoop loop = new VirtualLoop();
    final PerKeyConfig config;
    final boolean customOrder;
    final PerKeyFerry<String, In, Set<Long>, Long> ferry;

    final Map<String, Integer> openPerKey = new HashMap<>();
    final Map<String, Long> lastSentPerKey = new HashMap<>();
    final Set<Long> sent = new HashSet<>();
    final Set<Long> sentInFailedCall = new HashSet<>();
    final Set<Long> rejectedByDownstream = new HashSet<>();
    int openCalls;

    Run(long seed) {
      rnd = new Random(seed);
      customOrder = rnd.nextInt(4) == 0;
      // Both dispatch modes, half the seeds each (the mode is not drawn from rnd, so each seed's
      // schedule is the one it had when this test ran in one mode only).
      PerKeyConfig.Builder b = PerKeyConfig.builder()
          .dispatch(seed % 2 == 0 ? Dispatch.FIXED_SLOTS : Dispatch.ADAPTIVE)
          .maxInFlightBatches(1 + rnd.nextInt(4))
          .maxBatchSize(1 + rnd.nextInt(8))
          .maxQueueing(rnd.nextBoolean() ? 10_000 : 5 + rnd.nextInt(40))
          .directIdleKeys(rnd.nextInt(3) != 0)
          .callTimeout(Duration.ofMillis(rnd.nextBoolean() ? 30_000 : 15 + rnd.nextInt(30)));
      if (rnd.nextBoolean()) {
        b.maxBatchWeight(5 + rnd.nextInt(20));
      }
      if (rnd.nextInt(4) == 0) {
        b.maxQueuedWeight(20 + rnd.nextInt(200));
      }
      if (rnd.nextInt(4) == 0) {
        b.maxBatchDelay(Duration.ofMillis(1 + rnd.nextInt(5)));
      }
      config = b.build();
      Comparator<In> order = customOrder ? Comparator.comparingLong(In::order) : null;
      ferry = new PerKeyFerry<>(loop, config, In::key, In::weight, order, this::call, this::extract);
    }

    /** Violations seen inside calls: thrown there they would only fail the batch, so they are kept. */
    final List<AssertionError> violations = new ArrayList<>();

    Future<Set<Long>> call(String key, List<In> inputs) {
      try {
        checkBatch(key, inputs);
      } catch (AssertionError e) {
        violations.add(e);
      }
      openPerKey.merge(key, 1, Integer::sum);
      openCalls++;
      return complete(key, inputs);
    }

    void checkBatch(String key, List<In> inputs) {
      // Guarantee 1: one key per batch.
      for (In in : inputs) {
        assertEquals(key, in.key, "a batch mixed keys");
      }
      // Guarantee 2: never two calls in flight for one key.
      assertEquals(0, openPerKey.getOrDefault(key, 0), "two calls in flight for key " + key);
      // Guarantee 5: slots bound the batch calls (direct calls are counted apart).
      assertTrue(ferry.engine().batchesInFlight() <= config.maxInFlightBatches(), "too many batch calls");
      // Guarantee 6: bounds.
      assertTrue(inputs.size() <= config.maxBatchSize(), "batch larger than maxBatchSize");
      long weight = inputs.stream().mapToLong(In::weight).sum();
      assertTrue(inputs.size() == 1 || weight <= config.maxBatchWeight(), "batch heavier than maxBatchWeight");
      // Guarantee 3: order within the key (submission order, or the custom order within a batch).
      long last = lastSentPerKey.getOrDefault(key, -1L);
      for (int i = 0; i < inputs.size(); i++) {
        In in = inputs.get(i);
        if (customOrder) {
          assertTrue(i == 0 || inputs.get(i - 1).order <= in.order, "custom order broken in a batch");
        } else {
          assertTrue(in.id > last, "input " + in.id + " overtook " + last + " on key " + key);
          last = in.id;
        }
        // Guarantee 7: sent at most once.
        assertTrue(sent.add(in.id), "input " + in.id + " sent twice");
      }
      lastSentPerKey.put(key, last);
    }

    Future<Set<Long>> complete(String key, List<In> inputs) {
      Promise<Set<Long>> promise = Promise.promise();
      long latency = 1 + rnd.nextInt(rnd.nextInt(10) == 0 ? 60 : 12);
      boolean fails = rnd.nextInt(10) == 0;
      Set<Long> accepted = new HashSet<>();
      for (In in : inputs) {
        if (rnd.nextInt(15) == 0) {
          rejectedByDownstream.add(in.id);
        } else {
          accepted.add(in.id);
        }
      }
      loop.schedule(TimeUnit.MILLISECONDS.toNanos(latency), () -> {
        openPerKey.merge(key, -1, Integer::sum);
        openCalls--;
        if (fails) {
          inputs.forEach(in -> sentInFailedCall.add(in.id));
          promise.fail("downstream failure");
        } else {
          promise.complete(accepted);
        }
      });
      return promise.future();
    }

    Long extract(In in, Set<Long> accepted) {
      if (!accepted.contains(in.id)) {
        throw FerryException.inputRejected("rejected " + in.id);
      }
      return in.id;
    }

    void run() {
      int inputs = 2000 + rnd.nextInt(2000);
      int keys = 5 + rnd.nextInt(80);
      boolean drainAtEnd = rnd.nextBoolean();
      int closeAt = rnd.nextInt(3) == 0 ? rnd.nextInt(inputs) : -1;
      List<Future<Long>> outcomes = new ArrayList<>();
      List<In> submitted = new ArrayList<>();
      for (int i = 0; i < inputs; i++) {
        if (i == closeAt) {
          if (drainAtEnd) {
            ferry.drain(Duration.ofMillis(rnd.nextInt(50)));
          } else {
            ferry.close();
          }
        }
        // Skewed keys: a few hot, many quiet.
        String key = "k" + (rnd.nextInt(3) == 0 ? rnd.nextInt(3) : rnd.nextInt(keys));
        In in = new In(i, key, 1 + rnd.nextInt(8), rnd.nextInt(5));
        submitted.add(in);
        outcomes.add(rnd.nextInt(5) == 0
            ? ferry.submit(in, Duration.ofMillis(1 + rnd.nextInt(40)))
            : ferry.submit(in));
        if (rnd.nextInt(3) == 0) {
          loop.advance(TimeUnit.MICROSECONDS.toNanos(rnd.nextInt(3000)));
        }
      }
      Future<Void> closed = drainAtEnd ? ferry.drain(Duration.ofMillis(200)) : ferry.close();
      loop.advanceMillis(120_000);
      if (!violations.isEmpty()) {
        throw violations.get(0);
      }
      assertTrue(closed.succeeded(), "close never completed");
      assertEquals(0, openCalls, "calls left open");
      assertEquals(0, ferry.metrics().activeLanes(), "lanes left behind");
      assertEquals(0, ferry.metrics().queuedInputs());
      assertEquals(0, ferry.metrics().inFlightBatches());
      assertEquals(0, loop.liveTimers(), "timers left behind");

      for (int i = 0; i < outcomes.size(); i++) {
        Future<Long> f = outcomes.get(i);
        long id = submitted.get(i).id;
        if (!f.isComplete()) {
          fail("input " + id + " got no outcome");
        }
        if (f.succeeded()) {
          assertTrue(sent.contains(id) && !sentInFailedCall.contains(id), "success for an input not delivered " + id);
          continue;
        }
        FerryError kind = ((FerryException) f.cause()).kind();
        switch (kind) {
          case TIMEOUT, REJECTED, CLOSED -> assertTrue(!sent.contains(id), kind + " for input " + id + " that was sent");
          case INPUT_REJECTED -> assertTrue(rejectedByDownstream.contains(id), "unexpected rejection of " + id);
          case FAILED -> assertTrue(sent.contains(id), "FAILED for input " + id + " that was never sent");
          default -> fail("unexpected " + kind + " for " + id);
        }
      }
    }
  }
}
