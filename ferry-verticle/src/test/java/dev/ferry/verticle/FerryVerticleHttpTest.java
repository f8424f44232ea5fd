package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PfxOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import io.vertx.core.eventbus.Message;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

/** The HTTP downstream against a real Vert.x HTTP server on 127.0.0.1, port 0. */
class FerryVerticleHttpTest extends VerticleTestBase {
  private final List<JsonObject> requests = new CopyOnWriteArrayList<>();
  private final List<String> contentTypes = new CopyOnWriteArrayList<>();

  /** Starts a server that records each batch and lets {@code answer} respond; deploys the ferry at it. */
  private String serve(BiConsumer<HttpServerRequest, JsonObject> answer, JsonObject extra) {
    return serve(answer, extra, new JsonObject());
  }

  /** As above, with {@code top} merged into the verticle's config. */
  private String serve(BiConsumer<HttpServerRequest, JsonObject> answer, JsonObject extra, JsonObject top) {
    HttpServer server = await(vertx.createHttpServer()
        .requestHandler(req -> req.body().onSuccess(body -> {
          JsonObject batch = body.toJsonObject();
          requests.add(batch);
          contentTypes.add(req.getHeader("Content-Type"));
          answer.accept(req, batch);
        }))
        .listen(0, "127.0.0.1"));
    JsonObject downstream = new JsonObject().put("type", "http")
        .put("url", "http://127.0.0.1:" + server.actualPort() + "/batch").mergeIn(extra);
    return deploy(new JsonObject().put("downstream", downstream).mergeIn(top));
  }

  /** Answers with headers, then one space every 20 ms, never ending: a server that trickles. */
  private void trickle(HttpServerRequest req) {
    req.response().setChunked(true).write("{\"outcomes\": [");
    long[] timer = {0};
    timer[0] = vertx.setPeriodic(20, t -> {
      if (req.response().closed() || req.response().ended()) {
        vertx.cancelTimer(timer[0]);
      } else {
        req.response().write(" ");
      }
    });
  }

  private static JsonObject echo(JsonObject batch) {
    JsonArray outcomes = new JsonArray();
    batch.getJsonArray("inputs").forEach(i -> outcomes.add(new JsonObject().put("ok", ((JsonObject) i).getValue("input"))));
    return new JsonObject().put("outcomes", outcomes);
  }

  @Test
  void postsOneJsonBatchPerCallAndRepliesEachCaller() {
    serve((req, batch) -> req.response().end(echo(batch).toBuffer()), new JsonObject());
    Future<Message<Object>> r = send("k", new JsonObject().put("n", 1), "id", "req-1");
    assertEquals(new JsonObject().put("n", 1), body(r));
    assertEquals(new JsonObject().put("key", "k").put("inputs", new JsonArray()
        .add(new JsonObject().put("id", "req-1").put("input", new JsonObject().put("n", 1)))), requests.get(0));
    assertEquals("application/json", contentTypes.get(0));
    assertEquals("yes", body(send("k", "yes")));
  }

  @Test
  void non2xxIs502() {
    serve((req, batch) -> req.response().setStatusCode(500).end(echo(batch).toBuffer()), new JsonObject());
    assertEquals(502, code(send("k", 1)));
  }

  @Test
  void nonJsonBodyIs502() {
    serve((req, batch) -> req.response().end("<html>oops</html>"), new JsonObject());
    assertEquals(502, code(send("k", 1)));
  }

  @Test
  void aServerHangingPastTimeoutMsIs502() {
    serve((req, batch) -> { /* never answers */ }, new JsonObject().put("timeoutMs", 150));
    assertEquals(502, code(send("k", 1)));
  }

  @Test
  void anInputWhoseDeadlinePassesWhileWaitingForAConnectionIsNeverSent() {
    // The verticle sizes its pool to every call it may have out, so a batch waits for a connection
    // only when the downstream is shared or smaller; drive the downstream directly with a pool of 1.
    List<Runnable> held = new CopyOnWriteArrayList<>();
    HttpServer server = await(vertx.createHttpServer()
        .requestHandler(req -> req.body().onSuccess(body -> {
          JsonObject batch = body.toJsonObject();
          requests.add(batch);
          held.add(() -> req.response().end(echo(batch).toBuffer()));
        }))
        .listen(0, "127.0.0.1"));
    dev.ferry.downstream.HttpDownstream down = new dev.ferry.downstream.HttpDownstream(vertx,
        "http://127.0.0.1:" + server.actualPort() + "/batch", 10_000, 1);
    Future<JsonArray> holding = down.call(batchOf("hold", "h", Long.MAX_VALUE));
    await(Future.future(p -> vertx.setPeriodic(5, t -> { if (held.size() == 1) { vertx.cancelTimer(t); p.complete(); } })));
    Future<JsonArray> late = down.call(batchOf("late", "expired", System.nanoTime() + 100_000_000L));
    await(Future.future(p -> vertx.setTimer(300, t -> p.complete())));
    assertEquals(1, requests.size());
    vertx.runOnContext(v -> held.forEach(Runnable::run));
    assertEquals(new JsonArray().add(new JsonObject().put("ok", "h")), await(holding));
    // The late batch got the connection after its deadline: nothing is written, nothing answered.
    assertEquals(new JsonArray(), await(late));
    assertEquals(1, requests.size());
    await(down.close());
  }

  /** A one-input batch whose input expires at {@code deadline} (System.nanoTime()). */
  private static dev.ferry.downstream.OutgoingBatch batchOf(String key, String input, long deadline) {
    return new dev.ferry.downstream.OutgoingBatch() {
      private int size;
      @Override public String key() { return key; }
      @Override public long earliestDeadline() { return deadline; }
      @Override public JsonObject seal() {
        if (System.nanoTime() >= deadline) {
          return null;
        }
        size = 1;
        return new JsonObject().put("key", key).put("inputs", new JsonArray()
            .add(new JsonObject().put("id", null).put("input", input)));
      }
      @Override public int sealedSize() { return size; }
    };
  }

  @Test
  void aServerThatTricklesBytesCannotHoldTheKeyPastTimeoutMs() {
    serve((req, batch) -> {
      if ("first".equals(batch.getJsonArray("inputs").getJsonObject(0).getValue("input"))) {
        trickle(req);
      } else {
        req.response().end(echo(batch).toBuffer());
      }
    }, new JsonObject().put("timeoutMs", 300)); // callTimeoutMs stays 30 s: only timeoutMs can free it
    assertEquals(502, code(send("k", "first")));
    // The key and its slot are free: the next input is sent and answered.
    assertEquals("second", answeredDespiteSlowness("k", "second"));
    assertEquals(0L, metricsUntil(m -> m.getLong("inFlightBatches") == 0).getLong("inFlightBatches"));
  }

  @Test
  void undeployWaitsForATricklingCallOnlyUntilItsTimeoutMs() {
    // A server that trickles forever: the undeploy does not cut the call at the drain deadline (ADR
    // 0064) but cannot be held past the call's own total deadline, timeoutMs, either.
    String id = serve((req, batch) -> trickle(req), new JsonObject().put("timeoutMs", 500),
        new JsonObject().put("drainTimeoutMs", 0).put("callTimeoutMs", 60_000));
    Future<Message<Object>> r = send("k", "stuck");
    metricsUntil(m -> requests.size() == 1);
    await(vertx.undeploy(id)); // within the await's bound, far below the 60 s call timeout
    assertEquals(502, code(r));
  }

  @Test
  void anAnswerLongerThanMaxResponseBytesIs502WithOrWithoutALength() {
    String big = "x".repeat(5_000);
    serve((req, batch) -> {
      Object input = batch.getJsonArray("inputs").getJsonObject(0).getValue("input");
      JsonObject answer = new JsonObject().put("outcomes", new JsonArray().add(new JsonObject().put("ok", big)));
      if ("chunked".equals(input)) {
        req.response().setChunked(true);
        for (int i = 0; i < 10; i++) {
          req.response().write(Buffer.buffer(new byte[1_000]));
        }
        req.response().end();
      } else if ("long".equals(input)) {
        req.response().end(answer.toBuffer());
      } else {
        req.response().end(echo(batch).toBuffer());
      }
    }, new JsonObject().put("maxResponseBytes", 1_000));
    assertEquals(502, code(send("k", "long")));
    assertEquals(502, code(send("k", "chunked")));
    assertEquals("small", body(send("k", "small")));
  }

  @Test
  void configuredHeadersAreSentWithEveryBatch() {
    List<String> seen = new CopyOnWriteArrayList<>();
    serve((req, batch) -> {
      seen.add(req.getHeader("Authorization") + "|" + req.getHeader("X-Tenant") + "|" + req.getHeader("Content-Type"));
      req.response().end(echo(batch).toBuffer());
    }, new JsonObject().put("headers", new JsonObject().put("Authorization", "Bearer t0ken").put("X-Tenant", "blue")));
    assertEquals(1, body(send("k", 1)));
    assertEquals(List.of("Bearer t0ken|blue|application/json"), seen);
  }

  @Test
  void anHttpsDownstreamIsReachedWithTheTrustConfiguredAndOnlyWithIt(@org.junit.jupiter.api.io.TempDir Path dir)
      throws Exception {
    // A self-signed certificate for 127.0.0.1, made here with the JDK's keytool.
    Path store = dir.resolve("server.p12");
    Path pem = dir.resolve("server.pem");
    keytool("-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=127.0.0.1",
        "-ext", "SAN=ip:127.0.0.1", "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(),
        "-storepass", "secret", "-keypass", "secret");
    keytool("-exportcert", "-rfc", "-alias", "server", "-keystore", store.toString(), "-storepass", "secret",
        "-file", pem.toString());
    HttpServer server = await(vertx.createHttpServer(new HttpServerOptions().setSsl(true)
            .setKeyCertOptions(new PfxOptions().setPath(store.toString()).setPassword("secret")))
        .requestHandler(req -> req.body().onSuccess(b -> req.response().end(echo(b.toJsonObject()).toBuffer())))
        .listen(0, "127.0.0.1"));
    String url = "https://127.0.0.1:" + server.actualPort() + "/batch";
    deploy(new JsonObject().put("address", "trusting").put("metricsAddress", "trusting.metrics")
        .put("healthAddress", "trusting.health")
        .put("downstream", new JsonObject().put("type", "http").put("url", url)
            .put("tls", new JsonObject().put("trustPem", pem.toString()))));
    deploy(new JsonObject().put("downstream", new JsonObject().put("type", "http").put("url", url)));
    // A first TLS handshake loads and initialises much of the JDK's crypto: on a loaded machine it
    // has taken over 10 s, so these two waits are longer than the usual bound.
    Future<Message<Object>> trusted = sendTo("trusting", "k", "secure");
    Future<Message<Object>> untrusted = send("k", "untrusted");
    assertEquals("secure", trusted.toCompletionStage().toCompletableFuture().get(2, java.util.concurrent.TimeUnit.MINUTES).body());
    // The JVM's own trust does not know a self-signed certificate: the batch fails.
    Throwable t = assertThrows(java.util.concurrent.ExecutionException.class,
        () -> untrusted.toCompletionStage().toCompletableFuture().get(2, java.util.concurrent.TimeUnit.MINUTES)).getCause();
    assertEquals(502, ((io.vertx.core.eventbus.ReplyException) t).failureCode());
  }

  private Future<Message<Object>> sendTo(String address, String key, Object body) {
    io.vertx.core.Promise<Message<Object>> reply = io.vertx.core.Promise.promise();
    client.runOnContext(v -> vertx.eventBus().<Object>request(address, body,
        new io.vertx.core.eventbus.DeliveryOptions().addHeader("key", key)).onComplete(reply));
    return reply.future();
  }

  private static void keytool(String... args) throws Exception {
    List<String> command = new java.util.ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0, "keytool failed: " + out);
  }
}
