package dev.ferry.verticle;

import dev.ferry.FerryError;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.bridge.BridgeEventType;
import io.vertx.ext.bridge.BridgeOptions;
import io.vertx.ext.bridge.PermittedOptions;
import io.vertx.ext.eventbus.bridge.tcp.TcpEventBusBridge;
import java.util.function.Supplier;

/**
 * The TCP event-bus bridge of {@link Operations}, apart so that Operations loads without the
 * optional vertx-tcp-eventbus-bridge jar: only loaded when the config asks for a bridge and
 * {@link OptionalJars} has found it. Runs on the verticle's context.
 *
 * <p>Clustered, a bridge client's inputs enter the cluster at this node, in the order they came
 * over its socket: each send to the submit address is delivered local-only (the bridge's own
 * {@code localOnly} header, set here whatever the client sent), to a local-only consumer of that
 * address, which hands it to this node's router like any input of the public address. Without
 * that, the clustered event bus would spread one client's inputs over every node (round robin),
 * each taking its own path to the key's owner. The local consumer stays until the bridge is
 * closed, so that a leaving node still forwards its bridge clients' inputs after it stopped
 * taking the public address's (docs/guide/clustering.md, "What each path guarantees").
 *
 * <p>A frame longer than {@code maxFrameBytes} is never buffered: an error frame, then the socket is
 * closed ({@link BridgeFrameLimit}, ADR 0104). A connection that brings no whole frame for
 * {@code idleTimeoutMs} (a ping is one) gets an error frame and is closed (ADR 0166).
 *
 * <p>A frame that the bridge itself would fail on after the hook (headers that are not an object,
 * a null header value, a non-numeric {@code timeout}, a {@code codecName}), whatever its address,
 * a frame to an address a client may not reach, and any publish to the submit address (clustered,
 * each node's consumer would apply it) are refused at once, in Ferry's words (ADR 0190): a send
 * with a {@code replyAddress} gets an error frame at that address with a failure code and a message
 * naming what was wrong, any other frame the same with no address; the socket goes on. A frame the
 * bridge cannot decode, or fails on before the hook, gets an error frame and its socket is closed
 * ({@link BridgeFrameLimit}, ADR 0135).
 *
 * <p>Vert.x hands a local send to every local consumer of its address in turn, the verticle's
 * public consumer included, and other senders on this node reach the local consumer too: the hook
 * marks the bridge's sends ({@link #MARK}), and both consumers count a marked input answered at
 * its first reply ({@link #entry()}).
 *
 * <p>Closing, clustered: the bridge first refuses new sends to the submit address (the client gets
 * 503 at once: not delivered), waits until every input it took was answered (bounded by
 * {@code maxWaitMs}), and only then closes its sockets, so that no reply is lost with them (ADR
 * 0094). The count of open inputs is kept on the verticle's event loop, where the bridge's server
 * was created and runs its sockets (asserted).
 */
final class BridgeSupport {
  /**
   * The header the hook puts on each send to the submit address, with a value only this bridge
   * knows: Vert.x hands a local send to the node's consumers of the address in turn (the public
   * one too), and other senders on this node reach the local consumer as well, so it is the mark,
   * not the consumer, that says "one of the bridge's inputs".
   */
  static final String MARK = "__ferry.bridge";

  private final Vertx vertx;
  private final VerticleConfig settings;
  private final OpsConfig.Bridge bridge;
  private final Handler<Message<Object>> entry;
  private final long maxWaitMs;
  private final Open open;
  private final String token = java.util.UUID.randomUUID().toString();
  /** The verticle's context: the bridge, its consumers and the count run there. */
  private final io.vertx.core.Context context;

  /**
   * {@code entry} takes the inputs of the submit address; {@link #entry()} is what both of this
   * node's consumers of that address must use instead.
   */
  BridgeSupport(Vertx vertx, VerticleConfig settings, OpsConfig.Bridge bridge, Handler<Message<Object>> entry,
      long maxWaitMs) {
    this.vertx = vertx;
    this.settings = settings;
    this.bridge = bridge;
    this.entry = entry;
    this.maxWaitMs = maxWaitMs;
    this.open = vertx.isClustered() ? new Open(vertx) : null;
    this.context = vertx.getOrCreateContext();
  }

  /**
   * The handler for every consumer of the submit address on this node: the bridge's inputs (the
   * hook's mark) are counted answered at their first reply, whichever consumer took them; any
   * other input goes to {@code entry} untouched.
   */
  Handler<Message<Object>> entry() {
    if (open == null) {
      return entry;
    }
    return m -> entry.handle(token.equals(m.headers().get(MARK)) ? new Answered(m, open) : m);
  }

  /**
   * Clustered: counts one more input of the bridge and marks its frame to enter at this node
   * ({@code localOnly}: the socket's order is kept, ADR 0094) as the bridge's ({@link #MARK});
   * false when the bridge is closing (the send is refused).
   */
  boolean enter(JsonObject raw) {
    if (!open.take()) {
      return false;
    }
    JsonObject headers = raw.getJsonObject("headers");
    if (headers == null) {
      headers = new JsonObject();
      raw.put("headers", headers);
    }
    headers.put("localOnly", true);
    headers.put(MARK, token);
    return true;
  }

  /**
   * A consumer of the submit address discarded {@code m} as it was being unregistered, and
   * answered it (NO_HANDLERS): if it was one of the bridge's inputs, it is answered, counted on
   * the verticle's event loop. Vert.x hands the bridge's local sends to the verticle's public
   * consumer too, which a leave unregisters while the bridge still sends. Any thread.
   */
  void discarded(Message<Object> m) {
    if (open == null || !token.equals(m.headers().get(MARK))) {
      return;
    }
    if (Thread.currentThread() == open.loop) {
      open.answered();
    } else {
      context.runOnContext(v -> open.answered());
    }
  }

  /**
   * Why the bridge could not deliver this frame once the hook lets it through, in the words of the
   * frame, or null: headers that are not an object, a header whose value is null, a {@code timeout}
   * that is not a number of ms >= 1, a {@code localOnly} that is not a boolean, or a {@code
   * codecName} (a client does not choose codecs) make the bridge itself throw after the hook ran (a
   * ClassCastException, an unknown codec): no frame for the client, the socket's parser left
   * mid-frame, and the input counted open for good. The bridge reads every frame's headers first,
   * whatever its type and address.
   */
  static String undeliverable(JsonObject raw) {
    Object headers = raw.getValue("headers");
    if (headers == null) {
      return null;
    }
    if (!(headers instanceof JsonObject h)) {
      return "\"headers\" is " + quoted(headers) + ": the bridge takes an object of header names to values"
          + " (strings, numbers or booleans)";
    }
    for (String name : h.fieldNames()) {
      if (h.getValue(name) == null) {
        // The bridge adds each header to a MultiMap, which throws on null: the socket answered
        // nothing more, this frame or any after it.
        return "the header " + quoted(name) + " is null: a header needs a value (a string, number or boolean)";
      }
    }
    Object timeout = h.getValue("timeout");
    if (timeout != null && !(timeout instanceof Number n && n.longValue() >= 1)) {
      return "the header \"timeout\" is " + quoted(timeout) + ": the bridge takes a number of ms >= 1 there";
    }
    // The bridge casts localOnly to a Boolean: anything else threw past the hook, and the guard
    // closed the connection (the replies of the client's inputs in flight lost with it).
    Object localOnly = h.getValue("localOnly");
    if (localOnly != null && !(localOnly instanceof Boolean)) {
      return "the header \"localOnly\" is " + quoted(localOnly) + ": the bridge takes true or false there";
    }
    if (h.containsKey("codecName")) {
      return "the header \"codecName\" is given (" + quoted(h.getValue("codecName"))
          + "): a bridge client does not choose codecs; leave it out";
    }
    return null;
  }

  /** Whether the bridge can deliver this frame once the hook lets it through ({@link #undeliverable}). */
  static boolean deliverable(JsonObject raw) {
    return undeliverable(raw) == null;
  }

  /** A value of the client's frame as its JSON, cut at 64 characters: no answer quotes a huge one. */
  static String quoted(Object value) {
    String json;
    try {
      json = io.vertx.core.json.Json.encode(value);
    } catch (RuntimeException notJson) {
      json = dev.ferry.internal.LogText.escape(value);
    }
    return json.length() > 64 ? json.substring(0, 64) + "..." : json;
  }

  /**
   * A refusal of the hook: the failure code and the reason, in the words of the frame. Written to
   * the client by {@link #refuse} in place of the bridge's own answer (ADR 0190).
   */
  record Refusal(int code, String why) {}

  /**
   * Why the hook refuses this frame, or null. {@code permitted} are the addresses a client may send
   * to, the submit address first. The bridge lets a frame through to an address not permitted only
   * when it is a reply to a request the bridge delivered to this client; a client is never sent one
   * (no outbound address is permitted, and Ferry never replies with a request), so the bridge would
   * answer {@code access_denied} to any of them.
   */
  static Refusal refusal(BridgeEventType type, JsonObject raw, String address, java.util.List<String> permitted) {
    String headers = undeliverable(raw);
    if (headers != null) {
      return new Refusal(FerryError.BAD_INPUT.code(), headers);
    }
    if (type == BridgeEventType.SOCKET_PING) {
      return null;
    }
    String kind = type == BridgeEventType.REGISTER ? "register" : type == BridgeEventType.UNREGISTER ? "unregister"
        : type == BridgeEventType.PUBLISH ? "publish" : "send";
    if (address == null) {
      return new Refusal(FerryError.BAD_INPUT.code(), "a \"" + kind + "\" needs an \"address\"");
    }
    if (type == BridgeEventType.REGISTER || type == BridgeEventType.UNREGISTER) {
      return new Refusal(FORBIDDEN, "a \"" + kind + "\" of " + quoted(address) + " is refused: a bridge client"
          + " receives only the answers to its own sends, at their \"replyAddress\"");
    }
    if (!permitted.contains(address)) {
      StringBuilder may = new StringBuilder();
      for (String a : permitted) {
        may.append(may.length() == 0 ? "" : ", ").append(quoted(a));
      }
      return new Refusal(FORBIDDEN, "the address " + quoted(address) + " is not one a bridge client may "
          + kind + " to (" + may + ")");
    }
    if (type == BridgeEventType.PUBLISH && address.equals(permitted.get(0))) {
      // Clustered, every node's consumer would take it: one input applied once per node. An input
      // is a request (or a send), never a publish.
      return new Refusal(FerryError.BAD_INPUT.code(), "a \"publish\" to " + quoted(address) + " is refused: an input"
          + " is a \"send\", with a \"replyAddress\" for its answer (published, each node of a cluster would apply it)");
    }
    return null;
  }

  /**
   * The code of a refusal for an address the bridge does not let a client reach, or for a register:
   * the frame is well formed, and no change to it but its address or type would let it through
   * (ADR 0190).
   */
  static final int FORBIDDEN = 403;

  /**
   * Answers a refused frame in Ferry's words (ADR 0190): a send with a {@code replyAddress} gets an
   * error frame at that address, as Ferry's failures come back ({@code address}, {@code
   * sourceAddress}, {@code failureCode}, {@code failureType}, {@code message}); any other frame one
   * with no {@code address}. The event is then left uncompleted on purpose: the bridge (5.0.7)
   * writes {@code "blocked by bridgeEvent handler"} when it is completed with false, and logs an
   * error when it is failed; uncompleted, it does nothing more with the frame, and the event is
   * garbage once this returns (only the event holds its promise). One answer per frame.
   */
  static void refuse(io.vertx.ext.eventbus.bridge.tcp.BridgeEvent event, JsonObject raw, String address, Refusal refusal) {
    JsonObject frame = new JsonObject().put("type", "err");
    String replyAddress = event.type() == BridgeEventType.SEND && raw.getValue("replyAddress") != null
        // As the bridge reads it (getString), so that the client's own spelling comes back.
        ? raw.getString("replyAddress") : null;
    if (replyAddress != null) {
      frame.put("address", replyAddress);
      if (address != null) {
        frame.put("sourceAddress", address);
      }
    }
    frame.put("failureCode", refusal.code()).put("failureType", "RECIPIENT_FAILURE").put("message", refusal.why());
    byte[] json = frame.encode().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    event.socket().write(io.vertx.core.buffer.Buffer.buffer(4 + json.length).appendInt(json.length).appendBytes(json));
  }

  /** Listens; the future holds the bridge's closer. */
  Future<Supplier<Future<?>>> listen() {
    // Only what a client needs may come in: submit (and metrics or health when asked). Replies
    // to a client's own requests travel back without any outbound permission.
    BridgeOptions options = new BridgeOptions()
        .addInboundPermitted(new PermittedOptions().setAddress(settings.address()));
    if (bridge.permitMetrics()) {
      options.addInboundPermitted(new PermittedOptions().setAddress(settings.metricsAddress()));
    }
    if (bridge.permitHealth()) {
      options.addInboundPermitted(new PermittedOptions().setAddress(settings.ops().healthAddress()));
    }
    String submit = settings.address();
    java.util.List<String> permitted = new java.util.ArrayList<>();
    for (PermittedOptions p : options.getInboundPermitteds()) {
      permitted.add(p.getAddress()); // the submit address first
    }
    boolean clustered = open != null;
    // The bridge's own parser buffers any frame length a client announces: its sockets pass a
    // bound first (ADR 0104), which also closes a connection that brings no whole frame for
    // idleTimeoutMs (ADR 0166: the bridge has no idle timeout of its own).
    Vertx guarded = BridgeFrameLimit.guarded(vertx, bridge.maxFrameBytes(), bridge.idleTimeoutMs());
    // The bridge reads the headers after this handler ran, and completes the send at once when
    // the event is completed inline: the socket's order is kept.
    Handler<io.vertx.ext.eventbus.bridge.tcp.BridgeEvent> hook = event -> {
      if (event.type() != BridgeEventType.REGISTERED && event.socket() instanceof BridgeFrameLimit.Framed framed) {
        // The bridge decoded this frame: its socket's guard counts it (a frame that never gets here
        // was not decoded; ADR 0135). REGISTERED follows a REGISTER frame already counted.
        framed.frameDecoded();
      }
      JsonObject raw = event.getRawMessage();
      if (raw == null || event.type() == BridgeEventType.REGISTERED) {
        event.complete(true);
        return;
      }
      // As the bridge reads it: a number or an object as its text.
      String address = raw.getValue("address") == null ? null : raw.getString("address");
      if (submit.equals(address) && raw.getValue("headers") instanceof JsonObject h
          && h.containsKey("localOnly") && !(h.getValue("localOnly") instanceof Boolean)) {
        // Clustered, enter() overrides a client's localOnly whatever its value; unclustered it
        // means nothing: either way not one to refuse an input for (other addresses: undeliverable).
        h.remove("localOnly");
      }
      // Every frame the bridge would refuse, or fail on, after the hook is answered here instead, in
      // Ferry's words and at the send's replyAddress (ADR 0190): nothing delivered, nothing
      // counted, the socket goes on.
      Refusal refusal = refusal(event.type(), raw, address, permitted);
      if (refusal != null) {
        refuse(event, raw, address, refusal);
        return;
      }
      if (clustered && event.type() == BridgeEventType.SEND && submit.equals(address) && !enter(raw)) {
        // Closing: answered at once, nothing delivered.
        refuse(event, raw, address, new Refusal(FerryError.CLOSED.code(),
            "the node is closing and takes no new input: not delivered"));
        return;
      }
      // The bridge reads the headers after this, and completes the send at once (completed inline):
      // the socket's order is kept.
      event.complete(true);
    };
    if (!clustered) {
      return TcpEventBusBridge.create(guarded, options, null, hook).listen(bridge.endpoint().port(), bridge.endpoint().host())
          .map(b -> b::close);
    }
    MessageConsumer<Object> local = vertx.eventBus().localConsumer(submit, entry());
    Discarded.answer(local, true, "the bridge entry at " + submit);
    return local.completion()
        .compose(v -> TcpEventBusBridge.create(guarded, options, null, hook).listen(bridge.endpoint().port(), bridge.endpoint().host()))
        .<Supplier<Future<?>>>map(b -> () -> open.drained(maxWaitMs).eventually(b::close).eventually(local::unregister))
        .recover(e -> local.unregister().transform(v -> Future.failedFuture(e)));
  }

  /** The bridge's inputs taken and not answered yet; on the verticle's event loop only. */
  static final class Open {
    private final Vertx vertx;
    private final Thread loop = Thread.currentThread();
    private int count;
    private boolean closing;
    private Promise<Void> drained;

    Open(Vertx vertx) {
      this.vertx = vertx;
    }

    /** One more input, unless closing. */
    boolean take() {
      assert Thread.currentThread() == loop : "the bridge runs on the verticle's event loop";
      if (closing) {
        return false;
      }
      count++;
      return true;
    }

    void answered() {
      assert Thread.currentThread() == loop : "the bridge runs on the verticle's event loop";
      if (--count == 0 && drained != null) {
        // The last reply was just handed to the event bus: it reaches the bridge's request, which
        // writes it to the socket, in a task already queued on this loop. Closing the sockets
        // comes after that task, not before (a reply lost with its socket, seen once the count
        // stopped leaking and the close no longer waited its whole bound).
        Promise<Void> done = drained;
        vertx.runOnContext(v -> done.tryComplete());
      }
    }

    /** Refuses new inputs; completes once every open one was answered, or after {@code maxWaitMs}. */
    Future<Void> drained(long maxWaitMs) {
      closing = true;
      drained = Promise.promise();
      if (count <= 0) {
        // Every input answered, the last maybe in this very task: its reply is still to be written
        // by a task already queued on this loop (see answered()). Closing now would lose it with
        // its socket (review Z: a bridge client of a leaving node missed its key's last replies).
        Promise<Void> done = drained;
        vertx.runOnContext(v -> done.tryComplete());
      } else {
        long timer = vertx.setTimer(Math.max(1, maxWaitMs), t -> drained.tryComplete());
        drained.future().onComplete(v -> vertx.cancelTimer(timer));
      }
      return drained.future();
    }
  }

  /** An input of the bridge: its first reply (or failure) counts it answered. */
  private static final class Answered implements Message<Object> {
    private final Message<Object> message;
    private final Open open;
    private boolean done;

    Answered(Message<Object> message, Open open) {
      this.message = message;
      this.open = open;
    }

    private void answer() {
      if (!done) {
        done = true;
        open.answered();
      }
    }

    @Override
    public String address() {
      return message.address();
    }

    @Override
    public MultiMap headers() {
      return message.headers();
    }

    @Override
    public Object body() {
      return message.body();
    }

    @Override
    public String replyAddress() {
      return message.replyAddress();
    }

    @Override
    public boolean isSend() {
      return message.isSend();
    }

    @Override
    public void reply(Object reply, DeliveryOptions options) {
      try {
        message.reply(reply, options);
      } finally {
        answer();
      }
    }

    @Override
    public <R> Future<Message<R>> replyAndRequest(Object reply, DeliveryOptions options) {
      try {
        return message.replyAndRequest(reply, options);
      } finally {
        answer();
      }
    }
  }
}
