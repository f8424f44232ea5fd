package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.KeyedFerry;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Random schedules for {@code keyed}: each call has distinct keys, every caller gets exactly one
 * reply, a value comes from a call that started after the caller asked, and a TIMEOUT comes at the
 * caller's own deadline. A failure names its seed.
 */
class KeyedRandomizedTest {

  @Test
  void randomSchedulesGiveEveryCallerOneFittingReply() {
    for (long seed = 1; seed <= 150; seed++) {
      run(seed);
    }
  }

  /** Runs a check from a Future callback, keeping its failure: Vert.x may swallow what a callback throws. */
  private static void check(List<AssertionError> violations, Runnable assertions) {
    try {
      assertions.run();
    } catch (AssertionError e) {
      violations.add(e);
    }
  }

  private record Call(int index, long start, List<String> keys, Promise<Map<String, String>> answer) {}

  private void run(long seed) {
    Random rnd = new Random(seed);
    VirtualLoop loop = new VirtualLoop();
    FerryConfig config = FerryConfig.builder()
        .maxBatchSize(1 + rnd.nextInt(4))
        .maxInFlightBatches(1 + rnd.nextInt(2))
        .maxQueueing(1 + rnd.nextInt(6))
        .maxBatchDelay(Duration.ofMillis(rnd.nextBoolean() ? 0 : 1 + rnd.nextInt(20)))
        .build();
    String where = "seed " + seed + " " + config;
    List<Call> calls = new ArrayList<>();
    List<Call> open = new ArrayList<>();
    Ferry<String, Optional<String>> ferry = new KeyedFerry<String, String>(loop, config, keys -> {
      Call c = new Call(calls.size(), loop.nanoTime(), List.copyOf(keys), Promise.promise());
      calls.add(c);
      open.add(c);
      return c.answer().future();
    });
    Map<Integer, Integer> replies = new HashMap<>();
    List<AssertionError> violations = new ArrayList<>();
    int callers = 0;
    Future<Void> closed = null;
    for (int step = 0; step < 250; step++) {
      int op = rnd.nextInt(100);
      if (op < 50) {
        int id = callers++;
        String key = "k" + rnd.nextInt(5);
        long asked = loop.nanoTime();
        long ms = rnd.nextInt(3) == 0 ? 1 + rnd.nextInt(30) : 0;
        Future<Optional<String>> f = ms > 0 ? ferry.submit(key, Duration.ofMillis(ms)) : ferry.submit(key);
        f.onComplete(ar -> check(violations, () -> {
          assertEquals(null, replies.put(id, 1), () -> "second reply, " + where);
          if (ar.succeeded() && ar.result().isPresent()) {
            String[] v = ar.result().get().split("#");
            Call c = calls.get(Integer.parseInt(v[1]));
            assertEquals(key, v[0], () -> "another key's value, " + where);
            assertTrue(c.start() >= asked, () -> "a value fetched before it was asked for, " + where);
          } else if (ar.failed() && ((FerryException) ar.cause()).kind() == FerryError.TIMEOUT) {
            assertEquals(asked + TimeUnit.MILLISECONDS.toNanos(ms), loop.nanoTime(),
                () -> "TIMEOUT not at the caller's deadline, " + where);
          }
        }));
      } else if (op < 75 && !open.isEmpty()) {
        Call c = open.remove(rnd.nextInt(open.size()));
        if (rnd.nextInt(5) == 0) {
          c.answer().fail(new RuntimeException("down"));
        } else {
          Map<String, String> values = new HashMap<>();
          c.keys().stream().filter(k -> rnd.nextInt(4) > 0).forEach(k -> values.put(k, k + "#" + c.index()));
          c.answer().complete(values);
        }
      } else if (op < 98) {
        loop.advanceMillis(rnd.nextInt(15));
      } else if (closed == null) {
        closed = rnd.nextBoolean() ? ferry.close() : ferry.drain(Duration.ofMillis(rnd.nextInt(50)));
      }
    }
    if (!violations.isEmpty()) {
      throw violations.get(0);
    }
    for (Call c : calls) {
      assertEquals(new HashSet<>(c.keys()).size(), c.keys().size(), () -> "a key twice in one call, " + where);
    }
    if (closed == null) {
      closed = ferry.close();
    }
    loop.advanceMillis(100);
    while (!open.isEmpty()) {
      open.remove(0).answer().complete(Map.of());
    }
    loop.advanceMillis(60_000);
    if (!violations.isEmpty()) {
      throw violations.get(0);
    }
    assertTrue(closed.succeeded(), () -> "never closed, " + where);
    assertEquals(callers, replies.size(), () -> "callers left without a reply, " + where);
    assertEquals(0, loop.liveTimers(), () -> "timers left behind, " + where);
  }
}
