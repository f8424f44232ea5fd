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
}
