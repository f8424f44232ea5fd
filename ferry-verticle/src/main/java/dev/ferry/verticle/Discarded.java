package dev.ferry.verticle;

import dev.ferry.FerryError;
import dev.ferry.cluster.ClusterAccess;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

/**
 * Answers requests that the event bus discards at a consumer being unregistered.
 *
 * <p>The event bus picks a consumer when a request is sent and hands the request over later, on
 * the consumer's loop; a request that arrives after {@code unregister()} (or was still queued when
 * it ran) is discarded, and Vert.x answers it with an event-bus TIMEOUT, which a client must read
 * as "may have been sent" (issue 13, item 8). Such a request never reached the ferry, so it is
 * answered here instead, synchronously in Vert.x's discard hook (Vert.x's own TIMEOUT reply
 * follows ours and is ignored by the sender): 503 on a node alone, whose ferry is closed by then
 * (ADR 0021); clustered, NO_HANDLERS, which clients and forwarding nodes treat as "not delivered,
 * send again" (ADR 0054). The hook is Vert.x internal API, reached through {@link ClusterAccess}
 * (the module's one adapter); on a consumer without it the old behaviour stays. Thread-safe: a failure reply may be sent from any thread.
 */
public final class Discarded {
  private Discarded() {}

  /** Installs the answer on {@code consumer}; {@code what} names the ferry or node in the message. */
  public static void answer(MessageConsumer<?> consumer, boolean clustered, String what) {
    answer(consumer, clustered, what, m -> { });
  }

  /** Like {@link #answer(MessageConsumer, boolean, String)}, then tells {@code answered} of each request answered so. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static void answer(MessageConsumer<?> consumer, boolean clustered, String what,
      java.util.function.Consumer<Message<Object>> answered) {
    ClusterAccess.onDiscarded((MessageConsumer) consumer, (io.vertx.core.Handler<Message<Object>>) m -> {
      if (clustered) {
        m.reply(new ReplyException(ReplyFailure.NO_HANDLERS,
            what + " stopped consuming before this request was handled; it was not delivered"));
      } else {
        m.fail(FerryError.CLOSED.code(), what + " is closed");
      }
      answered.accept(m);
    });
  }
}
