package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A leaving node's bridge closes its sockets once every input it took was answered (ADR 0094). An
 * answer reaches the socket one task later: the reply is handed to the event bus, whose delivery
 * to the bridge's reply handler, which writes the frame, is a task queued on the loop. The close
 * must come after that task, also when the last input was answered before the close began.
 */
class BridgeCloseOrderTest {

  @Test
  void aCloseBegunWithEveryInputAnsweredStillComesAfterTheLastReplyIsWritten() throws Exception {
    assertEquals(List.of("reply written", "sockets closed"), order(false));
  }

  @Test
  void aCloseBegunWithAnInputOpenComesAfterItsReplyIsWritten() throws Exception {
    assertEquals(List.of("reply written", "sockets closed"), order(true));
  }

  /** What happens first, with the last answer given after the close began, or before it. */
  private static List<String> order(boolean answeredAfterTheCloseBegan) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      CompletableFuture<List<String>> order = new CompletableFuture<>();
      vertx.getOrCreateContext().runOnContext(v -> {
        BridgeSupport.Open open = new BridgeSupport.Open(vertx);
        List<String> seen = new ArrayList<>();
        assertTrue(open.take());
        if (!answeredAfterTheCloseBegan) {
          answer(vertx, open, seen);
        }
        open.drained(10_000).onComplete(x -> {
          seen.add("sockets closed");
          order.complete(seen);
        });
        if (answeredAfterTheCloseBegan) {
          answer(vertx, open, seen);
        }
      });
      return order.get(20, TimeUnit.SECONDS);
    } finally {
      vertx.close().await(10, TimeUnit.SECONDS);
    }
  }

  /**
   * The last input answered as the bridge's reply does it: the reply handed to the event bus, which
   * writes it to the socket in a task queued now, then the input counted answered.
   */
  private static void answer(Vertx vertx, BridgeSupport.Open open, List<String> seen) {
    vertx.runOnContext(x -> seen.add("reply written"));
    open.answered();
  }
}
