package dev.ferry.verticle;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * An event-bus downstream for tests: records every batch call and holds it until the test answers,
 * so tests decide when each call is over instead of sleeping. It also checks, on every call, that
 * its key has no other call open (guarantee 2) and that no input id arrives twice (sent at most
 * once); violations are collected for the test to assert on. Test code: plain locks are fine here.
 */
final class EbRecorder {
  /** One recorded batch call. */
  final class Call {
    final int index;
    final String key;
    final JsonArray inputs;
    /** When the call reached this downstream ({@link System#nanoTime()}). */
    final long arrivedAt = System.nanoTime();
    private final Message<Object> message;
    private boolean answered;
    /** Answered by the recorder's auto answer as it arrived (set under the recorder's lock). */
    private boolean autoAnswered;

    Call(int index, String key, JsonArray inputs, Message<Object> message) {
      this.index = index;
      this.key = key;
      this.inputs = inputs;
      this.message = message;
    }

    /** The request body as this downstream received it. */
    JsonObject request() {
      return (JsonObject) message.body();
    }

    List<Object> bodies() {
      List<Object> out = new ArrayList<>();
      for (int i = 0; i < inputs.size(); i++) {
        out.add(inputs.getJsonObject(i).getValue("input"));
      }
      return out;
    }

    /** Answers every input with {@code {"ok": <its input>}}. */
    void echo() {
      JsonArray outcomes = new JsonArray();
      for (Object body : bodies()) {
        outcomes.add(new JsonObject().put("ok", body));
      }
      reply(new JsonObject().put("outcomes", outcomes));
    }

    void reply(Object body) {
      over();
      message.reply(body);
    }

    void fail(int code, String text) {
      over();
      message.fail(code, text);
    }

    /**
     * The sender gave up on this call (the test knows it did: its verticle undeployed, say): it no
     * longer counts as in flight, and it is never answered.
     */
    void abandoned() {
      over();
    }

    private void over() {
      synchronized (EbRecorder.this) {
        if (answered) {
          throw new IllegalStateException("call " + index + " answered twice by the test");
        }
        answered = true;
        open.remove(key);
      }
    }
  }

  private final Vertx vertx;
  private final String address;
  private final List<Call> calls = new ArrayList<>();
  private final Map<Integer, Promise<Call>> awaited = new HashMap<>();
  private final Map<String, Long> open = new HashMap<>();
  /** A call open longer than this was given up by its sender (send timeout): no longer in flight. */
  private volatile long abandonAfterNanos = Long.MAX_VALUE;
  private final Set<String> seenIds = new HashSet<>();
  final List<String> violations = new ArrayList<>();
  private volatile Consumer<Call> auto;
  private MessageConsumer<Object> consumer;

  EbRecorder(Vertx vertx, String address) {
    this.vertx = vertx;
    this.address = address;
  }

  /**
   * Counts a call open for {@code ms} as given up by the ferry's send timeout. Measured between the
   * moments the ferry sent the two calls (an outbound interceptor stamps each call as it is sent),
   * never from their arrival here: a call delivered late on a loaded machine is not taken for one
   * sent early, and the ferry's timer never fires before its delay.
   */
  EbRecorder abandonAfter(long ms) {
    abandonAfterNanos = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(ms);
    vertx.eventBus().addOutboundInterceptor(ctx -> {
      if (address.equals(ctx.message().address()) && ctx.message().isSend()) {
        ctx.message().headers().set(SENT_AT, Long.toString(System.nanoTime()));
      }
      ctx.next();
    });
    return this;
  }

  /** The header the interceptor of {@link #abandonAfter} stamps a call with: when the ferry sent it. */
  private static final String SENT_AT = "x-recorder-sent-nanos";

  /** Answers every call with {@code answer} as it arrives, instead of holding it. */
  EbRecorder auto(Consumer<Call> answer) {
    this.auto = answer;
    return this;
  }

  Future<Void> start() {
    consumer = vertx.eventBus().consumer(address, this::handle);
    return consumer.completion();
  }

  Future<Void> stop() {
    return consumer.unregister();
  }

  private void handle(Message<Object> m) {
    JsonObject request = (JsonObject) m.body();
    Call call;
    Promise<Call> waiter;
    Consumer<Call> answer;
    synchronized (this) {
      call = new Call(calls.size(), request.getString("key"), request.getJsonArray("inputs"), m);
      calls.add(call);
      String stamped = m.headers().get(SENT_AT);
      long sent = stamped != null ? Long.parseLong(stamped) : System.nanoTime();
      Long since = open.put(call.key, sent);
      if (since != null && sent - since < abandonAfterNanos) {
        violations.add("key " + call.key + " has two calls in flight (call " + call.index + ")");
      }
      for (int i = 0; i < call.inputs.size(); i++) {
        String id = call.inputs.getJsonObject(i).getString("id");
        if (id != null && !seenIds.add(id)) {
          violations.add("input " + id + " sent twice");
        }
      }
      waiter = awaited.remove(call.index);
      // Read with the call's registration, atomically against releaseAll: a call is answered
      // either here or by releaseAll, never by both (the test thread may run releaseAll as soon
      // as the waiter below wakes it).
      answer = auto;
      call.autoAnswered = answer != null;
    }
    if (waiter != null) {
      waiter.complete(call);
    }
    if (answer != null) {
      answer.accept(call);
    }
  }

  /**
   * Echoes every call still open and every later one, so that undeploying (when the test's Vert.x
   * closes) does not wait for calls the test left held.
   */
  void releaseAll() {
    List<Call> held;
    synchronized (this) {
      auto = Call::echo;
      held = calls.stream().filter(c -> !c.answered && !c.autoAnswered).toList();
    }
    held.forEach(Call::echo);
  }

  /** Completes when call {@code index} (from 0) has arrived. */
  synchronized Future<Call> call(int index) {
    if (index < calls.size()) {
      return Future.succeededFuture(calls.get(index));
    }
    return awaited.computeIfAbsent(index, i -> Promise.promise()).future();
  }

  synchronized int count() {
    return calls.size();
  }

  synchronized List<Call> calls() {
    return List.copyOf(calls);
  }

  synchronized List<String> violations() {
    return List.copyOf(violations);
  }
}
