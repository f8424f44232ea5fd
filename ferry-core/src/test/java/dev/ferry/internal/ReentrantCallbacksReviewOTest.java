package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Dispatch;
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
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Review O: every user callback re-enters the ferry at random (the key function, the weight, the
 * custom order, the call, the extract): submits, closes, drains. Seeded; the engine's invariants
 * are checked after every step, and every submit must end with exactly one answer.
 */
class ReentrantCallbacksReviewOTest {
  record In(long id, String key, long weight, long order) {}

  static List<Long> seeds() {
    return Seeds.of(60, 104729);
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void everyCallbackMayReEnterTheFerry(long seed) {
    System.out.println("ReentrantCallbacksReviewOTest seed " + seed);
    Seeds.check(seed, () -> run(seed));
  }

  /**
   * As {@link #everyCallbackMayReEnterTheFerry}, with the outer submits made through the answer
   * handle the verticle uses ({@link Driver#submit(Object, long, io.vertx.core.Completable)}),
   * whose transition runs inline when already on the loop, also for the callbacks' re-entrant
   * submits: a re-entry into or from inside it must wait for the transition to end as well.
   * Mutation testing: the inline path not marking its transition, or taken inside another one,
   * let a custom order's re-entrant submit change the lane halfway through the outer one's.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void everyCallbackMayReEnterTheFerryThroughTheAnswerHandle(long seed) {
    System.out.println("ReentrantCallbacksReviewOTest (answer handle) seed " + seed);
    Seeds.check(seed, () -> run(seed, true));
  }

  private void run(long seed) {
    run(seed, false);
  }

  private void run(long seed, boolean handle) {
    Random rnd = new Random(seed);
    VirtualLoop loop = new VirtualLoop();
    List<Future<String>> futures = new ArrayList<>();
    List<Promise<List<In>>> open = new ArrayList<>();
    Map<String, Integer> inFlight = new HashMap<>();
    long[] nextId = {0};
    boolean[] closing = {false};
    @SuppressWarnings("unchecked")
    PerKeyFerry<String, In, List<In>, String>[] self = new PerKeyFerry[1];
    int reenter = 2 + rnd.nextInt(8); // percent per callback

    Runnable hostile = () -> {
      if (self[0] == null || rnd.nextInt(100) >= reenter) {
        return;
      }
      int what = rnd.nextInt(20);
      if (what == 0 && !closing[0]) {
        closing[0] = true;
        self[0].close();
      } else if (what == 1 && !closing[0]) {
        closing[0] = true;
        self[0].drain(Duration.ofMillis(rnd.nextInt(20)));
      } else if (handle) {
        In in = new In(nextId[0]++, "k" + rnd.nextInt(4), rnd.nextInt(3), rnd.nextInt(5));
        Promise<String> answer = Promise.promise();
        self[0].submit(in, rnd.nextBoolean() ? 0 : Duration.ofMillis(1 + rnd.nextInt(30)).toNanos(), answer);
        futures.add(answer.future());
      } else {
        In in = new In(nextId[0]++, "k" + rnd.nextInt(4), rnd.nextInt(3), rnd.nextInt(5));
        futures.add(rnd.nextBoolean() ? self[0].submit(in) : self[0].submit(in, Duration.ofMillis(1 + rnd.nextInt(30))));
      }
    };
    PerKeyConfig config = PerKeyConfig.builder()
        .dispatch(rnd.nextBoolean() ? Dispatch.ADAPTIVE : Dispatch.FIXED_SLOTS)
        .maxInFlightBatches(1 + rnd.nextInt(4))
        .maxBatchSize(1 + rnd.nextInt(4))
        .maxBatchWeight(1 + rnd.nextInt(4))
        .maxQueueing(5 + rnd.nextInt(40))
        .directIdleKeys(rnd.nextBoolean())
        .maxBatchDelay(Duration.ofMillis(rnd.nextInt(3) == 0 ? 3 : 0))
        .callTimeout(Duration.ofMillis(40))
        .build();
    Comparator<In> order = rnd.nextBoolean() ? null : (a, b) -> {
      hostile.run();
      return Long.compare(a.order(), b.order());
    };
    self[0] = new PerKeyFerry<>(loop, config, in -> {
      hostile.run();
      return in.key();
    }, in -> {
      hostile.run();
      return in.weight();
    }, order, (key, inputs) -> {
      assertEquals(1, inFlight.merge(key, 1, Integer::sum), "two calls in flight for " + key);
      hostile.run();
      Promise<List<In>> p = Promise.promise();
      p.future().onComplete(ar -> inFlight.merge(key, -1, Integer::sum));
      if (rnd.nextInt(4) == 0) {
        p.complete(inputs); // at once
      } else {
        open.add(p);
      }
      return p.future();
    }, (in, result) -> {
      hostile.run();
      return "ok" + in.id();
    });
    PerKeyEngine<String, In> engine = self[0].engine();
    for (int step = 0; step < 600; step++) {
      int r = rnd.nextInt(100);
      if (r < 45 && handle) {
        In in = new In(nextId[0]++, "k" + rnd.nextInt(4), rnd.nextInt(3), rnd.nextInt(5));
        Promise<String> answer = Promise.promise();
        self[0].submit(in, rnd.nextBoolean() ? 0 : Duration.ofMillis(1 + rnd.nextInt(30)).toNanos(), answer);
        futures.add(answer.future());
      } else if (r < 45) {
        In in = new In(nextId[0]++, "k" + rnd.nextInt(4), rnd.nextInt(3), rnd.nextInt(5));
        futures.add(rnd.nextBoolean() ? self[0].submit(in) : self[0].submit(in, Duration.ofMillis(1 + rnd.nextInt(30))));
      } else if (r < 85 && !open.isEmpty()) {
        Promise<List<In>> p = open.remove(rnd.nextInt(open.size()));
        if (rnd.nextInt(6) == 0) {
          p.fail(new IllegalStateException("failed"));
        } else {
          p.complete(List.of());
        }
      } else {
        loop.advanceMillis(rnd.nextInt(10));
      }
      loop.runPending();
      assertNull(engine.brokenInvariant(), "step " + step);
    }
    // Let everything end: complete every call, let time pass, close.
    for (int round = 0; round < 200 && (!open.isEmpty() || futures.stream().anyMatch(f -> !f.isComplete())); round++) {
      while (!open.isEmpty()) {
        open.remove(0).complete(List.of());
        loop.runPending();
      }
      loop.advanceMillis(50);
      if (round == 100) {
        self[0].close();
      }
      loop.runPending();
      assertNull(engine.brokenInvariant(), "at the end, round " + round);
    }
    for (int i = 0; i < futures.size(); i++) {
      Future<String> f = futures.get(i);
      assertTrue(f.isComplete(), "submit " + i + " of " + futures.size() + " left unanswered");
      assertTrue(f.succeeded() || f.cause() instanceof FerryException, "a failure that is no FerryException: " + f.cause());
    }
    assertEquals(0, engine.lanesHeld(), "no lane held once everything ended");
  }
}
