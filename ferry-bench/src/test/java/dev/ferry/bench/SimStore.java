package dev.ferry.bench;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The simulated downstream that serves every contender alike: a call costs one fixed round trip
 * plus a small cost per input, however many inputs it carries (the shape of a read-modify-write
 * behind a conditional write). Time passes on a Vert.x timer, not by burning CPU, so the two shared
 * cores are left to the contenders.
 *
 * <p>Like a Vert.x client (the PostgreSQL client, say), the store is bound to one event-loop
 * context, normally the contender's own, and completes calls there; a call made from another thread
 * hops onto it first. At most {@code connections} calls are on the wire (0 = no bound), the rest
 * wait in arrival order, like a connection pool. All state below is touched only on that context,
 * hence no locks; the counters are atomic only so that the harness thread can read them.
 *
 * <p>Vert.x timers on the NIO transport wake with millisecond granularity, so a call takes longer
 * than its nominal cost, and later still when the cores are busy. {@link #wireNanos} records what
 * the store really delivered, so limits can be computed from that as well as from the nominal cost.
 * Calls shorter than a millisecond (the fast downstream of the adaptive-dispatch scenarios) are
 * timed by one shared scheduler thread instead, and handed back to the store's context.
 *
 * <p>The pool can be resized while it runs ({@link #resize}), like a database whose connection
 * limit an operator changes: calls on the wire finish, and new ones start only below the new size.
 */
final class SimStore {
  private final Context context;
  private final long roundTripNanos;
  private final long perInputNanos;
  private int connections;
  /** Sub-millisecond timing: Vert.x timers wake in whole milliseconds. */
  private static final ScheduledExecutorService FINE_TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "simstore-fine-timer");
    t.setDaemon(true);
    return t;
  });
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  private int onTheWire;
  private boolean stopped;

  final AtomicLong calls = new AtomicLong();
  final AtomicLong inputs = new AtomicLong();
  /** Sum of the real durations of calls on the wire: what the timers actually delivered. */
  final AtomicLong wireNanos = new AtomicLong();
  /** Told of every call as it ends, on the store's context (null: nobody listens). */
  Trace trace;

  /** A listener told of each call when it ends, on the store's context: for breakdowns of where time went. */
  interface Trace {
    /**
     * @param result what the call completes with (the scenarios pass the key)
     * @param calledAt when {@link #call} was invoked; {@code startedAt}: when the call went on the wire (after
     *     the hop onto the store's context and any wait for a connection); {@code doneAt}: when its timer fired
     */
    void ended(Object result, int inputs, long calledAt, long startedAt, long doneAt);
  }

  SimStore(Context context, long roundTripNanos, long perInputNanos, int connections) {
    this.context = context;
    this.roundTripNanos = roundTripNanos;
    this.perInputNanos = perInputNanos;
    this.connections = connections;
  }

  /** The nominal duration of a call carrying {@code n} inputs. */
  long nominalNanos(int n) {
    return roundTripNanos + n * perInputNanos;
  }

  /** One call carrying {@code n} inputs; completes with {@code result}, on the store's context. */
  <T> Future<T> call(int n, T result) {
    Promise<T> promise = Promise.promise();
    long calledAt = System.nanoTime();
    context.runOnContext(v -> {
      if (stopped) {
        promise.fail("store stopped");
      } else if (connections == 0 || onTheWire < connections) {
        start(n, result, promise, calledAt);
      } else {
        waiting.add(new Waiting(() -> start(n, result, promise, calledAt), promise));
      }
    });
    return promise.future();
  }

  private <T> void start(int n, T result, Promise<T> promise, long calledAt) {
    onTheWire++;
    long began = System.nanoTime();
    Runnable done = () -> {
      long end = System.nanoTime();
      wireNanos.addAndGet(end - began);
      if (trace != null) {
        trace.ended(result, n, calledAt, began, end);
      }
      calls.incrementAndGet();
      inputs.addAndGet(n);
      onTheWire--;
      promise.complete(result);
      startWaiting();
    };
    long nanos = nominalNanos(n);
    if (nanos < 1_000_000) {
      FINE_TIMER.schedule(() -> context.runOnContext(v -> done.run()), nanos, TimeUnit.NANOSECONDS);
    } else {
      context.owner().timer(nanos, TimeUnit.NANOSECONDS).onComplete(t -> done.run());
    }
  }

  private void startWaiting() {
    while (!waiting.isEmpty() && (connections == 0 || onTheWire < connections)) {
      waiting.poll().start.run();
    }
  }

  /** Changes the pool size (at least 1); calls beyond it finish, new ones wait. */
  void resize(int size) {
    context.runOnContext(v -> {
      connections = size;
      startWaiting();
    });
  }

  /** Calls on the wire now (read on the harness thread: approximate). */
  int onTheWire() {
    return onTheWire;
  }

  /** A call waiting for a connection. */
  private record Waiting(Runnable start, Promise<?> promise) {}

  /** Mean real duration of a completed call, in nanoseconds (0 before the first). */
  double meanWireNanos() {
    long c = calls.get();
    return c == 0 ? 0 : wireNanos.get() / (double) c;
  }

  /** Fails every waiting call so an overloaded contender's backlog does not spill into the next run. */
  Future<Void> stop() {
    Promise<Void> done = Promise.promise();
    context.runOnContext(v -> {
      stopped = true;
      for (Waiting w = waiting.poll(); w != null; w = waiting.poll()) {
        w.promise.tryFail("store stopped");
      }
      done.complete();
    });
    return done.future();
  }
}
