package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Review AN, on a real Vert.x: a ferry a worker verticle makes through {@code Ferry.perKey(vertx,
 * ...)} lives on an event-loop context of its own (a worker context cannot hold it). That context
 * was a fresh one of no deployment: ADR 0167 closed the ferry with the worker, but what its batch
 * calls made there (a timer, an event-bus consumer, an HTTP client, a ferry) stayed after the
 * worker undeployed, and the calls ran outside the worker's deployment (no deployment id, none of
 * its config). The context is now built from the worker's own, so it is part of the deployment.
 */
@ExtendWith(VertxExtension.class)
class ReviewAnVertxTest {

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** What a batch call saw and made on the ferry's context. */
  static final class Made {
    Context context;
    long periodic;
    MessageConsumer<Object> consumer;
    HttpClient client;
    Ferry<String, String> nested;
  }

  /**
   * The worker's ferry's batch call makes, on its current context, what a downstream might keep
   * for its later calls: a periodic timer, an event-bus consumer, an HTTP client and a ferry of
   * its own. All of these are the context's: once the worker undeploys, they are gone with it.
   */
  static final class Worker extends VerticleBase {
    final CompletableFuture<Made> made = new CompletableFuture<>();
    Ferry<String, String> ferry;

    @Override
    public Future<?> start() {
      ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s, (String key, List<String> inputs) -> {
        Made m = new Made();
        m.context = Vertx.currentContext();
        m.periodic = vertx.setPeriodic(5, id -> {});
        m.consumer = vertx.eventBus().consumer("review-an.kept", msg -> msg.reply("still here"));
        m.client = vertx.createHttpClient();
        m.nested = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s,
            (String k, List<String> in) -> Future.succeededFuture(in), (in, out) -> in);
        return m.consumer.completion().map(v -> {
          made.complete(m);
          return inputs;
        });
      }, (in, out) -> in);
      return Future.succeededFuture();
    }
  }

  @Test
  void whatAWorkersFerryMadeOnItsContextIsClosedWithTheWorker(Vertx vertx) throws Exception {
    Worker worker = new Worker();
    JsonObject config = new JsonObject().put("name", "the worker's");
    String id = await(vertx.deployVerticle(worker,
        new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER).setConfig(config)));
    assertEquals("a", await(worker.ferry.submit("a")));
    Made made = worker.made.get(10, TimeUnit.SECONDS);

    assertTrue(made.context.isEventLoopContext(), "the ferry's calls run on an event loop");
    assertEquals("still here", await(vertx.eventBus().request("review-an.kept", "?")).body());
    assertEquals("b", await(made.nested.submit("b")));

    await(vertx.undeploy(id));

    // Each checked apart (assertAll), so that a run on the old code shows every one that stayed.
    assertAll(
        () -> assertEquals(FerryError.CLOSED, kind(worker.ferry.submit("c")), "the ferry closed with the worker (ADR 0167)"),
        () -> assertFalse(vertx.cancelTimer(made.periodic), "the periodic timer was cancelled with the worker"),
        () -> assertFalse(made.consumer.isRegistered(), "the consumer was unregistered with the worker"),
        () -> {
          Throwable noHandler = failureOf(() -> vertx.eventBus().request("review-an.kept", "?"));
          assertTrue(noHandler instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS,
              "nobody listens any more: " + noHandler);
        },
        () -> {
          Throwable closedClient = failureOf(() -> made.client.request(HttpMethod.GET, 1, "localhost", "/"));
          assertTrue(String.valueOf(closedClient.getMessage()).contains("closed"),
              "the HTTP client closed with the worker: " + closedClient);
        },
        () -> assertEquals(FerryError.CLOSED, kind(made.nested.submit("d")), "a ferry made in a call closed with the worker"),
        () -> assertEquals(id, made.context.deploymentID(), "the ferry's context is the worker's deployment's"),
        () -> assertEquals(config, made.context.config(), "and sees the worker's config"));
  }

  /**
   * A worker that closes its ferry itself and stays deployed: the ferry's hook on the worker is let
   * go of (review AL), but what its calls made on their context is still the worker's, and goes
   * when the worker undeploys.
   */
  @Test
  void whatAFerryClosedEarlyMadeStillGoesWithTheWorker(Vertx vertx) throws Exception {
    Worker worker = new Worker();
    String id = await(vertx.deployVerticle(worker, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER)));
    assertEquals("a", await(worker.ferry.submit("a")));
    Made made = worker.made.get(10, TimeUnit.SECONDS);
    await(worker.ferry.close());
    assertTrue(made.consumer.isRegistered(), "the worker is still deployed");

    await(vertx.undeploy(id));

    assertAll(
        () -> assertFalse(vertx.cancelTimer(made.periodic), "the periodic timer was cancelled with the worker"),
        () -> assertFalse(made.consumer.isRegistered(), "the consumer was unregistered with the worker"),
        () -> assertEquals(FerryError.CLOSED, kind(made.nested.submit("d")), "a ferry made in a call closed with the worker"));
  }

  /**
   * A worker deployed with a pool of its own: the blocking tasks its ferry's batch calls run
   * ({@code executeBlocking} on their context) ran on Vert.x's shared pool, outside the one the
   * deployment sized for its blocking work. They now run on the worker's pool.
   */
  @Test
  void aWorkersFerryRunsItsCallsBlockingTasksOnTheWorkersPool(Vertx vertx) throws Exception {
    CompletableFuture<String> blockingOn = new CompletableFuture<>();
    VerticleBase worker = new VerticleBase() {
      Ferry<String, String> ferry;

      @Override
      public Future<?> start() {
        ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s, (String key, List<String> inputs) ->
            vertx.executeBlocking(() -> Thread.currentThread().getName())
                .onSuccess(blockingOn::complete)
                .map(name -> inputs), (in, out) -> in);
        return ferry.submit("a");
      }
    };
    String id = await(vertx.deployVerticle(worker, new DeploymentOptions()
        .setThreadingModel(ThreadingModel.WORKER).setWorkerPoolName("review-an-pool").setWorkerPoolSize(1)));
    assertTrue(blockingOn.get(10, TimeUnit.SECONDS).startsWith("review-an-pool"), blockingOn.get());
    await(vertx.undeploy(id));
  }

  /**
   * A worker verticle undeployed with a batch call in flight and its ferry not drained in {@code
   * stop()}: the call, an event-bus request its batch call made, still hears its answer, and its
   * caller gets it (ADR 0026, 0064). Vert.x ties a request's reply handler to the context it is
   * made on; one of the worker's deployment's close hooks, it would be unregistered when the
   * worker's hooks run, beside the ferry's drain, and the answer that came after would be lost:
   * the call failed at the drain deadline instead.
   */
  @Test
  void aCallInFlightWhenTheWorkerUndeploysStillHearsItsAnswer(Vertx vertx) throws Exception {
    CompletableFuture<io.vertx.core.eventbus.Message<Object>> asked = new CompletableFuture<>();
    await(vertx.eventBus().consumer("review-an.slow", asked::complete).completion());
    CompletableFuture<Context> workerContext = new CompletableFuture<>();
    CompletableFuture<Future<String>> submitted = new CompletableFuture<>();
    VerticleBase worker = new VerticleBase() {
      @Override
      public Future<?> start() {
        Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.builder().drainTimeout(java.time.Duration.ofSeconds(2)).build(),
            s -> s, (String key, List<String> inputs) ->
                vertx.eventBus().request("review-an.slow", key).map(reply -> inputs), (in, out) -> in);
        submitted.complete(ferry.submit("a"));
        workerContext.complete(context);
        return Future.succeededFuture();
      }
    };
    String id = await(vertx.deployVerticle(worker, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER)));
    io.vertx.core.eventbus.Message<Object> request = asked.get(10, TimeUnit.SECONDS);
    Future<String> first = submitted.get(10, TimeUnit.SECONDS);
    // A close hook of the worker's own: Vert.x calls the worker's hooks one after another in one
    // task on the worker's context, so the task this one queues there runs once all were called.
    io.vertx.core.internal.ContextInternal context = (io.vertx.core.internal.ContextInternal) workerContext.get();
    CompletableFuture<Void> hooksCalled = new CompletableFuture<>();
    context.closeFuture().add(completion -> {
      context.runOnContext(v -> hooksCalled.complete(null));
      completion.succeed();
    });
    Future<Void> undeployed = vertx.undeploy(id);
    hooksCalled.get(10, TimeUnit.SECONDS);
    request.reply("answer");
    assertEquals("a", await(first), "the call in flight heard its answer");
    await(undeployed);
  }

  /**
   * A worker that makes a short-lived ferry per task, closing each, and stays deployed (review AQ):
   * each closed ferry's scope moved into the worker's close future to be closed at the undeploy,
   * though its calls made nothing there; 200 ferries left 200 entries in the worker for as long as
   * it lived. A scope with nothing in it when its ferry closes is closed then, and the worker holds
   * nothing of a ferry it closed. (The count is read from Vert.x's close future itself: it has no
   * public size.)
   */
  @Test
  void aWorkerThatMakesAndClosesManyFerriesHoldsNothingOfThem(Vertx vertx) throws Exception {
    CompletableFuture<io.vertx.core.internal.ContextInternal> deployed = new CompletableFuture<>();
    VerticleBase worker = new VerticleBase() {
      @Override
      public Future<?> start() {
        deployed.complete((io.vertx.core.internal.ContextInternal) context);
        return Future.succeededFuture();
      }
    };
    String id = await(vertx.deployVerticle(worker, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER)));
    io.vertx.core.internal.ContextInternal workerContext = deployed.get(10, TimeUnit.SECONDS);
    int before = closeHooks(workerContext.closeFuture());
    CompletableFuture<Object> done = new CompletableFuture<>();
    workerContext.runOnContext(v -> {
      Future<?> chain = Future.succeededFuture();
      for (int i = 0; i < 200; i++) {
        chain = chain.compose(x -> {
          Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s,
              (String key, List<String> inputs) -> Future.succeededFuture(inputs), (in, out) -> in);
          return ferry.submit("a").compose(answer -> ferry.close());
        });
      }
      chain.onComplete(ar -> done.complete(ar.succeeded() ? "closed" : ar.cause()));
    });
    assertEquals("closed", done.get(30, TimeUnit.SECONDS));
    assertEquals(before, closeHooks(workerContext.closeFuture()), "the worker holds nothing of 200 closed ferries");
    await(vertx.undeploy(id));
  }

  private static int closeHooks(io.vertx.core.internal.CloseFuture future) throws Exception {
    java.lang.reflect.Field children = io.vertx.core.internal.CloseFuture.class.getDeclaredField("children");
    children.setAccessible(true);
    synchronized (future) { // Vert.x's own lock on the map
      java.util.Map<?, ?> hooks = (java.util.Map<?, ?>) children.get(future);
      return hooks == null ? 0 : hooks.size();
    }
  }

  private static Throwable failureOf(java.util.function.Supplier<Future<?>> attempt) throws Exception {
    Future<?> f;
    try {
      f = attempt.get();
    } catch (RuntimeException thrown) {
      return thrown;
    }
    try {
      await(f);
    } catch (ExecutionException e) {
      assertNotNull(e.getCause());
      return e.getCause();
    }
    throw new AssertionError("expected a failure, got " + f.result());
  }

  private static FerryError kind(Future<?> f) throws Exception {
    Throwable t = failureOf(() -> f);
    if (t instanceof FerryException fe) {
      return fe.kind();
    }
    throw new AssertionError("expected a FerryException, got " + t);
  }
}
