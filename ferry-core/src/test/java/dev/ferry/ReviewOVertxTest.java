package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review O: submit from a blocking task of the ferry's own context. Inside {@code
 * executeBlocking}, Vert.x reports the calling event-loop context as the current one, on a worker
 * thread: a ferry that took that for its loop ran its transition (and the downstream call) there,
 * beside its event loop, with no lock.
 */
class ReviewOVertxTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** The thread of {@code context}'s event loop. */
  private static Thread eventLoopOf(Context context) throws Exception {
    CompletableFuture<Thread> loopThread = new CompletableFuture<>();
    context.runOnContext(v -> loopThread.complete(Thread.currentThread()));
    return loopThread.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aSubmitFromABlockingTaskOfTheFerrysContextRunsTheFerryOnItsEventLoop() throws Exception {
    Context context = vertx.getOrCreateContext();
    Thread eventLoop = eventLoopOf(context);
    CompletableFuture<Thread> callThread = new CompletableFuture<>();
    Ferry<String, String> ferry = Ferry.perKey(context, PerKeyConfig.defaults(), s -> s, null, null,
        (String key, List<String> inputs) -> {
          callThread.complete(Thread.currentThread());
          return Future.succeededFuture(inputs);
        },
        (in, result) -> in);
    CompletableFuture<Future<String>> submitted = new CompletableFuture<>();
    CompletableFuture<Boolean> onWorker = new CompletableFuture<>();
    context.runOnContext(v -> context.executeBlocking(() -> {
      // Vert.x says the current context is the ferry's, on a worker thread.
      onWorker.complete(Vertx.currentContext() != null && !Context.isOnEventLoopThread());
      submitted.complete(ferry.submit("a"));
      return null;
    }));
    assertTrue(onWorker.get(10, TimeUnit.SECONDS), "the blocking task runs on a worker thread");
    assertEquals("a", await(submitted.get(10, TimeUnit.SECONDS)));
    assertEquals(eventLoop, callThread.get(10, TimeUnit.SECONDS),
        "the ferry's state lives on its event loop: the downstream call starts there");
    assertEquals(0, ferry.metrics().activeLanes());
  }

  @Test
  void aMakeAndAKeyedSubmitFromABlockingTaskOfTheFerrysContextRunOnItsEventLoop() throws Exception {
    Context context = vertx.getOrCreateContext();
    Thread eventLoop = eventLoopOf(context);
    CompletableFuture<Thread> makeThread = new CompletableFuture<>();
    CompletableFuture<Thread> keyedThread = new CompletableFuture<>();
    Ferry<String, String> make = Ferry.make(context, FerryConfig.defaults(), null, inputs -> {
      makeThread.complete(Thread.currentThread());
      return Future.succeededFuture(inputs);
    }, (in, result) -> in);
    Ferry<String, Optional<String>> keyed = Ferry.keyed(context, FerryConfig.defaults(), keys -> {
      keyedThread.complete(Thread.currentThread());
      return Future.succeededFuture(java.util.Map.of("k", "v"));
    });
    CompletableFuture<List<Future<?>>> submitted = new CompletableFuture<>();
    context.runOnContext(v -> context.executeBlocking(() -> {
      submitted.complete(List.of(make.submit("m"), keyed.submit("k")));
      return null;
    }));
    List<Future<?>> futures = submitted.get(10, TimeUnit.SECONDS);
    assertEquals("m", await(futures.get(0)));
    assertEquals(Optional.of("v"), await(futures.get(1)));
    assertEquals(eventLoop, makeThread.get(10, TimeUnit.SECONDS), "make's call starts on its event loop");
    assertEquals(eventLoop, keyedThread.get(10, TimeUnit.SECONDS), "keyed's call starts on its event loop");
    assertFalse(eventLoop == null);
  }
}
