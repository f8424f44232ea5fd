package dev.ferry.internal;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import java.util.concurrent.TimeUnit;

/** A {@link Loop} on one Vert.x event-loop context, captured once and kept. */
public final class VertxLoop implements Loop {
  private final Context context;

  public VertxLoop(Context context) {
    if (!context.isEventLoopContext()) {
      throw new IllegalArgumentException("a ferry needs an event-loop context, got " + context);
    }
    // Event-bus handlers and timers run on duplicates of a verticle's context; they share its
    // thread and task order, so the ferry is bound to the base context and accepts its duplicates.
    this.context = ((ContextInternal) context).unwrap();
  }

  /**
   * The caller's context when it is an event loop; otherwise a fresh event-loop context (created
   * once here, never per call: {@code getOrCreateContext} off Vert.x threads makes a new one each
   * time).
   */
  public static VertxLoop forCaller(Vertx vertx) {
    Context current = Vertx.currentContext();
    if (current != null && current.isEventLoopContext() && current.owner() == vertx) {
      return new VertxLoop(current);
    }
    return new VertxLoop(((io.vertx.core.internal.VertxInternal) vertx).createEventLoopContext());
  }

  public Context context() {
    return context;
  }

  @Override
  public boolean inLoop() {
    Context current = Vertx.currentContext();
    return current == context || (current != null && ((ContextInternal) current).unwrap() == context);
  }

  @Override
  public void execute(Runnable task) {
    context.runOnContext(v -> task.run());
  }

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public long schedule(long delayNanos, Runnable task) {
    // Vert.x timers have millisecond resolution and a 1 ms floor; round up so a deadline is
    // never reported early.
    long ms = Math.max(1, TimeUnit.NANOSECONDS.toMillis(delayNanos + 999_999));
    return context.owner().setTimer(ms, id -> {
      if (inLoop()) {
        task.run();
      } else {
        execute(task);
      }
    });
  }

  @Override
  public void cancel(long timerId) {
    context.owner().cancelTimer(timerId);
  }
}
