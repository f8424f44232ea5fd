package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code make} and {@code keyed} on a real Vert.x: the context they are bound to, and thread hops. */
@ExtendWith(VertxExtension.class)
class MakeVertxTest {

  /** Completes {@code value} on a thread that Vert.x knows nothing about. */
  private static <T> Future<T> onForeignThread(T value) {
    return onForeignThread(value, new java.util.concurrent.CountDownLatch(0));
  }

  /** Completes {@code value} on a foreign thread once {@code go} is open. */
  private static <T> Future<T> onForeignThread(T value, java.util.concurrent.CountDownLatch go) {
    Promise<T> p = Promise.promise();
    new Thread(() -> {
      try {
        go.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      p.complete(value);
    }, "foreign").start();
    return p.future();
  }

  @Test
  void aCallCompletedOnAForeignThreadIsHandledOnTheFerrysContext(Vertx vertx, VertxTestContext test) {
    Context context = vertx.getOrCreateContext();
    List<Context> seenByExtract = new CopyOnWriteArrayList<>();
    // The call completes only once the test listens: a caller with no context of its own that
    // registers its callback after the answer runs it on its own thread (that is Vert.x's rule).
    java.util.concurrent.CountDownLatch listening = new java.util.concurrent.CountDownLatch(1);
    Ferry<String, String> ferry = Ferry.make(context, FerryConfig.defaults(), null,
        inputs -> onForeignThread(String.join(",", inputs), listening),
        (in, all) -> {
          seenByExtract.add(Vertx.currentContext());
          return in + "@" + all;
        });
    // Submitted from the test thread, which is not the ferry's either.
    ferry.submit("a").onComplete(test.succeeding(out -> test.verify(() -> {
      assertEquals("a@a", out);
      assertSame(context, Vertx.currentContext(), "the caller is answered on the ferry's context");
      assertEquals(List.of(context), seenByExtract, "extract runs on the ferry's context");
      assertEquals(0, ferry.metrics().inFlightBatches());
      test.completeNow();
    })));
    listening.countDown();
  }

  @Test
  void makeFromAnEventLoopBindsToThatContext(Vertx vertx, VertxTestContext test) {
    Context context = vertx.getOrCreateContext();
    context.runOnContext(v -> {
      List<Context> calledOn = new ArrayList<>();
      Ferry<Integer, Integer> ferry = Ferry.make(vertx, FerryConfig.defaults(),
          inputs -> {
            calledOn.add(Vertx.currentContext());
            return Future.succeededFuture(inputs.size());
          },
          (in, size) -> in * 10);
      ferry.submit(4).onComplete(test.succeeding(out -> test.verify(() -> {
        assertEquals(40, out);
        assertEquals(List.of(context), calledOn);
        test.completeNow();
      })));
    });
  }

  @Test
  void keyedFetchesEachWaitingKeyOnceAcrossThreads(Vertx vertx, VertxTestContext test) {
    List<List<String>> calls = new CopyOnWriteArrayList<>();
    // The batch leaves when it is full (three distinct keys), never on a clock: a loaded machine may
    // pause the loop between two submits for longer than any delay a test could choose.
    FerryConfig config = FerryConfig.builder().maxBatchDelay(Duration.ofHours(1)).maxBatchSize(3).build();
    Context context = vertx.getOrCreateContext();
    Ferry<String, Optional<Integer>> users = Ferry.keyed(context, config, keys -> {
      calls.add(List.copyOf(keys));
      Map<String, Integer> found = new HashMap<>();
      keys.stream().filter(k -> !k.equals("ghost")).forEach(k -> found.put(k, k.length()));
      return onForeignThread(found);
    });
    List<Future<Optional<Integer>>> asked = new ArrayList<>();
    // Submitted in one task on the ferry's context, so all five surely arrive within the delay.
    context.runOnContext(v -> {
      for (String k : List.of("ann", "bo", "ann", "bo", "ghost")) {
        asked.add(users.submit(k));
      }
      joinAll(asked, calls, test);
    });
  }

  private static void joinAll(List<Future<Optional<Integer>>> asked, List<List<String>> calls, VertxTestContext test) {
    Future.all(asked).onComplete(test.succeeding(all -> test.verify(() -> {
      assertEquals(List.of(List.of("ann", "bo", "ghost")), calls);
      assertEquals(List.of(Optional.of(3), Optional.of(2), Optional.of(3), Optional.of(2), Optional.empty()),
          asked.stream().map(Future::result).toList());
      test.completeNow();
    })));
  }

  @Test
  void closeOnRealVertxCompletesOnceTheLastCallIsOver(Vertx vertx, VertxTestContext test) {
    Promise<Integer> slow = Promise.promise();
    Ferry<Integer, Integer> ferry = Ferry.make(vertx,
        FerryConfig.builder().maxInFlightBatches(1).build(), inputs -> slow.future(), (in, r) -> r);
    Future<Integer> inFlight = ferry.submit(1);
    Future<Integer> waiting = ferry.submit(2);
    ferry.close().onComplete(test.succeeding(v -> test.verify(() -> {
      assertEquals(7, inFlight.result());
      assertEquals(FerryError.CLOSED, ((FerryException) waiting.cause()).kind());
      test.completeNow();
    })));
    waiting.onFailure(e -> new Thread(() -> slow.complete(7)).start());
  }

  @Test
  void factoriesRefuseMissingArgumentsAndWorkerContexts(Vertx vertx) {
    assertThrows(NullPointerException.class,
        () -> Ferry.make(vertx, null, inputs -> Future.succeededFuture(1), (i, r) -> r));
    assertThrows(NullPointerException.class, () -> Ferry.keyed(vertx, FerryConfig.defaults(), null));
    Context worker = ((io.vertx.core.internal.VertxInternal) vertx).createWorkerContext();
    assertThrows(IllegalArgumentException.class,
        () -> Ferry.make(worker, FerryConfig.defaults(), null, inputs -> Future.succeededFuture(1), (i, r) -> r));
  }
}
