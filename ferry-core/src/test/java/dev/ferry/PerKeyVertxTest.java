package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Ferry.perKey on a real Vert.x instance: context binding, thread hops, real timers. */
@ExtendWith(VertxExtension.class)
class PerKeyVertxTest {
  private final ExecutorService foreign = Executors.newFixedThreadPool(4);

  @AfterEach
  void stop() {
    foreign.shutdownNow();
  }

  @Test
  void completionsFromForeignThreadsAreHandledOnTheFerrysContext(Vertx vertx, VertxTestContext ctx) {
    Context context = vertx.getOrCreateContext();
    List<Context> seenByCall = new ArrayList<>();
    List<Context> seenByExtract = new ArrayList<>();
    Ferry<String, String> ferry = Ferry.perKey(context, PerKeyConfig.defaults(), s -> s.substring(0, 1), null, null,
        (String key, List<String> inputs) -> {
          seenByCall.add(Vertx.currentContext());
          // The downstream answers on a thread Vert.x knows nothing about.
          return Future.fromCompletionStage(CompletableFuture.supplyAsync(() -> inputs, foreign));
        },
        (in, result) -> {
          seenByExtract.add(Vertx.currentContext());
          return in.toUpperCase();
        });
    List<Future<String>> all = new ArrayList<>();
    // Submitted from several non-Vert.x threads at once.
    List<CompletableFuture<Void>> submitters = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      int thread = t;
      submitters.add(CompletableFuture.runAsync(() -> {
        for (int i = 0; i < 50; i++) {
          Future<String> f = ferry.submit("k" + (i % 5) + "-" + thread + "-" + i);
          synchronized (all) {
            all.add(f);
          }
        }
      }, foreign));
    }
    CompletableFuture.allOf(submitters.toArray(CompletableFuture[]::new)).join();
    Future.all(all).onComplete(ctx.succeeding(done -> ctx.verify(() -> {
      assertEquals(200, all.size());
      for (Future<String> f : all) {
        assertTrue(f.result().startsWith("K"));
      }
      for (Context c : seenByCall) {
        assertSame(context, base(c), "the batch call must start on the ferry's context");
      }
      for (Context c : seenByExtract) {
        assertSame(context, base(c), "outcomes must be handed out on the ferry's context");
      }
      assertEquals(0, ferry.metrics().activeLanes());
      ctx.completeNow();
    })));
  }

  @Test
  void aFerryCreatedOnAnEventLoopStaysOnIt(Vertx vertx, VertxTestContext ctx) {
    Context context = vertx.getOrCreateContext();
    context.runOnContext(v -> {
      Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s,
          (String key, List<String> inputs) -> {
            ctx.verify(() -> assertSame(context, base(Vertx.currentContext())));
            return Future.succeededFuture(inputs);
          }, (in, r) -> in);
      ferry.submit("a").onComplete(ctx.succeeding(r -> ctx.verify(() -> {
        assertEquals("a", r);
        ctx.completeNow();
      })));
    });
  }

  private static Context base(Context c) {
    return ((io.vertx.core.internal.ContextInternal) c).unwrap();
  }

  @Test
  void onAnEventBusHandlerOfTheOwningVerticleAnIdleKeyIsCalledBeforeSubmitReturns(Vertx vertx, VertxTestContext ctx) {
    // Handlers run on a duplicate of the verticle's context: the ferry must treat it as its own
    // loop and start the direct call inline, not after a hop.
    vertx.deployVerticle(new io.vertx.core.VerticleBase() {
      @Override
      public Future<?> start() {
        List<String> calls = new ArrayList<>();
        Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s,
            (String key, List<String> inputs) -> {
              calls.add(key);
              return Future.succeededFuture(inputs);
            }, (in, r) -> in);
        return vertx.eventBus().<String>consumer("test.in", msg -> {
          ferry.submit(msg.body());
          ctx.verify(() -> assertEquals(List.of(msg.body()), calls, "the call did not start inline"));
          msg.reply("ok");
        }).completion();
      }
    }).compose(id -> vertx.eventBus().request("test.in", "k1"))
        .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void aCallerOnAnotherContextGetsItsOutcomeOnItsOwnContext(Vertx vertx, VertxTestContext ctx) {
    Context owner = vertx.getOrCreateContext();
    Promise<List<String>> held = Promise.promise();
    Ferry<String, String> ferry = Ferry.perKey(owner, PerKeyConfig.defaults(), s -> "k", null, null,
        (String key, List<String> inputs) -> held.future(), (in, r) -> in);
    Context caller = vertx.getOrCreateContext();
    caller.runOnContext(v -> ferry.submit("x").onComplete(ctx.succeeding(r -> ctx.verify(() -> {
      assertSame(caller, base(Vertx.currentContext()), "the caller's callback ran on the ferry's loop");
      ctx.completeNow();
    }))));
    // Completed on the ferry's context, after the caller registered its callback.
    vertx.setTimer(20, t -> owner.runOnContext(v -> held.complete(List.of("x"))));
  }

  @Test
  void metricsReadFromAnotherThreadComeFromASnapshotPublishedOnTheLoop(Vertx vertx, VertxTestContext ctx) {
    Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s,
        (String key, List<String> inputs) -> Future.succeededFuture(inputs), (in, r) -> in);
    List<Future<String>> all = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      all.add(ferry.submit("k" + i));
    }
    Future.all(all).onComplete(ctx.succeeding(done -> foreign.submit(() -> {
      // Off the loop: the first read starts the publishing, later reads see it within a second.
      long deadline = System.nanoTime() + 60_000_000_000L; // a hang guard: a loaded machine delays the loop
      FerryMetrics m = ferry.metrics();
      while (m.submitted() < 5 && System.nanoTime() < deadline) {
        Thread.onSpinWait();
        m = ferry.metrics();
      }
      FerryMetrics seen = m;
      ctx.verify(() -> {
        assertEquals(5, seen.submitted());
        assertEquals(5, seen.directCalls());
        ctx.completeNow();
      });
    })));
  }

  @Test
  void aDeadlineFailsTheCallerWithTimeoutOnARealTimer(Vertx vertx, VertxTestContext ctx) {
    Promise<List<String>> held = Promise.promise();
    Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> "same",
        (String key, List<String> inputs) -> inputs.get(0).equals("first") ? held.future() : Future.succeededFuture(inputs),
        (in, r) -> in);
    ferry.submit("first");
    ferry.submit("second", Duration.ofMillis(20)).onComplete(ctx.failing(e -> ctx.verify(() -> {
      assertEquals(FerryError.TIMEOUT, ((FerryException) e).kind());
      held.complete(List.of("first"));
      ctx.completeNow();
    })));
  }

  @Test
  void closeWaitsForTheLastCallAndRefusesNewInputs(Vertx vertx, VertxTestContext ctx) {
    Promise<List<String>> held = Promise.promise();
    Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> "k",
        (String key, List<String> inputs) -> held.future(), (in, r) -> in + "!");
    Future<String> inFlight = ferry.submit("a");
    Future<String> waiting = ferry.submit("b");
    Future<Void> closed = ferry.close();
    ferry.submit("c").onComplete(ctx.failing(e -> ctx.verify(() -> {
      assertEquals(FerryError.CLOSED, ((FerryException) e).kind());
      assertEquals(FerryError.CLOSED, ((FerryException) waiting.cause()).kind());
      assertTrue(!closed.isComplete());
      held.complete(List.of("a"));
      closed.onComplete(ctx.succeeding(v -> ctx.verify(() -> {
        assertEquals("a!", inFlight.result());
        ctx.completeNow();
      })));
    })));
  }

  /**
   * The context's exception handler is user code too and may throw. A downstream Future that
   * throws from onComplete is reported there (ADR 0129); a handler that then threw as well used to
   * end the effect before the call was taken as over, so the key stayed reserved until the call
   * timeout (here an hour) and its next input waited with it. The same throw out of a report ended
   * a probe's shield, a hand-off and a lane's removal halfway.
   */
  @Test
  void anExceptionHandlerThatThrowsDoesNotKeepABrokenFuturesKeyReserved() throws Exception {
    Vertx own = Vertx.vertx();
    try {
      List<Throwable> reported = new java.util.concurrent.CopyOnWriteArrayList<>();
      own.exceptionHandler(t -> {
        reported.add(t);
        throw new IllegalStateException("the application's exception handler throws too");
      });
      RuntimeException broken = new RuntimeException("onComplete is broken");
      int[] calls = {0};
      Context context = own.getOrCreateContext();
      Ferry<String, String> ferry = Ferry.perKey(context, PerKeyConfig.builder().callTimeout(Duration.ofHours(1)).build(),
          s -> "k", null, null,
          (String key, List<String> inputs) -> calls[0]++ == 0
              ? dev.ferry.testing.HostileFutures.throwingOnListen(Promise.<List<String>>promise().future(), broken)
              : Future.succeededFuture(inputs),
          (in, result) -> in);
      Future<String> a = ferry.submit("a");
      Future<String> b = ferry.submit("b");
      // Everything happens in the loop's tasks for the two submits: wait for a task after them.
      CompletableFuture<Void> after = new CompletableFuture<>();
      context.runOnContext(v -> after.complete(null));
      after.get(30, java.util.concurrent.TimeUnit.SECONDS);
      assertTrue(a.failed(), "answered at once, not at the call timeout");
      assertEquals(FerryError.FAILED, ((FerryException) a.cause()).kind());
      assertSame(broken, a.cause().getCause());
      assertEquals("b", b.result(), "the key is free: its next input was sent");
      assertTrue(reported.contains(broken), "still reported: " + reported);
    } finally {
      own.close().toCompletionStage().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
    }
  }
}
