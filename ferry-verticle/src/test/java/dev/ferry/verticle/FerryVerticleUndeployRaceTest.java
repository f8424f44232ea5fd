package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Issue 13, items 8 and 9: a request racing an undeploy is answered at once (never left to its
 * send timeout, never an event-bus TIMEOUT that reads as "may have been sent"), and a second
 * FerryVerticle at an address already served in this Vert.x is refused without disturbing the
 * first.
 */
class FerryVerticleUndeployRaceTest extends VerticleTestBase {

  /** Sends {@code n} requests from the consumer's own loop, then unregisters it in the same task. */
  private List<Future<Message<Object>>> discardAll(boolean clustered, int n) {
    Promise<List<Future<Message<Object>>>> sent = Promise.promise();
    client.runOnContext(v -> {
      MessageConsumer<Object> consumer = vertx.eventBus().consumer("race.target", m -> m.reply("handled"));
      Discarded.answer(consumer, clustered, "the test ferry");
      consumer.completion().onSuccess(ok -> {
        // Each request is queued for the consumer's loop, behind this task: all of them find the
        // consumer unregistered, as a request does that the event bus routed just before an undeploy.
        List<Future<Message<Object>>> replies = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          replies.add(vertx.eventBus().request("race.target", i, new DeliveryOptions().setSendTimeout(20_000)));
        }
        consumer.unregister();
        sent.complete(replies);
      });
    });
    return await(sent.future());
  }

  @Test
  void aRequestDiscardedByAnUnregisteredConsumerGets503AtOnceNotATimeout() {
    for (Future<Message<Object>> reply : discardAll(false, 50)) {
      ReplyException e = (ReplyException) failure(reply);
      assertEquals(ReplyFailure.RECIPIENT_FAILURE, e.failureType(), e.toString());
      assertEquals(503, e.failureCode());
    }
  }

  @Test
  void clusteredADiscardedRequestGetsNoHandlersSoThatItIsSentAgain() {
    for (Future<Message<Object>> reply : discardAll(true, 50)) {
      ReplyException e = (ReplyException) failure(reply);
      assertEquals(ReplyFailure.NO_HANDLERS, e.failureType(), e.toString());
    }
  }

  @Test
  void requestsRacingAnUndeployEachGetAnImmediateAnswer() {
    vertx.eventBus().<JsonObject>consumer("race.echo", m -> {
      JsonArray out = new JsonArray();
      for (Object in : m.body().getJsonArray("inputs")) {
        out.add(new JsonObject().put("ok", ((JsonObject) in).getValue("input")));
      }
      m.reply(new JsonObject().put("outcomes", out));
    });
    Map<String, Integer> outcomes = new TreeMap<>();
    for (int round = 0; round < 3; round++) {
      String id = deploy(new JsonObject().put("downstream", new JsonObject().put("type", "eventbus").put("address", "race.echo")));
      Promise<List<Future<Message<Object>>>> sending = Promise.promise();
      Promise<Void> started = Promise.promise();
      client.runOnContext(v -> {
        List<Future<Message<Object>>> replies = new ArrayList<>();
        long[] timer = new long[1];
        timer[0] = vertx.setPeriodic(1, t -> {
          for (int i = 0; i < 50; i++) {
            int n = replies.size();
            // A send timeout far beyond the test's own wait: a request left unanswered shows.
            replies.add(vertx.eventBus().request(SUBMIT, n, new DeliveryOptions().addHeader("key", "k" + n % 40).setSendTimeout(60_000)));
          }
          started.tryComplete();
          if (replies.size() >= 4_000) {
            vertx.cancelTimer(timer[0]);
            sending.complete(replies);
          }
        });
      });
      await(started.future());
      await(vertx.undeploy(id));
      for (Future<Message<Object>> reply : await(sending.future())) {
        String outcome;
        try {
          reply.toCompletionStage().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
          outcome = "ok";
        } catch (java.util.concurrent.ExecutionException e) {
          ReplyException re = (ReplyException) e.getCause();
          outcome = re.failureType() + (re.failureType() == ReplyFailure.RECIPIENT_FAILURE ? " " + re.failureCode() : "");
        } catch (Exception e) {
          outcome = "no answer in 10 s";
        }
        outcomes.merge(outcome, 1, Integer::sum);
      }
    }
    // Served, refused while draining (503), or sent after the undeploy (no handler): nothing else.
    outcomes.keySet().forEach(o -> assertTrue(
        o.equals("ok") || o.equals("RECIPIENT_FAILURE 503") || o.equals("NO_HANDLERS"), "outcomes: " + outcomes));
  }

  @Test
  void aSecondVerticleAtAnAddressAlreadyServedIsRefusedAndTheFirstKeepsItsMeters() {
    int port = FerryVerticleOpsTest.freePort();
    downstream.auto(EbRecorder.Call::echo);
    String first = deploy(config(new JsonObject().put("monitoring", new JsonObject().put("port", port))));
    Throwable refused = failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions()
        .setConfig(config(new JsonObject().put("monitoring", new JsonObject().put("port", FerryVerticleOpsTest.freePort()))))));
    assertTrue(String.valueOf(refused.getMessage()).contains("another FerryVerticle already serves it"), String.valueOf(refused));
    // The first still serves every key alone, and its meters survived the refused instance.
    List<Future<Message<Object>>> replies = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      replies.add(send("k", i));
    }
    for (int i = 0; i < 3; i++) {
      assertEquals(i, body(replies.get(i)));
    }
    String scrape = httpGet(port, "/metrics");
    assertTrue(scrape.contains("ferry_submitted_total{ferry=\"ferry.submit\"} 3.0"), scrape);
    // Another address is another ferry; once the first is gone, its address can be served again.
    String other = deploy(config(new JsonObject().put("address", "other.submit").put("metricsAddress", "other.metrics")
        .put("healthAddress", "other.health")));
    await(vertx.undeploy(other));
    await(vertx.undeploy(first));
    deploy(config(new JsonObject()));
    assertEquals("again", body(send("k", "again")));
  }
}
