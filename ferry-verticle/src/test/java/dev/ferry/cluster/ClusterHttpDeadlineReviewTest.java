package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServer;
import org.junit.jupiter.api.Test;

/**
 * Review S. An HTTP batch is written only once its connection is ready, and an input whose
 * caller's deadline passes before then is left out of it, never sent (ADR 0062). Standalone its
 * caller gets 504 at that deadline. Clustered, the cluster layer answers each input through the
 * ferry's Future, where that 504 does not arrive (ADR 0062: it comes when the batch's call ends);
 * when that call then failed, as it does when its connection never becomes ready, the input was
 * answered the batch's 502: "sent, it may have been applied", for an input that was never sent.
 */
class ClusterHttpDeadlineReviewTest {

  @Test
  void anInputLeftOutOfItsHttpBatchAtItsDeadlineIs504EvenWhenTheBatchsCallThenFails() {
    try (ClusterHarness cluster = new ClusterHarness()) {
      Vertx node = cluster.start();
      // Takes the connection and never answers the TLS handshake: the batch waits for its
      // connection past the caller's deadline, then fails at the downstream's timeoutMs.
      NetServer silent = await(node.createNetServer().connectHandler(socket -> { }).listen(0, "127.0.0.1"));
      cluster.deploy(node, new JsonObject().put("downstream", new JsonObject().put("type", "http")
          .put("url", "https://127.0.0.1:" + silent.actualPort() + "/batch").put("timeoutMs", 1500)
          .put("tls", new JsonObject().put("trustAll", true))));
      cluster.awaitSettled(0);
      Future<Message<Object>> reply = cluster.send(0, ClusterHarness.SUBMIT, "k", 1, "timeout-ms", "200");
      Throwable failure = ClusterHarness.failure(reply);
      assertTrue(failure instanceof ReplyException, String.valueOf(failure));
      assertEquals(504, ((ReplyException) failure).failureCode(), failure.getMessage());
    }
  }
}
