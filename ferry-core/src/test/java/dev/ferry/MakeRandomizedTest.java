package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.Limits;
import dev.ferry.internal.StreamFerry;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Many random schedules in virtual time, each checked against the stream guarantees after
 * every step. A failure names its seed; rerun one with {@code -Dferry.seed=N}.
 */
class MakeRandomizedTest {
  private static final int SEEDS = Integer.getInteger("ferry.sim.seeds", 2000);
  private static final int OPS = 300;

  @Test
  void randomSchedulesKeepEveryGuarantee() {
    String only = System.getProperty("ferry.seed");
    if (only != null) {
      new Run(Long.parseLong(only)).go();
      return;
    }
    for (long seed = 1; seed <= SEEDS; seed++) {
      new Run(seed).go();
    }
  }

  private static final class Run {
    private final Random rnd;
    private final VirtualLoop loop = new VirtualLoop();
    private final FerryConfig config;
    private final String where;
    private final long delayNanos;

    private final Map<Integer, Long> weight = new HashMap<>();
    private final Map<Integer, Long> deadline = new HashMap<>();
    private final Map<Integer, Long> arrival = new HashMap<>();
    /** Accepted, not sent, not yet answered: what the engine should hold, in arrival order. */
    private final LinkedHashMap<Integer, Long> waiting = new LinkedHashMap<>();
    private final Map<Integer, Future<Integer>> futures = new HashMap<>();
    private final Map<Integer, Integer> replies = new HashMap<>();
    private final List<Integer> sentIds = new ArrayList<>();
    private final List<Promise<List<Integer>>> open = new ArrayList<>();
    private final StreamFerry<Integer, List<Integer>, Integer> ferry;
    private boolean open() { return !closing; }
    private boolean closing;
    private boolean draining;
    private Future<Void> closed;
    private int step;
    private int timedOut;
    private AssertionError violation;

    Run(long seed) {
      rnd = new Random(seed);
      config = FerryConfig.builder()
          .maxBatchSize(1 + rnd.nextInt(5))
          .maxBatchWeight(rnd.nextBoolean() ? Limits.UNBOUNDED : 2 + rnd.nextInt(8))
          .maxInFlightBatches(1 + rnd.nextInt(3))
          .maxQueueing(1 + rnd.nextInt(12))
          .maxQueuedWeight(rnd.nextBoolean() ? Limits.UNBOUNDED : 4 + rnd.nextInt(20))
          .maxBatchDelay(Duration.ofMillis(rnd.nextBoolean() ? 0 : 1 + rnd.nextInt(40)))
          .callTimeout(Duration.ofMillis(50 + rnd.nextInt(300)))
          .build();
      where = "seed " + seed + " " + config;
      delayNanos = config.maxBatchDelay().toNanos();
      ferry = new StreamFerry<>(loop, config, weight::get, this::call, (id, result) -> id);
    }

    private String at() {
      return where + " at step " + step + " (t=" + loop.nowMillis() + " ms)";
    }

    /**
     * The downstream: checks each batch as it leaves. The driver turns anything thrown here into a
     * failed call, so a violation is kept and rethrown by {@link #check()}.
     */
    private Future<List<Integer>> call(List<Integer> ids) {
      try {
        checkBatch(ids);
      } catch (AssertionError e) {
        violation = violation != null ? violation : e;
      }
      Promise<List<Integer>> p = Promise.promise();
      open.add(p);
      return p.future();
    }

    private void checkBatch(List<Integer> ids) {
      assertTrue(open.size() < config.maxInFlightBatches(), () -> "more calls at once than slots, " + at());
      assertTrue(ids.size() >= 1 && ids.size() <= config.maxBatchSize(), () -> "batch size " + ids.size() + ", " + at());
      long w = ids.stream().mapToLong(weight::get).sum();
      assertTrue(ids.size() == 1 || w <= config.maxBatchWeight(), () -> "batch weight " + w + ", " + at());
      for (int id : ids) {
        assertTrue(sentIds.isEmpty() || id > sentIds.get(sentIds.size() - 1), () -> "sent twice or out of order: " + id + ", " + at());
        assertTrue(loop.nanoTime() < deadline.get(id), () -> "sent after its deadline: " + id + ", " + at());
        assertTrue(waiting.remove(id) != null, () -> "sent an input that was not waiting: " + id + ", " + at());
        sentIds.add(id);
      }
    }

    void go() {
      for (step = 0; step < OPS; step++) {
        int op = rnd.nextInt(100);
        if (op < 45) {
          submit();
        } else if (op < 70) {
          complete();
        } else if (op < 92) {
          loop.advanceMillis(rnd.nextInt(30));
        } else if (op < 94) {
          assertTrue(ferry.submit(null).failed(), () -> at());
        } else if (op < 96 && !closing) {
          closing = true;
          if (rnd.nextBoolean()) {
            draining = true;
            closed = ferry.drain(Duration.ofMillis(rnd.nextInt(100)));
          } else {
            closed = ferry.close();
            waiting.clear(); // every waiting caller is failed with CLOSED; checked in the replies
          }
        }
        check();
      }
      finish();
    }

    private void submit() {
      int id = futures.size();
      long w = rnd.nextInt(5);
      weight.put(id, w);
      arrival.put(id, loop.nanoTime());
      boolean timed = rnd.nextInt(10) < 3;
      long ms = 1 + rnd.nextInt(60);
      deadline.put(id, timed ? loop.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms) : Long.MAX_VALUE);
      long queuedWeight = waiting.keySet().stream().mapToLong(weight::get).sum();
      // Expired inputs the queue still holds take room until they are gone (issue 13, item 2).
      long[] held = ferry.expiredStillHeld();
      boolean full = waiting.size() + held[0] >= config.maxQueueing()
          || w > config.maxQueuedWeight() - queuedWeight - held[1];
      if (open()) {
        waiting.put(id, w); // removed again below if refused
      }
      Future<Integer> f = timed ? ferry.submit(id, Duration.ofMillis(ms)) : ferry.submit(id);
      futures.put(id, f);
      f.onComplete(ar -> {
        // Kept, not thrown: Vert.x may swallow what a Future callback throws.
        try {
          reply(id, ar.succeeded() ? null : ((FerryException) ar.cause()).kind(), ar.result());
        } catch (AssertionError e) {
          violation = violation != null ? violation : e;
        }
      });
      if (!open()) {
        assertEquals(FerryError.CLOSED, kindOf(f), () -> "not closed after close, " + at());
      } else if (full) {
        assertEquals(FerryError.REJECTED, kindOf(f), () -> "expected a rejection, " + at());
      } else {
        assertFalse(f.failed(), () -> "refused although there was room: " + f.cause() + ", " + at());
      }
    }

    private static FerryError kindOf(Future<?> f) {
      return f.failed() ? ((FerryException) f.cause()).kind() : null;
    }

    /** Records one reply and checks that it fits what happened to the input. */
    private void reply(int id, FerryError kind, Integer value) {
      assertEquals(null, replies.put(id, 1), () -> "a second reply for " + id + ", " + at());
      boolean sent = sentIds.contains(id);
      if (kind == null) {
        assertTrue(sent, () -> "a success for an input never sent: " + id + ", " + at());
        assertEquals(id, value, () -> "another input's outcome, " + at());
      } else if (kind == FerryError.FAILED) {
        assertTrue(sent, () -> "FAILED for an input never sent: " + id + ", " + at());
      } else {
        assertFalse(sent, () -> kind + " for an input that was sent: " + id + ", " + at());
        waiting.remove(id);
        if (kind == FerryError.TIMEOUT) {
          timedOut++;
          assertEquals(deadline.get(id), loop.nanoTime(), () -> "TIMEOUT not at the deadline: " + id + ", " + at());
        }
      }
    }

    private void complete() {
      if (open.isEmpty()) {
        return;
      }
      Promise<List<Integer>> p = open.remove(rnd.nextInt(open.size()));
      if (rnd.nextInt(5) == 0) {
        p.fail(new RuntimeException("random failure"));
      } else {
        p.complete(List.of());
      }
    }

    /** What must hold after every step. */
    private void check() {
      if (violation != null) {
        throw violation;
      }
      FerryMetrics m = ferry.metrics();
      assertEquals(open.size(), m.inFlightBatches(), () -> "calls in flight, " + at());
      assertEquals(waiting.size(), m.queuedInputs(), () -> "waiting inputs, " + at());
      long w = waiting.values().stream().mapToLong(Long::longValue).sum();
      assertEquals(w, m.queuedWeight(), () -> "waiting weight, " + at());
      long[] held = ferry.expiredStillHeld();
      assertTrue(waiting.size() + held[0] <= config.maxQueueing() && w + held[1] <= config.maxQueuedWeight(),
          () -> "queue bounds (expired inputs still held included), " + at());
      assertTrue(held[0] <= timedOut, () -> "holds more expired inputs than ever expired, " + at());
      boolean slotFree = open.size() < config.maxInFlightBatches();
      if (!slotFree || waiting.isEmpty()) {
        return;
      }
      // A free slot and inputs waiting: allowed only while a delay is honestly running.
      assertTrue(delayNanos > 0 && !draining, () -> "a slot is free but inputs wait, " + at());
      assertTrue(waiting.size() < config.maxBatchSize() && w < config.maxBatchWeight(),
          "a full batch waits by a free slot, " + at());
      long oldest = arrival.get(waiting.keySet().iterator().next());
      assertTrue(oldest + delayNanos > loop.nanoTime(), () -> "the oldest input overstayed its delay, " + at());
    }

    /** Closes, lets every call finish, and checks that everyone got exactly one reply. */
    private void finish() {
      if (closed == null) {
        closed = ferry.close();
        waiting.clear();
      }
      loop.advanceMillis(200); // any drain timeout passes
      while (!open.isEmpty()) {
        open.remove(0).complete(List.of());
      }
      loop.advanceMillis(1000);
      if (violation != null) {
        throw violation;
      }
      assertTrue(closed.succeeded(), "close never completed, " + where);
      assertEquals(futures.size(), replies.size(), "callers left without a reply, " + where);
      assertEquals(0, loop.liveTimers(), "timers left behind, " + where);
      assertEquals(0, ferry.metrics().queuedInputs(), () -> where);
    }
  }
}

