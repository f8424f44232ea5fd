package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review AJ, on a real Vert.x: a verticle that closes or drains another verticle's ferry. Its
 * submits are answered on its own context (ADR 0008); the Future {@code close()} and {@code
 * drain()} return completed on the ferry's event loop instead, so the closer's callback touched
 * its verticle's state from another verticle's thread.
 */
class ReviewAjVertxTest {
  private final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  /** The thread of {@code context}'s event loop. */
  private static Thread eventLoopOf(Context context) throws Exception {
    CompletableFuture<Thread> loopThread = new CompletableFuture<>();
    context.runOnContext(v -> loopThread.complete(Thread.currentThread()));
    return await(loopThread);
  }

  /** The context of a new verticle: each deployment takes the next event loop. */
  private Context verticleContext() throws Exception {
    CompletableFuture<Context> deployed = new CompletableFuture<>();
    vertx.deployVerticle(new AbstractVerticle() {
      @Override
      public void start() {
        deployed.complete(context);
      }
    });
    return await(deployed);
  }

  /** Where a callback ran: its context and thread. */
  private record Where(Context context, Thread thread) {}

  /**
   * Builds a ferry on one context with a call in flight, closes it (through {@code closing}) from
   * a second context on another event loop, ends the call, and returns where the closer's
   * callback ran.
   */
  private void assertTheCloserIsAnsweredOnItsOwnContext(
      String what, Function<Context, Ferry<String, ?>> ferryOn, Promise<?> inFlight,
      Function<Ferry<String, ?>, Future<Void>> closing) throws Exception {
    Context ferryContext = verticleContext();
    Context closerContext = verticleContext();
    Thread ferryLoop = eventLoopOf(ferryContext);
    Thread closerLoop = eventLoopOf(closerContext);
    assertNotEquals(ferryLoop, closerLoop, "the two contexts need two event loops");

    Ferry<String, ?> ferry = ferryOn.apply(ferryContext);
    CompletableFuture<Void> started = new CompletableFuture<>();
    ferryContext.runOnContext(v -> {
      ferry.submit("k");
      started.complete(null);
    });
    await(started);

    CompletableFuture<Where> answered = new CompletableFuture<>();
    CompletableFuture<Void> listening = new CompletableFuture<>();
    closerContext.runOnContext(v -> {
      closing.apply(ferry).onComplete(ar -> answered.complete(new Where(Vertx.currentContext(), Thread.currentThread())));
      listening.complete(null);
    });
    await(listening);
    // The call ends on the ferry's loop, where the close completes once the call is over.
    ferryContext.runOnContext(v -> inFlight.tryFail("done"));

    Where where = await(answered);
    assertSame(closerLoop, where.thread(), what + ": the closer's callback runs on its own event loop");
    assertSame(closerContext, where.context(), what + ": the closer's callback runs on its own context");
  }

  @Test
  void aPerKeyFerryClosedFromAnotherContextAnswersTheCloserOnItsOwnContext() throws Exception {
    Promise<List<String>> inFlight = Promise.promise();
    assertTheCloserIsAnsweredOnItsOwnContext("perKey close",
        context -> Ferry.perKey(context, PerKeyConfig.defaults(), s -> s, null, null,
            (String key, List<String> inputs) -> inFlight.future(), (in, out) -> in),
        inFlight, Ferry::close);
  }

  @Test
  void aStreamFerryDrainedFromAnotherContextAnswersTheDrainerOnItsOwnContext() throws Exception {
    Promise<List<String>> inFlight = Promise.promise();
    assertTheCloserIsAnsweredOnItsOwnContext("make drain",
        context -> Ferry.make(context, FerryConfig.defaults(), null, inputs -> inFlight.future(), (in, out) -> in),
        inFlight, ferry -> ferry.drain(Duration.ofSeconds(5)));
  }

  @Test
  void aKeyedFerryClosedFromAnotherContextAnswersTheCloserOnItsOwnContext() throws Exception {
    Promise<Map<String, String>> inFlight = Promise.promise();
    assertTheCloserIsAnsweredOnItsOwnContext("keyed close",
        context -> Ferry.<String, String>keyed(context, FerryConfig.defaults(), keys -> inFlight.future()),
        inFlight, Ferry::close);
  }

  /**
   * A worker verticle (a verticle whose code may block) that creates a ferry in its start, as the
   * guide shows: {@code Ferry.perKey(vertx, ...)}, since a worker context cannot hold the ferry.
   */
  static final class WorkerOwner extends AbstractVerticle {
    Ferry<String, String> ferry;
    Ferry<String, String> stream;

    @Override
    public void start() {
      ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s, (String key, List<String> inputs) ->
          Future.succeededFuture(inputs), (in, out) -> in);
      stream = Ferry.make(vertx, FerryConfig.defaults(), inputs -> Future.succeededFuture(inputs), (in, out) -> in);
    }
  }

  private static FerryError kind(Future<?> f) throws Exception {
    try {
      f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return ((FerryException) e.getCause()).kind();
    }
    throw new AssertionError("expected a failure, got " + f.result());
  }

  /**
   * The guide: a ferry created on a verticle's context closes when that verticle undeploys. A
   * worker verticle's ferry lives on a new event-loop context, whose owner was the Vert.x
   * instance: undeployed, the verticle left its ferry open, taking inputs, for as long as the
   * Vert.x instance ran (one more with every redeploy).
   */
  @Test
  void aFerryCreatedInAWorkerVerticlesStartClosesWhenTheVerticleUndeploys() throws Exception {
    WorkerOwner owner = new WorkerOwner();
    String id = vertx.deployVerticle(owner, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER))
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals("a", owner.ferry.submit("a").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
    vertx.undeploy(id).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(FerryError.CLOSED, kind(owner.ferry.submit("b")), "perKey: the ferry closed with its verticle");
    assertEquals(FerryError.CLOSED, kind(owner.stream.submit("b")), "make: the ferry closed with its verticle");
  }

  /**
   * A ferry made on a verticle's context after the verticle undeployed (lazily, in a callback that
   * ran late on that context): Vert.x refuses a close hook on a context whose owner has closed, and
   * the refusal went unseen, so the ferry outlived its owner for good, taking and sending inputs.
   * Its owner is gone already: it closes at once, as it would have at the undeploy.
   */
  @Test
  void aFerryMadeOnTheContextOfAVerticleThatHasUndeployedIsClosed() throws Exception {
    CompletableFuture<Context> deployed = new CompletableFuture<>();
    String id = vertx.deployVerticle(new AbstractVerticle() {
      @Override
      public void start() {
        deployed.complete(context);
      }
    }).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    Context gone = await(deployed);
    vertx.undeploy(id).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);

    CompletableFuture<Ferry<String, String>> made = new CompletableFuture<>();
    gone.runOnContext(v -> made.complete(Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s,
        (String key, List<String> inputs) -> Future.succeededFuture(inputs), (in, out) -> in)));
    Ferry<String, String> late = await(made);
    assertEquals(FerryError.CLOSED, kind(late.submit("a")), "the ferry closed with its owner, gone already");
    late.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /**
   * A worker verticle whose stop drains its ferry (as the guide advises, to keep one call per key
   * across a redeploy): the drain's Future now completes on the worker's context, which must still
   * run it while the verticle undeploys, once the call in flight is over.
   */
  @Test
  void aWorkerVerticleWhoseStopDrainsItsFerryUndeploysOnceItsCallIsOver() throws Exception {
    Promise<List<String>> inFlight = Promise.promise();
    CompletableFuture<Future<String>> submitted = new CompletableFuture<>();
    CompletableFuture<Context> stoppedOn = new CompletableFuture<>();
    io.vertx.core.VerticleBase owner = new io.vertx.core.VerticleBase() {
      Ferry<String, String> ferry;

      @Override
      public Future<?> start() {
        ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s, (String key, List<String> inputs) ->
            inFlight.future(), (in, out) -> in);
        submitted.complete(ferry.submit("a"));
        return Future.succeededFuture();
      }

      @Override
      public Future<?> stop() {
        return ferry.drain(Duration.ofSeconds(30)).onComplete(ar -> stoppedOn.complete(Vertx.currentContext()));
      }
    };
    String id = vertx.deployVerticle(owner, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER))
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    Future<String> first = await(submitted);
    Future<Void> undeployed = vertx.undeploy(id);
    inFlight.complete(List.of("a"));
    undeployed.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals("a", first.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
    assertEquals(false, await(stoppedOn).isEventLoopContext(), "the drain answered the worker on its own context");
  }
}
