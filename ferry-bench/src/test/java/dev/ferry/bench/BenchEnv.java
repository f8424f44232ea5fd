package dev.ferry.bench;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * What every scenario shares: the one Vert.x instance, the output folder, and whether this is a
 * quick smoke run (every scenario then shrinks its durations and sweeps to a few seconds in all).
 */
record BenchEnv(Vertx vertx, Path out, boolean quick) {

  /** A fresh event-loop context (not {@code getOrCreateContext}, which off Vert.x threads makes one per call anyway). */
  Context newContext() {
    return ((VertxInternal) vertx).createEventLoopContext();
  }

  /** Picks the full or the quick value of a parameter. */
  <T> T pick(T full, T quick) {
    return this.quick ? quick : full;
  }

  /** Blocks the harness thread (never an event loop) until {@code future} completes. */
  static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  static void sleep(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis());
  }
}
