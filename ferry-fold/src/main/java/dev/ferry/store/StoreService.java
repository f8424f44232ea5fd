package dev.ferry.store;

import dev.ferry.FoldOutcome;
import dev.ferry.FoldOutcomes;
import dev.ferry.FoldWrite;
import dev.ferry.WriteOutcomeUnknownException;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
 */
public final class StoreService {
  private final Context context;
  private final Map<String, ArrayDeque<Message<Object>>> writing = new HashMap<>();
  private MessageConsumer<Object> consumer;
  private boolean stopped;

  private StoreService(Context context) {
    this.context = context;
  }

  /**
   * Registers the service at {@code address}; completes once the registration is in place.
   *
   * @param inputType the FoldWrite's input type ({@code Object.class} takes any JSON value)
   */
  public static <I> Future<StoreService> start(
      Vertx vertx, String address, FoldWrite<String, ?, I, ?> foldWrite, Class<I> inputType) {
    // Captured once and registered on: the consumer's handler then runs where the service's state
    // lives (from a non-Vert.x thread, each getOrCreateContext() would be a new context).
    StoreService service = new StoreService(vertx.getOrCreateContext());
    Promise<StoreService> started = Promise.promise();
    service.onContext(() -> {
      service.consumer = vertx.eventBus().consumer(address, msg -> service.arrived(msg, foldWrite, inputType));
      service.consumer.completion().map(service).onComplete(started);
    });
    return started.future();
  }

  /**
   * Unregisters the service. Batches being written still reply; batches waiting behind one of
   * their key are failed with 503, nothing of them written.
   */
  public Future<Void> stop() {
    Promise<Void> stopped = Promise.promise();
    onContext(() -> {
      this.stopped = true;
      for (ArrayDeque<Message<Object>> waiting : writing.values()) {
        for (Message<Object> msg; (msg = waiting.poll()) != null; ) {
          msg.fail(503, "batch not written: the store service stopped before its turn");
        }
      }
      consumer.unregister().onComplete(stopped);
    });
    return stopped.future();
  }

  private <I> void arrived(Message<Object> msg, FoldWrite<String, ?, I, ?> foldWrite, Class<I> inputType) {
    String key = msg.body() instanceof JsonObject body && body.getValue("key") instanceof String k ? k : null;
    if (key == null) {
      handle(msg, foldWrite, inputType); // malformed: answered at once, writes nothing
      return;
    }
    ArrayDeque<Message<Object>> waiting = writing.get(key);
    if (waiting != null) {
      waiting.add(msg);
      return;
    }
    writing.put(key, new ArrayDeque<>());
    run(key, msg, foldWrite, inputType);
  }

  private <I> void run(String key, Message<Object> msg, FoldWrite<String, ?, I, ?> foldWrite, Class<I> inputType) {
    Future<Void> over;
    try {
      over = handle(msg, foldWrite, inputType);
    } catch (Throwable e) {
      next(key, foldWrite, inputType);
      throw e; // only what rethrowIfFatal rethrows: the request was answered
    }
    // The store's futures may complete on any thread: the key moves on back on the context, always
    // a turn later, so that batches answered at once do not nest one call per waiting batch.
    over.onComplete(ar -> context.runOnContext(v -> next(key, foldWrite, inputType)));
  }

  /** The key's write is over: its next waiting batch runs, or the key is free. */
  private <I> void next(String key, FoldWrite<String, ?, I, ?> foldWrite, Class<I> inputType) {
    ArrayDeque<Message<Object>> waiting = writing.get(key);
    Message<Object> msg = waiting == null ? null : waiting.poll();
    if (msg == null || stopped) {
      writing.remove(key);
      return;
    }
    run(key, msg, foldWrite, inputType);
  }

  private void onContext(Runnable action) {
    if (Vertx.currentContext() == context) {
      action.run();
    } else {
      context.runOnContext(v -> action.run());
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
            ? "batch may or may not have been written: " : "batch not written: ") + ar.cause().getMessage());
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
        msg.fail(502, "batch written, but its outcomes cannot be sent as JSON: " + e);
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
