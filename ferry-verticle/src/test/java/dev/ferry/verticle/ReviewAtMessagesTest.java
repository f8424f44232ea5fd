package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.InvalidConfigException;
import dev.ferry.PerKeyConfig;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * Review AT: what a user reads when an input, a config or a downstream is wrong. Each message names
 * what the user wrote or set (the field and the values it takes, the setting whose bound passed,
 * the type as the user knows it), and the bad input leaves the rest alone.
 */
class ReviewAtMessagesTest extends VerticleTestBase {

  /** A choice field of the wrong type said "must be a string", naming none of the values it takes. */
  @Test
  void aChoiceFieldOfTheWrongTypeNamesItsValues() {
    String message = assertThrows(InvalidConfigException.class, () -> VerticleConfig.read(config(
        new JsonObject().put("dispatch", 3).put("order", true)))).getMessage();
    assertTrue(message.contains("dispatch = 3: must be \"adaptive\" or \"fixed-slots\""), message);
    assertTrue(message.contains("order = true: must be \"submission\" or \"header\""), message);
    String library = assertThrows(InvalidConfigException.class,
        () -> PerKeyConfig.fromJson(new JsonObject().put("dispatch", new JsonArray()))).getMessage();
    assertTrue(library.contains("dispatch = []: must be \"adaptive\" or \"fixed-slots\""), library);
  }

  /**
   * A Buffer body was refused as "got BufferImpl", Vert.x's implementation class, which no user
   * wrote; the key's next input is still served.
   */
  @Test
  void aBufferBodyIsNamedBufferAndDisturbsNothing() {
    deploy(config(new JsonObject()));
    downstream.auto(EbRecorder.Call::echo);
    ReplyException bad = (ReplyException) failure(send("k", Buffer.buffer("{\"a\":1}")));
    assertEquals(400, bad.failureCode());
    assertTrue(bad.getMessage().endsWith("got Buffer"), bad.getMessage());
    assertEquals(7, await(send("k", 7)).body());
    FerryException client = (FerryException) failure(FerryClient.create(vertx).submit("k", Buffer.buffer("x")));
    assertEquals(FerryError.BAD_INPUT, client.kind());
    assertTrue(client.getMessage().endsWith("got Buffer"), client.getMessage());
  }

  /** A downstream that answers with a Buffer: the 502 said "not a JSON object but BufferImpl". */
  @Test
  void aDownstreamAnswerOfTheWrongTypeIsNamedAsTheUserKnowsIt() {
    deploy(config(new JsonObject()));
    downstream.auto(c -> c.reply(Buffer.buffer("{\"outcomes\": [{\"ok\": 1}]}")));
    ReplyException failed = (ReplyException) failure(send("k", 1));
    assertEquals(502, failed.failureCode());
    assertTrue(failed.getMessage().endsWith("the answer is not a JSON object but Buffer"), failed.getMessage());
    assertFalse(failed.getMessage().contains("Impl"), failed.getMessage());
  }

  /**
   * A call past callTimeoutMs: the 502 gave the ms but not which setting they come from. (An HTTP
   * downstream with a longer timeoutMs of its own, so that the call timeout is the one that passes:
   * an event-bus downstream's send timeout is the call timeout, and either could fire first.)
   */
  @Test
  void aCallTimeoutNamesTheSetting() {
    HttpServer silent = await(vertx.createHttpServer().requestHandler(req -> { }).listen(0, "127.0.0.1"));
    deploy(new JsonObject().put("callTimeoutMs", 300).put("downstream", new JsonObject().put("type", "http")
        .put("url", "http://127.0.0.1:" + silent.actualPort() + "/batch").put("timeoutMs", 20_000)));
    ReplyException failed = (ReplyException) failure(send("k", 1));
    assertEquals(502, failed.failureCode());
    assertEquals("the batch call did not complete within 300 ms (callTimeoutMs)", failed.getMessage());
    await(silent.close()); // ends the call held on the wire, so that the undeploy need not wait for it
  }

  /**
   * An HTTP exchange past downstream.timeoutMs, below callTimeoutMs: its 502 gave the ms but not
   * which of the two timeouts they are.
   */
  @Test
  void anHttpTimeoutNamesItsOwnSetting() {
    HttpServer silent = await(vertx.createHttpServer().requestHandler(req -> { }).listen(0, "127.0.0.1"));
    deploy(new JsonObject().put("callTimeoutMs", 20_000).put("downstream", new JsonObject().put("type", "http")
        .put("url", "http://127.0.0.1:" + silent.actualPort() + "/batch").put("timeoutMs", 300)));
    ReplyException failed = (ReplyException) failure(send("k", 1));
    assertEquals(502, failed.failureCode());
    assertTrue(failed.getMessage().endsWith("within 300 ms (downstream.timeoutMs)"), failed.getMessage());
  }

  /**
   * A downstream that rejects an input with an empty reason: its caller got a 422 whose message was
   * empty, in an exception and in any log line of it. Now the message says so (ADR 0177); a
   * reason given is passed on as it is, and the other inputs are served.
   */
  @Test
  void aRejectionWithoutAReasonSaysSo() {
    deploy(config(new JsonObject()));
    // Each input's outcome follows from its body, however the three are batched.
    downstream.auto(c -> {
      JsonArray outcomes = new JsonArray();
      for (Object body : c.bodies()) {
        int n = ((Number) body).intValue();
        outcomes.add(n == 1 || n == 4 ? new JsonObject().put("error", "")
            : n == 2 ? new JsonObject().put("error", "no funds") : new JsonObject().put("ok", n));
      }
      c.reply(new JsonObject().put("outcomes", outcomes));
    });
    Future<Message<Object>> first = send("k", 1);
    Future<Message<Object>> second = send("k", 2);
    Future<Message<Object>> third = send("k", 3);
    ReplyException empty = (ReplyException) failure(first);
    assertEquals(422, empty.failureCode());
    assertEquals(BatchOutcomes.NO_REASON, empty.getMessage());
    ReplyException given = (ReplyException) failure(second);
    assertEquals(422, given.failureCode());
    assertEquals("no funds", given.getMessage());
    assertEquals(3, await(third).body());
    FerryException client = (FerryException) failure(FerryClient.create(vertx).submit("k2", 4));
    assertEquals(FerryError.INPUT_REJECTED, client.kind());
    assertEquals(BatchOutcomes.NO_REASON, client.getMessage());
  }
}
