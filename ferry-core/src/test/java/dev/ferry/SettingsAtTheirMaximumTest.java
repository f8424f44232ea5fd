package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.ferry.internal.Deadlines;
import dev.ferry.internal.Limits;
import dev.ferry.internal.VertxLoop;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Millisecond settings and deadlines at their documented maximum mean "practically never", on real
 * Vert.x timers (issue 13, item 6: they used to wrap around and fire after a millisecond). Each
 * test races the longest setting against a short Vert.x timer: the short one must win, whatever
 * the machine's speed.
 */
class SettingsAtTheirMaximumTest {
  private static final Duration LONGEST_MS = Duration.ofMillis(Limits.MAX_MS);
  private final Vertx vertx = Vertx.vertx();
  private final Context context = vertx.getOrCreateContext();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** A downstream that answers each call 50 ms after it starts, echoing its inputs. */
  private <T> Future<T> later(T value) {
    Promise<T> p = Promise.promise();
    vertx.setTimer(50, id -> p.complete(value));
    return p.future();
  }

  @Test
  void aTimerForTheLongestDelayDoesNotFireBeforeAShortOne() throws Exception {
    VertxLoop loop = new VertxLoop(context);
    AtomicBoolean longFired = new AtomicBoolean();
    CompletableFuture<Boolean> seen = new CompletableFuture<>();
    context.runOnContext(v -> {
      loop.schedule(Long.MAX_VALUE, () -> longFired.set(true));
      loop.schedule(LONGEST_MS.toNanos(), () -> longFired.set(true));
      loop.schedule(TimeUnit.MILLISECONDS.toNanos(30), () -> seen.complete(longFired.get()));
    });
    assertFalse(seen.get(10, TimeUnit.SECONDS), "a timer of ~292 years fired before one of 30 ms");
    assertEquals(Limits.MAX_MS, Deadlines.timerMillis(LONGEST_MS.toNanos()));
  }

  @Test
  void aCallTimeoutAtItsMaximumLetsASlowCallFinish() throws Exception {
    Ferry<String, String> ferry = Ferry.perKey(context, PerKeyConfig.builder().callTimeout(LONGEST_MS).build(),
        s -> s, null, null, (String key, List<String> inputs) -> later(inputs), (in, r) -> in);
    assertEquals("a", await(ferry.submit("a")));
  }

  @Test
  void aDrainTimeoutAtItsMaximumStillSendsWhatWaits() throws Exception {
    Ferry<String, String> ferry = Ferry.perKey(context, PerKeyConfig.defaults(),
        s -> "k", null, null, (String key, List<String> inputs) -> later(inputs), (in, r) -> in);
    Future<String> first = ferry.submit("a1");
    Future<String> waiting = ferry.submit("a2");
    Future<Void> closed = ferry.drain(LONGEST_MS);
    assertEquals("a1", await(first));
    assertEquals("a2", await(waiting), "the drain must not give up after a millisecond");
    await(closed);
  }

  @Test
  void aKeyedDeadlineAtItsMaximumDoesNotFireAtOnce() throws Exception {
    Ferry<String, Optional<Integer>> keyed = Ferry.keyed(context, FerryConfig.builder().maxInFlightBatches(1).build(),
        keys -> later(Map.of(keys.get(0), keys.get(0).length())));
    Future<Optional<Integer>> busy = keyed.submit("abc");
    Future<Optional<Integer>> waiting = keyed.submit("de", LONGEST_MS);
    assertEquals(Optional.of(3), await(busy));
    assertEquals(Optional.of(2), await(waiting));
  }

  @Test
  void aDeadlineAtItsMaximumDoesNotFireAtOnce() throws Exception {
    Ferry<String, String> ferry = Ferry.perKey(context, PerKeyConfig.defaults(),
        s -> "k", null, null, (String key, List<String> inputs) -> later(inputs), (in, r) -> in);
    Future<String> first = ferry.submit("a1");
    Future<String> waiting = ferry.submit("a2", Deadlines.LONGEST);
    Future<String> waitingMs = ferry.submit("a3", LONGEST_MS);
    assertEquals("a1", await(first));
    assertEquals("a2", await(waiting));
    assertEquals("a3", await(waitingMs));
  }
}
