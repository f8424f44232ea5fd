package dev.ferry.store;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Where a StoreService changes its partitions' state: on their context's own thread only. */
class StoreServiceContextTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().await(120, TimeUnit.SECONDS);
  }

  /**
   * A blocking task of a partition's context (a {@code stop()} called from its executeBlocking, say)
   * runs on a worker thread where Vert.x names that context current. The partition's state must
   * still change on the context's event loop, not inline on that worker beside it.
   */
  @Test
  void anActionFromABlockingTaskOfTheContextRunsOnItsEventLoop() throws Exception {
    Context context = vertx.getOrCreateContext();
    AtomicReference<Thread> loop = new AtomicReference<>();
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    CountDownLatch ran = new CountDownLatch(1);
    context.runOnContext(v -> {
      loop.set(Thread.currentThread());
      context.executeBlocking(() -> {
        StoreService.onContext(context, () -> {
          ranOn.set(Thread.currentThread());
          ran.countDown();
        });
        return null;
      });
    });
    assertTrue(ran.await(120, TimeUnit.SECONDS), "the action ran");
    assertSame(loop.get(), ranOn.get(), "ran on " + ranOn.get() + ", not on the context's event loop");
  }
}
