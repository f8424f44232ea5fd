package dev.ferry.internal;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;

/**
 * A {@link Loop} on one Vert.x event-loop context, captured once and kept.
 *
 * <p>ferry-core's only use of Vert.x internal API, kept in this one adapter because Vert.x 5 has no
 * public API for these: the base of a duplicated context ({@code unwrap()}: handlers run on
 * duplicates, and the ferry must accept them as its own loop), a fresh event-loop context from a
 * non-Vert.x thread without deploying a verticle, an event-loop context built from a worker's into
 * its deployment, the context's close hooks, timers that are not among them, and a promise whose
 * callbacks run on the caller's context.
 */
public final class VertxLoop implements Loop {
  private final Context context;
  /** Whose close closes the ferry ({@link #onOwnerClose}): its own context, or its maker's (ADR 0167). */
  private final ContextInternal owner;
  /**
   * The close future of a context built into a worker's deployment ({@link #inDeploymentOf}), null
   * otherwise: what the ferry's batch calls make on their context is tied to it, and it is closed
   * with the owner once the ferry's drain is over (ADR 0168).
   */
  private final Scope scope;

  /**
   * A close future that knows whether anything is in it (Vert.x's has no size): what its ferry's
   * calls made on their context, each added and removed by Vert.x from any thread. Read once, as
   * its ferry closes: a scope with nothing in it is closed then rather than kept by the owner to
   * its close (review AQ), which held one per closed ferry, for a worker that makes and closes
   * ferries as it goes, for as long as it lived.
   */
  private static final class Scope extends io.vertx.core.internal.CloseFuture {
    private final java.util.concurrent.atomic.AtomicInteger held = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public boolean add(io.vertx.core.Closeable closeable) {
      boolean added = super.add(closeable);
      if (added) {
        held.incrementAndGet();
      }
      return added;
    }

    @Override
    public boolean remove(io.vertx.core.Closeable closeable) {
      boolean removed = super.remove(closeable);
      if (removed) {
        held.decrementAndGet();
      }
      return removed;
    }

    boolean holdsNothing() {
      return held.get() <= 0;
    }
  }

  public VertxLoop(Context context) {
    this(context, context, null);
  }

  /**
   * A loop on {@code context} that closes with {@code owner}'s deployment (or, for a context of no
   * deployment, its Vert.x instance).
   */
  private VertxLoop(Context context, Context owner, Scope scope) {
    if (!context.isEventLoopContext()) {
      throw new IllegalArgumentException("a ferry needs an event-loop context, got a "
          + context.threadingModel() + " context: create it on an event loop (its lanes are kept without locks)");
    }
    // Event-bus handlers and timers run on duplicates of a verticle's context; they share its
    // thread and task order, so the ferry is bound to the base context and accepts its duplicates.
    this.context = ((ContextInternal) context).unwrap();
    this.owner = ((ContextInternal) owner).unwrap();
    this.scope = scope;
  }

  /** A promise bound to the calling thread's context, if any (see {@link Driver#callerPromise()}). */
  static <T> io.vertx.core.Promise<T> callerPromise() {
    ContextInternal caller = ContextInternal.current();
    return caller != null ? caller.promise() : io.vertx.core.Promise.promise();
  }

  /**
   * A Future of the caller's own, completed with {@code future}: its callbacks run on the calling
   * thread's context when it has one (ADR 0008). A close completes on the ferry's loop; handed out
   * as it is, its callbacks ran there, on another verticle's thread for a caller that closed
   * another verticle's ferry; and, a Vert.x 5 promise's Future being the promise, a caller that
   * completed it closed the ferry for everyone else waiting on it (review AJ).
   */
  static <T> io.vertx.core.Future<T> onCallersContext(io.vertx.core.Future<T> future) {
    io.vertx.core.Promise<T> mine = callerPromise();
    // Tried: the caller may have completed its own (a promise's Future is the promise).
    future.onComplete(ar -> {
      if (ar.succeeded()) {
        mine.tryComplete(ar.result());
      } else {
        mine.tryFail(ar.cause());
      }
    });
    return mine.future();
  }

  /**
   * The caller's context when it is an event loop; otherwise an event-loop context made here, once
   * (never per call: {@code getOrCreateContext} off Vert.x threads makes a new one each time).
   *
   * <p>Made on another context of {@code vertx} (a worker verticle's), the new context is built
   * from that one ({@link #inDeploymentOf}), so it joins its deployment: the ferry closes with that
   * context's owner (ADR 0167), and what the ferry's batch calls make on their context (timers,
   * consumers, requests, clients, a ferry) closes with it too, once the ferry's drain is over (ADR
   * 0168). Off Vert.x threads, or on another
   * Vert.x instance, the context is a fresh one of no deployment, closed with {@code vertx}.
   */
  public static VertxLoop forCaller(Vertx vertx) {
    java.util.Objects.requireNonNull(vertx, "vertx");
    Context current = Vertx.currentContext();
    boolean ours = current != null && current.owner() == vertx;
    if (ours && current.isEventLoopContext()) {
      return new VertxLoop(current);
    }
    if (ours) {
      Scope scope = new Scope();
      return new VertxLoop(inDeploymentOf((ContextInternal) current, scope), current, scope);
    }
    return new VertxLoop(((io.vertx.core.internal.VertxInternal) vertx).createEventLoopContext());
  }

  /**
   * An event-loop context in {@code worker}'s deployment: Vert.x's own builder from a context
   * ({@code toBuilder()}, as its HTTP client makes a worker's connection contexts) keeps the
   * deployment, the class loader and the worker pool, so a timer, consumer, request or client made
   * on it is tied to its close future as on a verticle's context. Not taken from the worker (ADR
   * 0168): its close future, replaced by {@code scope}, which the owner's close closes only once
   * the ferry's drain is over (closed beside it, the drain lost what its calls in flight waited
   * for: an event-bus request's reply handler is one of them); its event loop, shared by every
   * instance of its deployment (the ferry takes the next one, as a fresh context does); and, for a
   * virtual-thread context, its pool of virtual threads (an event-loop context's blocking tasks run
   * on Vert.x's worker pool).
   */
  private static Context inDeploymentOf(ContextInternal worker, Scope scope) {
    ContextInternal base = worker.unwrap();
    io.vertx.core.internal.VertxInternal vertx = base.owner();
    return base.toBuilder()
        .withThreadingModel(io.vertx.core.ThreadingModel.EVENT_LOOP)
        .withEventLoop(vertx.nettyEventLoopGroup().next())
        .withWorkerPool(base.threadingModel() == io.vertx.core.ThreadingModel.WORKER ? base.workerPool() : null)
        .withCloseFuture(scope)
        .build();
  }

  public Context context() {
    return context;
  }

  @Override
  public boolean inLoop() {
    Context current = Vertx.currentContext();
    // The thread too, not only the current context: a blocking task of this context (its
    // executeBlocking) runs on a worker thread where Vert.x names this context current. Taken for
    // the loop there, the ferry's state was changed beside the event loop, with no lock.
    return (current == context || (current != null && ((ContextInternal) current).unwrap() == context))
        && ((ContextInternal) context).inThread();
  }

  /**
   * Whether the caller runs on {@code context}, on the context's own thread: not in one of its
   * blocking tasks, where Vert.x names it current on a worker thread. Here for the store service,
   * whose module has no adapter of its own: the check needs the internal {@code inThread()}, which
   * it called itself, failing ApiSurfaceTest (review Q).
   */
  public static boolean onOwnThread(Context context) {
    return Vertx.currentContext() == context && ((ContextInternal) context).inThread();
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
    long ms = Deadlines.timerMillis(delayNanos);
    // Not Vertx.setTimer: on a verticle's context that makes the timer one of the context's close
    // hooks, and undeploying the verticle cancels it. The ferry's own close hook drains after that
    // (its drain, call timeouts and callers' deadlines all run on timers), so timers armed before
    // the undeploy must outlive it: the context's own setTimer adds no close hook. The ferry
    // cancels what it no longer needs, and every timer ends within its delay.
    return ((ContextInternal) context).setTimer(ms, id -> {
      if (inLoop()) {
        task.run();
      } else {
        execute(task);
      }
    });
  }

  /**
   * Through the context's close hooks, the one Vert.x API that tells when a verticle's context (or,
   * for a context of no deployment, the Vert.x instance) closes. Vert.x 4 made {@code
   * Context.addCloseHook} internal and Vert.x 5 has no public replacement, so this adapter, which
   * already holds the core's other uses of {@code ContextInternal}, is where the internal API is
   * used (issue 12). Undeploying runs the hooks after the verticle's {@code stop()}.
   */
  @Override
  public Runnable onOwnerClose(java.util.function.Consumer<Runnable> hook) {
    // With a scope (ADR 0168): what the ferry's calls made on its context closes once the ferry's
    // drain is over, before the owner's close completes.
    io.vertx.core.Closeable closeable = completion -> hook.accept(() -> closeScope().onComplete(ar -> completion.succeed()));
    if (!owner.closeFuture().add(closeable)) {
      // The owner has closed already (a ferry made late, on the context of a verticle that has
      // undeployed; or on a closed Vert.x): Vert.x refuses the hook, and addCloseHook says nothing
      // of it. Unseen, the ferry outlived its owner for good (review AJ): it is closing now, as
      // it would have at the owner's close.
      hook.accept(() -> {});
      closeScope();
      return () -> {};
    }
    return () -> {
      // The ferry closed: its hook is let go of (review AL). What its calls made is still the
      // owner's to close: the scope takes the hook's place (a refused add: the owner is closing).
      // Nothing in it: closed now, not kept by the owner till its close (review AQ); nothing of
      // the ferry runs on its context any more.
      if (owner.closeFuture().remove(closeable) && scope != null
          && (scope.holdsNothing() || !owner.closeFuture().add(scope))) {
        scope.close();
      }
    };
  }

  private io.vertx.core.Future<Void> closeScope() {
    return scope == null ? io.vertx.core.Future.succeededFuture() : scope.close();
  }

  @Override
  public void report(Throwable failure) {
    try {
      ((ContextInternal) context).reportException(failure);
    } catch (Throwable handlerThrew) {
      // The context's exception handler is the application's code and may throw as well. Let out,
      // its throw would end the step that reported halfway (a probe's shield, a call taken as over
      // because its Future cannot be listened to, a hand-off, a lane let go of): what the report
      // was there to keep from happening. Both are logged instead.
      if (handlerThrew != failure) { // a handler that rethrows what it was given: that, once
        handlerThrew.addSuppressed(failure);
      }
      Loop.super.report(handlerThrew);
    }
  }

  @Override
  public void cancel(long timerId) {
    context.owner().cancelTimer(timerId);
  }
}
