package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review AL, on a real Vert.x: a worker verticle's ferry (made through {@code Vertx}, closing with
 * the verticle since review AJ) while the verticle undeploys with a call in flight.
 */
class ReviewAlVertxTest {
  private final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  /** Where a worker's callback ran and what it was told. */
  private record Told(boolean onEventLoop, String value, Throwable failure) {}

  /**
   * The undeploy runs the ferry's owner-close path (a drain for drainTimeout) among the worker
   * context's close hooks; the worker's tasks must still run then, so the worker's own callback
   * for its submit is called with the answer, and the undeploy waits for the call to be over.
   */
  @Test
  void aWorkerVerticleUndeployedWithACallInFlightHearsItsAnswerAndUndeploysAfterIt() throws Exception {
    Promise<List<String>> inFlight = Promise.promise();
    CompletableFuture<Told> told = new CompletableFuture<>();
    CompletableFuture<Void> submitted = new CompletableFuture<>();
    io.vertx.core.VerticleBase owner = new io.vertx.core.VerticleBase() {
      @Override
      public Future<?> start() {
        Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s,
            (String key, List<String> inputs) -> inFlight.future(), (in, out) -> in);
        ferry.submit("a").onComplete(ar -> told.complete(
            new Told(Vertx.currentContext() != null && Vertx.currentContext().isEventLoopContext(), ar.result(), ar.cause())));
        submitted.complete(null);
        return Future.succeededFuture();
      }
    };
    String id = vertx.deployVerticle(owner, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER))
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    await(submitted);
    Future<Void> undeployed = vertx.undeploy(id);
    assertFalse(told.isDone(), "the call is still out");
    inFlight.complete(List.of("a"));
    undeployed.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    Told t = await(told);
    assertEquals("a", t.value(), () -> "answered " + t);
    assertFalse(t.onEventLoop(), "the worker heard it on its own context");
  }

  /**
   * The same with a call that never ends: the undeploy drains for drainTimeout, then the caller is
   * answered FAILED (its input may have been applied) on its own context, and the undeploy completes.
   */
  @Test
  void aWorkerVerticleUndeployedWithACallThatNeverEndsIsAnsweredAtTheDrainBound() throws Exception {
    CompletableFuture<Told> told = new CompletableFuture<>();
    CompletableFuture<Void> submitted = new CompletableFuture<>();
    io.vertx.core.VerticleBase owner = new io.vertx.core.VerticleBase() {
      @Override
      public Future<?> start() {
        Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.builder().drainTimeout(java.time.Duration.ofMillis(100)).build(),
            s -> s, (String key, List<String> inputs) -> Promise.<List<String>>promise().future(), (in, out) -> in);
        ferry.submit("a").onComplete(ar -> told.complete(
            new Told(Vertx.currentContext() != null && Vertx.currentContext().isEventLoopContext(), ar.result(), ar.cause())));
        submitted.complete(null);
        return Future.succeededFuture();
      }
    };
    String id = vertx.deployVerticle(owner, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER))
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    await(submitted);
    vertx.undeploy(id).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    Told t = await(told);
    assertEquals(FerryError.FAILED, ((FerryException) t.failure()).kind(), () -> "answered " + t);
    assertFalse(t.onEventLoop(), "the worker heard it on its own context");
  }

  /**
   * A ferry made through {@code Vertx} on a worker verticle's context hooks its close to that
   * verticle's close future (review AJ); closed early, it must take the hook off that same close
   * future, or a long-lived worker verticle keeps every ferry it ever made and closed. Made and
   * closed 50 times here, with the verticle still deployed: the ferries are let go of.
   */
  @Test
  void ferriesAWorkerVerticleMadeAndClosedAreNotKeptByItsCloseFuture() throws Exception {
    CompletableFuture<io.vertx.core.Context> deployed = new CompletableFuture<>();
    vertx.deployVerticle(new io.vertx.core.VerticleBase() {
      @Override
      public Future<?> start() {
        deployed.complete(context);
        return Future.succeededFuture();
      }
    }, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER))
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    io.vertx.core.Context worker = await(deployed);
    List<java.lang.ref.WeakReference<Ferry<String, String>>> made = new java.util.ArrayList<>();
    for (int i = 0; i < 50; i++) {
      CompletableFuture<Void> closed = new CompletableFuture<>();
      worker.runOnContext(v -> {
        Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s,
            (String key, List<String> inputs) -> Future.succeededFuture(inputs), (in, out) -> in);
        made.add(new java.lang.ref.WeakReference<>(ferry));
        ferry.close().onComplete(ar -> closed.complete(null));
      });
      await(closed);
    }
    long held = made.size();
    for (int i = 0; i < 20 && held > 0; i++) {
      System.gc();
      held = made.stream().filter(r -> r.get() != null).count();
    }
    // A few may be held for a moment by the event loop that ran their last task.
    org.junit.jupiter.api.Assertions.assertTrue(held < 10, held + " of 50 closed ferries are still held");
  }

  /**
   * Since review AJ a worker's close or drain Future runs its callbacks on the worker's context,
   * as a submit's always did (ADR 0008): a worker that blocks its own thread waiting for one (a
   * synchronous {@code stop()} calling {@code get()} on it, which worked before review AJ) waits for
   * a callback that can only run on that very thread, and is never answered while it blocks. Not
   * changed (it is how every Vert.x Future of a worker behaves); documented, and pinned here
   * with a bound only a hang reaches, beside the way that works: returning the Future.
   */
  @Test
  void aWorkerThatBlocksItsThreadOnItsFerrysDrainIsNotAnsweredWhileItBlocks() throws Exception {
    CompletableFuture<Throwable> blocked = new CompletableFuture<>();
    CompletableFuture<Boolean> thenClosed = new CompletableFuture<>();
    // The drain waits for this call, released by the test once the worker listens: a drain with
    // nothing to wait for could complete before the worker's get() listened, and a Future already
    // complete answers a new listener at once, on the worker's own thread (a run of CI saw it).
    Promise<List<String>> call = Promise.promise();
    CompletableFuture<Void> listening = new CompletableFuture<>();
    vertx.deployVerticle(new io.vertx.core.VerticleBase() {
      @Override
      public Future<?> start() {
        Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s,
            (String key, List<String> inputs) -> call.future(), (in, out) -> in);
        ferry.submit("a");
        Future<Void> drained = ferry.drain(java.time.Duration.ofSeconds(10));
        try {
          CompletableFuture<Void> waited = drained.toCompletionStage().toCompletableFuture();
          listening.complete(null);
          waited.get(2, TimeUnit.SECONDS);
          blocked.complete(null);
        } catch (Exception e) {
          blocked.complete(e);
        }
        // Free again, the worker hears it.
        drained.onComplete(ar -> thenClosed.complete(ar.succeeded()));
        return Future.succeededFuture();
      }
    }, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER));
    await(listening);
    call.complete(List.of("a")); // the call ends, and with it the drain, while the worker blocks
    org.junit.jupiter.api.Assertions.assertInstanceOf(java.util.concurrent.TimeoutException.class, await(blocked),
        "the drain's callback waits for the worker's thread, which waits for it");
    org.junit.jupiter.api.Assertions.assertTrue(await(thenClosed), "answered once the worker's thread is free");
  }
}
