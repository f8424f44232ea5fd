package dev.ferry.store;

import dev.ferry.FoldOutcome;
import dev.ferry.FoldOutcomes;
import dev.ferry.FoldWrite;
import dev.ferry.WriteOutcomeUnknownException;
import dev.ferry.internal.LogText;
import dev.ferry.internal.VertxLoop;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A downstream on the event bus that runs a {@link FoldWrite} over a store: it answers Ferry's
 * downstream protocol, so a FerryVerticle with {@code "downstream": {"type": "eventbus", "address":
 * ...}} writes to a real database.
 *
 * <p>Request {@code {"key": k, "inputs": [{"id": .., "input": ..}, ..]}}; reply {@code {"outcomes":
 * [{"ok": result} | {"error": reason}, ..]}}, one per input in order. A malformed request is failed
 * with 400; a batch that could not be written (store down, conflicts on every attempt) with 502, so
 * every caller of that batch gets FAILED; its text says "may or may not have been written" when the
 * write failed without an answer. Inputs that are not of the FoldWrite's input type are
 * rejected one by one and never reach the fold.
 *
 * <p>One batch per key at a time: a batch for a key whose previous batch is still being written
 * waits for it. A sender that gave up on a batch (the verticle's call timeout) sends the key's next
 * one at once, while the first may still be written: run side by side, the later batch could land
 * first and the earlier one be folded again over it (ADR 0138). The waiting batches and the keys
 * being written are touched on the service's context only.
 *
 * <p>A batch that waits behind its key longer than {@code maxWait} (30 s, the verticle's default
 * call timeout, unless given) is answered 503 then, nothing of it written: its sender has given up on it
 * by then, and written late it would apply after its callers were told FAILED, and maybe retried.
 * This also bounds what a key whose write hangs (a row lock held elsewhere) can pile up.
 */
public final class StoreService {
  /** How long a batch may wait behind its key unless {@link #start(Vertx, String, FoldWrite, Class, Duration, int)} says. */
  public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(30);

  /** The 503 of a batch that arrived, or waited, until the service stopped: nothing of it written. */
  private static final String STOPPED = "batch not written: the store service stopped before its turn";

  /** A batch waiting behind its key's write, and when it arrived (nanos of {@link System#nanoTime}). */
  private static final class Waiting {
    final Message<Object> msg;
    final long arrived;
    /** Its maxWait timer, -1: none. */
    long timer = -1;

    Waiting(Message<Object> msg, long arrived) {
      this.msg = msg;
      this.arrived = arrived;
    }
  }

  /** The consumer's context: where batches arrive and are handed to their key's partition. */
  private final Context context;
  /** Each key belongs to one, by its hash; each partition's state is touched on its context only. */
  private final Partition[] partitions;
  private MessageConsumer<Object> consumer;

  private StoreService(Partition[] partitions) {
    this.context = partitions[0].context;
    this.partitions = partitions;
  }

  /**
   * Registers the service at {@code address} on one context; completes once the registration is in
   * place.
   *
   * @param inputType the FoldWrite's input type ({@code Object.class} takes any JSON value)
   */
  public static <I> Future<StoreService> start(
      Vertx vertx, String address, FoldWrite<String, ?, I, ?> foldWrite, Class<I> inputType) {
    return start(vertx, address, foldWrite, inputType, DEFAULT_MAX_WAIT, 1);
  }

  /**
   * As {@link #start(Vertx, String, FoldWrite, Class)}, with how long a batch may wait behind its
   * key's write before it is answered 503, not written (set it to the senders' call timeout), and
   * over how many contexts the keys are spread: each key's batches run on one of them, by the key's
   * hash, so different keys' folds and store calls run side by side while one key still has one
   * batch at a time. Called from a thread that is not Vert.x's, each context is a new one (an event
   * loop each, round robin); called on a context, they are all that context.
   *
   * @throws IllegalArgumentException if {@code maxWait} is not positive or {@code contexts} below 1
   * @throws NullPointerException if {@code vertx}, {@code address}, {@code foldWrite} or {@code inputType} is null
   */
  public static <I> Future<StoreService> start(Vertx vertx, String address, FoldWrite<String, ?, I, ?> foldWrite,
      Class<I> inputType, Duration maxWait, int contexts) {
    // Refused here, at the call: a null address threw later on the service's context, where the
    // returned Future was never completed, and a null type in every request's handler, which then
    // went unanswered (review Q).
    Objects.requireNonNull(vertx, "vertx");
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(foldWrite, "foldWrite");
    Objects.requireNonNull(inputType, "inputType");
    if (maxWait == null || maxWait.isNegative() || maxWait.isZero()) {
      throw new IllegalArgumentException("maxWait must be a positive duration, got " + maxWait);
    }
    if (contexts < 1) {
      throw new IllegalArgumentException("contexts must be at least 1, got " + contexts);
    }
    long maxWaitNanos;
    try {
      maxWaitNanos = maxWait.toNanos();
    } catch (ArithmeticException beyondNanos) {
      maxWaitNanos = Long.MAX_VALUE; // about 292 years: no bound in practice
    }
    Partition[] partitions = new Partition[contexts];
    for (int i = 0; i < contexts; i++) {
      // Captured once: each partition's batches then run where its state lives.
      partitions[i] = new Partition(vertx.getOrCreateContext(), maxWaitNanos);
    }
    StoreService service = new StoreService(partitions);
    Promise<StoreService> started = Promise.promise();
    onContext(service.context, () -> {
      service.consumer = vertx.eventBus().consumer(address, msg -> service.arrived(msg, foldWrite, inputType));
      service.consumer.completion().map(service).onComplete(started);
    });
    return started.future();
  }

  /**
   * Unregisters the service. Batches waiting behind one of their key are failed with 503, nothing
   * of them written; batches being written finish and reply, and this Future completes once they
   * have: then the store's pool can be closed (ADR 0156). A write that never ends keeps it waiting:
   * bound the wait ({@code stop().timeout(...)}) if the store's futures might not complete.
   */
  public Future<Void> stop() {
    List<Future<Void>> stops = new ArrayList<>();
    for (Partition p : partitions) {
      Promise<Void> stopped = Promise.promise();
      onContext(p.context, () -> p.stop().onComplete(stopped));
      stops.add(stopped.future());
    }
    Promise<Void> unregistered = Promise.promise();
    onContext(context, () -> consumer.unregister().onComplete(unregistered));
    stops.add(unregistered.future());
    return Future.all(stops).mapEmpty();
  }

  /** On the consumer's context: a malformed batch is answered here, the others go to their key's partition. */
  private <I> void arrived(Message<Object> msg, FoldWrite<String, ?, I, ?> foldWrite, Class<I> inputType) {
    String key = msg.body() instanceof JsonObject body && body.getValue("key") instanceof String k ? k : null;
    if (key == null) {
      handle(msg, foldWrite, inputType); // malformed: answered at once, writes nothing
      return;
    }
    Partition p = partitions[Math.floorMod(key.hashCode(), partitions.length)];
    // Handed over in arrival order: one context's tasks run in the order they were queued.
    onContext(p.context, () -> p.arrived(key, msg, foldWrite, inputType));
  }

  /**
   * Runs {@code action} on {@code context}: inline when already there, on its own thread. A blocking
   * task of the context (its executeBlocking) runs on a worker thread where Vert.x names the context
   * current; run inline there, a partition's state was changed beside its event loop (review O).
   */
  static void onContext(Context context, Runnable action) {
    if (VertxLoop.onOwnThread(context)) {
      action.run();
    } else {
      context.runOnContext(v -> action.run());
    }
  }

  /** The keys of one context: those being written, and the batches waiting behind each. On its context only. */
  private static final class Partition {
    final Context context;
    private final long maxWaitNanos;
    private final Map<String, ArrayDeque<Waiting>> writing = new HashMap<>();
    private boolean stopped;
    /** Set by stop(): completes once no key of this partition is being written. */
    private Promise<Void> drained;

    Partition(Context context, long maxWaitNanos) {
      this.context = context;
      this.maxWaitNanos = maxWaitNanos;
    }

    <I> void arrived(String key, Message<Object> msg, FoldWrite<String, ?, I, ?> foldWrite, Class<I> inputType) {
      if (stopped) {
        msg.fail(503, STOPPED);
        return;
      }
      ArrayDeque<Waiting> waiting = writing.get(key);
      if (waiting != null) {
        long now = System.nanoTime();
        dropOverdue(waiting, now); // what a hung write piles up stays bounded while it hangs
        Waiting w = new Waiting(msg, now);
        waiting.add(w);
        if (maxWaitNanos < Long.MAX_VALUE) {
          // Answered at maxWait even if nothing else happens to its key (a write that hangs, no
          // other batch arriving): its sender is waiting for that answer (hostile review).
          w.timer = context.owner().setTimer(maxWaitNanos / 1_000_000 + 1, id -> {
            w.timer = -1;
            if (waiting.remove(w)) {
              overdue(w);
            }
          });
        }
        return;
      }
      writing.put(key, new ArrayDeque<>());
      run(key, msg, foldWrite, inputType);
    }

    /** Answers the waiting batches; the returned Future completes once the running ones are over. */
    Future<Void> stop() {
      stopped = true;
      for (ArrayDeque<Waiting> waiting : writing.values()) {
        for (Waiting w; (w = waiting.poll()) != null; ) {
          cancel(w);
          w.msg.fail(503, STOPPED);
        }
      }
      if (drained == null) {
        drained = Promise.promise();
      }
      if (writing.isEmpty()) {
        drained.tryComplete();
      }
      return drained.future();
    }

    private <I> void run(String key, Message<Object> msg, FoldWrite<String, ?, I, ?> foldWrite, Class<I> inputType) {
      Future<Void> over;
      try {
        over = handle(msg, foldWrite, inputType);
      } catch (Throwable e) {
        next(key, foldWrite, inputType);
        throw e; // only what rethrowIfFatal rethrows: the request was answered
      }
      // The store's futures may complete on any thread: the key moves on back on the context,
      // always a turn later, so that batches answered at once do not nest one call per waiting batch.
      over.onComplete(ar -> context.runOnContext(v -> next(key, foldWrite, inputType)));
    }

    /** The key's write is over: its next waiting batch runs, or the key is free. */
    private <I> void next(String key, FoldWrite<String, ?, I, ?> foldWrite, Class<I> inputType) {
      ArrayDeque<Waiting> waiting = writing.get(key);
      if (waiting != null) {
        dropOverdue(waiting, System.nanoTime());
      }
      Waiting next = waiting == null ? null : waiting.poll();
      if (next == null || stopped) {
        writing.remove(key);
        if (drained != null && writing.isEmpty()) {
          drained.tryComplete(); // stopped, and the last write running then is over
        }
        return;
      }
      cancel(next);
      run(key, next.msg, foldWrite, inputType);
    }

    /** Answers 503 (not written) the batches at the head of {@code waiting} that waited past maxWait. */
    private void dropOverdue(ArrayDeque<Waiting> waiting, long now) {
      for (Waiting w = waiting.peek(); w != null && now - w.arrived > maxWaitNanos; w = waiting.peek()) {
        waiting.poll();
        cancel(w);
        overdue(w);
      }
    }

    private void overdue(Waiting w) {
      w.msg.fail(503, "batch not written: it waited behind its key's write in progress for more than "
          + (maxWaitNanos / 1_000_000) + " ms (its sender has given up on it)");
    }

    private void cancel(Waiting w) {
      if (w.timer >= 0) {
        context.owner().cancelTimer(w.timer);
        w.timer = -1;
      }
    }
  }

  /** Answers one batch request; the returned Future completes (either way) once its write is over. */
  private static <I> Future<Void> handle(Message<Object> msg, FoldWrite<String, ?, I, ?> foldWrite, Class<I> inputType) {
    String key;
    JsonArray inputs;
    try {
      JsonObject body = (JsonObject) msg.body();
      key = body.getString("key");
      inputs = body.getJsonArray("inputs");
      if (key == null || inputs == null) {
        throw new IllegalArgumentException("key and inputs are required");
      }
    } catch (Throwable e) {
      msg.fail(400, "malformed batch request: " + e.getMessage());
      rethrowIfFatal(e);
      return Future.succeededFuture();
    }
    // Inputs of the wrong type are answered here, in place; the rest go to the fold in order.
    List<I> typed = new ArrayList<>();
    JsonObject[] replies = new JsonObject[inputs.size()];
    for (int i = 0; i < inputs.size(); i++) {
      Object entry = inputs.getValue(i);
      Object input = entry instanceof JsonObject o ? o.getValue("input") : null;
      if (inputType.isInstance(input)) {
        typed.add(inputType.cast(input));
      } else {
        // Named by its type, not quoted: quoting encodes the entry, which throws for one JSON cannot
        // encode (sent uncopied by a local sender), and a caller's input has no place in the text.
        String got = !(entry instanceof JsonObject) ? "an entry that is not an object"
            : input == null ? "null" : input.getClass().getSimpleName();
        replies[i] = new JsonObject().put("error", "expected an input of type " + inputType.getSimpleName() + ", got " + got);
      }
    }
    Future<? extends FoldOutcomes<I, ?>> done;
    try {
      done = typed.isEmpty() ? Future.succeededFuture(null) : foldWrite.call(key, typed);
    } catch (Throwable e) {
      // A store that throws instead of failing its Future, an Error included: the request must
      // still get its one answer, not wait for the sender's timeout.
      done = Future.failedFuture(e);
    }
    done.onComplete(ar -> {
      if (ar.failed()) {
        // Only a write without an answer may have been applied; every other failure wrote nothing.
        msg.fail(502, (ar.cause() instanceof WriteOutcomeUnknownException
            ? "batch may or may not have been written: " : "batch not written: ") + LogText.message(ar.cause()));
        rethrowIfFatal(ar.cause());
        return;
      }
      // Every request gets exactly one answer: a result that cannot travel as JSON fails the batch.
      try {
        JsonArray outcomes = new JsonArray();
        int next = 0;
        for (JsonObject reply : replies) {
          outcomes.add(reply != null ? reply : toJson(ar.result().list().get(next++)));
        }
        msg.reply(new JsonObject().put("outcomes", outcomes));
      } catch (Throwable e) {
        // Vert.x copies the reply's JSON as it is sent, and a result may be a user's CharSequence or
        // Shareable: what its toString() or copy() throws, an Error or a checked exception thrown
        // sneakily included, must still leave the request its one answer.
        msg.fail(502, "batch written, but its outcomes cannot be sent as JSON: " + LogText.describe(e));
        rethrowIfFatal(e);
      }
    });
    return done.mapEmpty();
  }

  /**
   * Answered, but not swallowed: out of memory or stack must reach Vert.x's exception handler (the
   * context reports what a handler throws), not vanish into a reply's text.
   */
  private static void rethrowIfFatal(Throwable e) {
    if (e instanceof VirtualMachineError fatal) {
      throw fatal;
    }
  }

  private static JsonObject toJson(FoldOutcome<?> outcome) {
    if (outcome instanceof FoldOutcome.Applied<?> applied) {
      return new JsonObject().put("ok", applied.result());
    }
    return new JsonObject().put("error", ((FoldOutcome.Rejected<?>) outcome).reason());
  }
}
