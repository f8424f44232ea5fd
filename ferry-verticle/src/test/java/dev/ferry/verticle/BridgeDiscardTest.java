package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A clustered bridge's input that Vert.x handed to the verticle's public consumer of the submit
 * address as a leave unregistered it is answered NO_HANDLERS there, and the bridge counts it
 * answered: before, it stayed counted open, and the bridge's close waited its whole bound
 * ({@code drainTimeoutMs} + 2 x {@code callTimeoutMs}, 70 s by default) for it.
 */
class BridgeDiscardTest {
  private Vertx vertx;

  @AfterEach
  void close() throws Exception {
    if (vertx != null) {
      get(vertx.close(), 30);
    }
  }

  @Test
  void aBridgeInputDiscardedByTheUnregisteredPublicConsumerIsCountedAnswered() throws Exception {
    Config hz = ConfigUtil.loadConfig();
    hz.setClusterName("ferry-test-" + java.util.UUID.randomUUID());
    int base = 20_000 + new java.util.Random().nextInt(400) * 100;
    hz.getNetworkConfig().setPort(base).setPortAutoIncrement(true).setPortCount(10);
    hz.getNetworkConfig().getJoin().getTcpIpConfig().setMembers(List.of("127.0.0.1:" + base));
    VertxOptions options = new VertxOptions();
    options.getEventBusOptions().setHost("127.0.0.1").setPort(0);
    vertx = get(Vertx.builder().with(options).withClusterManager(new HazelcastClusterManager(hz)).buildClustered(), 180);

    Context verticle = vertx.getOrCreateContext();
    VerticleConfig settings = VerticleConfig.read(new JsonObject()
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", "down"))
        .put("bridge", new JsonObject().put("host", "127.0.0.1").put("port", FerryVerticleOpsTest.freePort())));
    Promise<BridgeSupport> made = Promise.promise();
    Promise<Supplier<Future<?>>> listening = Promise.promise();
    Promise<MessageConsumer<Object>> registered = Promise.promise();
    verticle.runOnContext(v -> {
      // The bound a leaked count would wait for: a minute.
      BridgeSupport bridge = new BridgeSupport(vertx, settings, settings.ops().bridge(), m -> m.reply("served"), 60_000);
      bridge.listen().onComplete(listening);
      // The verticle's public consumer, paused so that what reaches it waits in its queue.
      MessageConsumer<Object> submissions = vertx.eventBus().localConsumer(settings.address(), bridge.entry());
      Discarded.answer(submissions, true, "the test's ferry", bridge::discarded);
      submissions.pause();
      made.complete(bridge);
      submissions.completion().onSuccess(ok -> registered.complete(submissions));
    });
    BridgeSupport bridge = get(made.future(), 10);
    Supplier<Future<?>> closer = get(listening.future(), 10);
    MessageConsumer<Object> submissions = get(registered.future(), 10);

    Promise<List<Future<Message<Object>>>> sent = Promise.promise();
    verticle.runOnContext(v -> {
      // Two of the bridge's sends, as its hook passes them: Vert.x hands local sends to the
      // address's local consumers in turn, the bridge's own and the paused one.
      List<Future<Message<Object>>> replies = new java.util.ArrayList<>();
      for (int i = 0; i < 2; i++) {
        JsonObject frame = new JsonObject().put("headers", new JsonObject().put("key", "k"));
        assertTrue(bridge.enter(frame));
        DeliveryOptions marked = new DeliveryOptions();
        frame.getJsonObject("headers").forEach(h -> marked.addHeader(h.getKey(), String.valueOf(h.getValue())));
        replies.add(vertx.eventBus().request(settings.address(), "from the bridge", marked.setLocalOnly(true)));
      }
      sent.complete(replies);
      // One waits in the paused consumer's queue: the leave unregisters that consumer now.
      submissions.unregister();
    });
    java.util.Map<String, Integer> outcomes = new java.util.TreeMap<>();
    for (Future<Message<Object>> reply : get(sent.future(), 10)) {
      try {
        outcomes.merge(String.valueOf(get(reply, 10).body()), 1, Integer::sum);
      } catch (java.util.concurrent.ExecutionException e) {
        outcomes.merge(((ReplyException) e.getCause()).failureType().toString(), 1, Integer::sum);
      }
    }
    assertEquals(java.util.Map.of("NO_HANDLERS", 1, "served", 1), outcomes);

    // Nothing the bridge took is open: it closes at once, not after its minute.
    Promise<Object> closed = Promise.promise();
    verticle.runOnContext(v -> closer.get().onComplete(ar -> closed.complete()));
    get(closed.future(), 20);
  }

  private static <T> T get(Future<T> future, int seconds) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(seconds, TimeUnit.SECONDS);
  }

}
