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
        open.remove(key, this);
      }
    }
  }

  private final Vertx vertx;
  private final String address;
  private final List<Call> calls = new ArrayList<>();
  private final Map<Integer, Promise<Call>> awaited = new HashMap<>();
  private final Map<String, Call> open = new HashMap<>();
  /** Whether a call its sender no longer waits for (send timeout) counts as over. */
  private volatile boolean givenUpCallsAreOver;
  private final Set<String> seenIds = new HashSet<>();
  final List<String> violations = new ArrayList<>();
  private volatile Consumer<Call> auto;
  private MessageConsumer<Object> consumer;

  EbRecorder(Vertx vertx, String address) {
    this.vertx = vertx;
    this.address = address;
  }

  /**
   * Counts a call its sender has given up (its send timeout fired) as over. The sender's own event
   * bus says so: Vert.x removes a request's reply handler when its send timeout fires, before the
   * sender hears of the failure and can send the key's next call. Timing it from here cannot work:
   * Vert.x arms the send timeout a moment before the call goes out, and a loaded machine may
   * stretch that moment past the time between the timeout and the next call (1 run in 50 beside
   * busy loops saw "two calls in flight" when the ferry had done nothing wrong).
   */
  EbRecorder givenUpCallsAreOver() {
    givenUpCallsAreOver = true;
    return this;
  }

  /** Whether the sender of {@code call} still waits for its reply: its reply address has a handler. */
  private boolean awaited(Call call) {
    String replyAddress = call.message.replyAddress();
    return replyAddress != null && replyHandlers().containsKey(replyAddress);
  }

  /** The event bus's handlers by address (Vert.x has no public way to ask whether one is there). */
  private Map<?, ?> replyHandlers() {
    try {
      java.lang.reflect.Field f = io.vertx.core.eventbus.impl.EventBusImpl.class.getDeclaredField("handlerMap");
      f.setAccessible(true);
      return (Map<?, ?>) f.get(vertx.eventBus());
    } catch (ReflectiveOperationException e) {
      throw new AssertionError("cannot read the event bus's handlers", e);
    }
  }

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
      Call before = open.put(call.key, call);
      // The recorder sees this call after the ferry sent it, and the ferry sent it after whatever
      // it did before: a reply handler of the earlier call still there means both are open.
      if (before != null && (!givenUpCallsAreOver || awaited(before))) {
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
