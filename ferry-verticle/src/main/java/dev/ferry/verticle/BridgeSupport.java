package dev.ferry.verticle;

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
 * <p>Closing, clustered: the bridge first refuses new sends to the submit address (the client gets
 * an error frame at once: not delivered), waits until every input it took was answered (bounded by
 * {@code maxWaitMs}), and only then closes its sockets, so that no reply is lost with them (ADR
 * 0094). The count of open inputs is kept on the verticle's event loop, where the bridge's server
 * was created and runs its sockets (asserted).
 */
final class BridgeSupport {
  private BridgeSupport() {}

  /** Listens; the future holds the bridge's closer. {@code entry} takes the inputs of the submit address. */
  static Future<Supplier<Future<?>>> listen(Vertx vertx, VerticleConfig settings, OpsConfig.Bridge b,
      Handler<Message<Object>> entry, long maxWaitMs) {
    // Only what a client needs may come in: submit (and metrics or health when asked). Replies
    // to a client's own requests travel back without any outbound permission.
    BridgeOptions options = new BridgeOptions()
        .addInboundPermitted(new PermittedOptions().setAddress(settings.address()));
    if (b.permitMetrics()) {
      options.addInboundPermitted(new PermittedOptions().setAddress(settings.metricsAddress()));
    }
    if (b.permitHealth()) {
      options.addInboundPermitted(new PermittedOptions().setAddress(settings.ops().healthAddress()));
    }
    if (!vertx.isClustered()) {
      return TcpEventBusBridge.create(vertx, options).listen(b.endpoint().port(), b.endpoint().host())
          .map(bridge -> bridge::close);
    }
    Open open = new Open(vertx);
    MessageConsumer<Object> local = vertx.eventBus().localConsumer(settings.address(),
        m -> entry.handle(new Answered(m, open)));
    Discarded.answer(local, true, "the bridge entry at " + settings.address());
    String submit = settings.address();
    // The bridge reads the headers after this handler ran, and completes the send at once when
    // the event is completed inline: the socket's order is kept.
    Handler<io.vertx.ext.eventbus.bridge.tcp.BridgeEvent> atThisNode = event -> {
      JsonObject raw = event.getRawMessage();
      if (event.type() == BridgeEventType.SEND && raw != null && submit.equals(raw.getString("address"))) {
        if (!open.take()) {
          event.complete(false); // closing: an error frame at once, nothing delivered
          return;
        }
        JsonObject headers = raw.getJsonObject("headers");
        if (headers == null) {
          headers = new JsonObject();
          raw.put("headers", headers);
        }
        headers.put("localOnly", true); // enters here: the socket's order is kept (ADR 0094)
      }
      event.complete(true);
    };
    return local.completion()
        .compose(v -> TcpEventBusBridge.create(vertx, options, null, atThisNode).listen(b.endpoint().port(), b.endpoint().host()))
        .<Supplier<Future<?>>>map(bridge -> () -> open.drained(maxWaitMs).eventually(bridge::close).eventually(local::unregister))
        .recover(e -> local.unregister().transform(v -> Future.failedFuture(e)));
  }

  /** The bridge's inputs taken and not answered yet; on the verticle's event loop only. */
  private static final class Open {
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
        drained.tryComplete();
      }
    }

    /** Refuses new inputs; completes once every open one was answered, or after {@code maxWaitMs}. */
    Future<Void> drained(long maxWaitMs) {
      closing = true;
      drained = Promise.promise();
      if (count <= 0) {
        drained.tryComplete();
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
