package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A publish to the submit address is no submission (clustered, every node's consumer would apply
 * it; and it has no reply address): it is dropped and counted, and the key's next input is served
 * as if it had never come.
 */
class FerryVerticlePublishTest extends VerticleTestBase {

  @Test
  void aPublishIsDroppedAndCountedAndTheSendAfterItIsServedAlone() {
    deploy(config(new JsonObject()));
    // From the client's context, before the send: the consumer takes both in this order.
    client.runOnContext(v -> vertx.eventBus().publish(SUBMIT, "published", new DeliveryOptions().addHeader("key", "k")));
    Future<Message<Object>> sent = send("k", "sent");
    EbRecorder.Call call = await(downstream.call(0));
    assertEquals(List.of("sent"), call.bodies(), "the downstream saw the publish");
    call.echo();
    assertEquals("sent", body(sent));
    assertEquals(1L, metrics().getLong("submitted"));
    JsonObject health = health();
    assertEquals(1L, health.getJsonArray("checks").getJsonObject(0).getJsonObject("data").getLong("publishesDropped"),
        health.encode());
  }
}
