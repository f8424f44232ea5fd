package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** FerryClient: headers it sends, and failure codes mapped back to FerryException kinds. */
class FerryVerticleClientTest extends VerticleTestBase {

  private static FerryError kind(Future<?> f) {
    return ((FerryException) failure(f)).kind();
  }

  @Test
  void submitsWithOptionsAndMapsEveryKind() {
    deploy(config(new JsonObject().put("order", "header").put("maxQueueing", 2)));
    FerryClient client = FerryClient.create(vertx);
    Future<Object> held = client.submit("k", "hold");
    EbRecorder.Call first = await(downstream.call(0));
    Future<String> late = client.submit("k", "late", new FerryClient.SubmitOptions().timeout(Duration.ofMillis(50)));
    assertEquals(FerryError.TIMEOUT, kind(late));
    Future<Integer> second = client.submit("k", 2, new FerryClient.SubmitOptions().id("two").order(2));
    Future<Integer> firstByOrder = client.submit("k", 1, new FerryClient.SubmitOptions().id("one").order(1));
    admitted(4);
    assertEquals(FerryError.REJECTED, kind(client.submit("k", 3)));
    first.echo();
    EbRecorder.Call batch = await(downstream.call(1));
    assertEquals(List.of("one", "two"), List.of(batch.inputs.getJsonObject(0).getString("id"),
        batch.inputs.getJsonObject(1).getString("id")));
    batch.reply(new JsonObject().put("outcomes", new JsonArray()
        .add(new JsonObject().put("ok", 10)).add(new JsonObject().put("error", "no"))));
    assertEquals(10, await(firstByOrder));
    FerryException rejected = (FerryException) failure(second);
    assertEquals(FerryError.INPUT_REJECTED, rejected.kind());
    assertEquals("no", rejected.getMessage());
    assertEquals("hold", await(held));
    assertEquals(FerryError.BAD_INPUT, kind(client.submit("", 1)));
    assertEquals(FerryError.BAD_INPUT, kind(client.submit("k", io.vertx.core.buffer.Buffer.buffer("x"))));
  }

  @Test
  void noFerryIsClosedAndAnEventBusTimeoutIsFailed() {
    assertEquals(FerryError.CLOSED, kind(FerryClient.create(vertx, "nobody.here").submit("k", 1)));
    deploy(config(new JsonObject()));
    Future<Object> r = FerryClient.create(vertx).submit("k", 1,
        new FerryClient.SubmitOptions().sendTimeout(Duration.ofMillis(100)));
    await(downstream.call(0));
    FerryException e = (FerryException) failure(r);
    assertEquals(FerryError.FAILED, e.kind());
    assertEquals(io.vertx.core.eventbus.ReplyFailure.TIMEOUT,
        ((io.vertx.core.eventbus.ReplyException) e.getCause()).failureType());
  }

  /** A message its node could not decode never reached a ferry: 503 never applied, not 502. */
  @Test
  void aMessageTheNodeCouldNotDecodeIsNeverApplied() {
    FerryException e = FerryClient.toFerryException(new io.vertx.core.eventbus.ReplyException(
        io.vertx.core.eventbus.ReplyFailure.ERROR, -1, "no codec"));
    assertEquals(FerryError.CLOSED, e.kind());
    assertEquals(FerryError.FAILED, FerryClient.toFerryException(new io.vertx.core.eventbus.ReplyException(
        io.vertx.core.eventbus.ReplyFailure.TIMEOUT, -1, "late")).kind());
  }
}
