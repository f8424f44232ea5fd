package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.InvalidConfigException;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Review of the HTTP downstream's settings: a url or header the deploy accepts must either work or
 * be refused at deploy naming its field, never fail (or silently change) every batch afterwards.
 */
class HttpDownstreamReviewTest extends VerticleTestBase {
  /** The headers of each request the echo server received, lower-cased names. */
  private final List<io.vertx.core.MultiMap> received = new CopyOnWriteArrayList<>();

  /** An echo server on 127.0.0.1; returns its port. */
  private int echoServer(HttpServerOptions options) {
    HttpServer server = await(vertx.createHttpServer(options)
        .requestHandler(req -> req.body().onSuccess(body -> {
          received.add(io.vertx.core.MultiMap.caseInsensitiveMultiMap().addAll(req.headers()));
          JsonArray outcomes = new JsonArray();
          body.toJsonObject().getJsonArray("inputs")
              .forEach(i -> outcomes.add(new JsonObject().put("ok", ((JsonObject) i).getValue("input"))));
          req.response().putHeader("Content-Type", "application/json")
              .end(new JsonObject().put("outcomes", outcomes).toBuffer());
        }))
        .listen(0, "127.0.0.1"));
    return server.actualPort();
  }

  private static JsonObject http(String url) {
    return new JsonObject().put("type", "http").put("url", url);
  }

  /** Deploys; returns the refusal's message, or null if the deploy succeeded. */
  private String deployOrRefusal(JsonObject config) {
    Future<String> f = vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(config));
    try {
      f.toCompletionStage().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
      return null;
    } catch (java.util.concurrent.ExecutionException e) {
      assertTrue(e.getCause() instanceof InvalidConfigException, String.valueOf(e.getCause()));
      return e.getCause().getMessage();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aUrlWithPortZeroIsRefusedAtDeployNamingTheUrl() {
    // Port 0 parses (as a port past 65535 did, see VerticleConfig.httpUrl), and no connection can
    // be made to it: the deploy succeeded and every batch then failed with 502 "no connection".
    String refusal = deployOrRefusal(new JsonObject().put("downstream", http("http://127.0.0.1:0/batch")));
    assertTrue(refusal != null && refusal.contains("downstream.url"),
        "a url with port 0 was accepted; every batch then fails: " + (refusal == null ? code(send("k", 1)) : refusal));
  }

  @Test
  void credentialsInTheUrlAreRefusedAtDeployOrSentNeverDroppedSilently() {
    // http://user:secret@host/... deployed, and the client dropped the user info: the batches went
    // without any Authorization header (the downstream answers 401, every batch 502).
    int port = echoServer(new HttpServerOptions());
    String refusal = deployOrRefusal(new JsonObject()
        .put("downstream", http("http://ferry:s3cret@127.0.0.1:" + port + "/batch")));
    if (refusal != null) {
      assertTrue(refusal.contains("downstream.url") && !refusal.contains("s3cret"), refusal);
      return;
    }
    assertEquals("x", body(send("k", "x")));
    String expected = "Basic " + java.util.Base64.getEncoder().encodeToString("ferry:s3cret".getBytes());
    assertEquals(expected, received.get(0).get("Authorization"),
        "the url's credentials were accepted at deploy, then silently not sent");
  }

  @Test
  void aContentEncodingHeaderIsRefusedAtDeployNotSentWithEveryBatch() {
    // The ferry writes its JSON uncompressed: a configured Content-Encoding tells the server
    // otherwise, so every batch failed (here the server closes the connection: 502).
    int port = echoServer(new HttpServerOptions().setDecompressionSupported(true));
    String refusal = deployOrRefusal(new JsonObject().put("downstream", http("http://127.0.0.1:" + port + "/batch")
        .put("headers", new JsonObject().put("Content-Encoding", "gzip"))));
    if (refusal != null) {
      assertTrue(refusal.contains("downstream.headers.Content-Encoding"), refusal);
      return;
    }
    assertEquals("x", body(send("k", "x")), "Content-Encoding was accepted at deploy, then broke every batch");
  }

  @Test
  void anAcceptEncodingHeaderIsRefusedAtDeployOrItsAnswersDecoded() {
    // The client does not decompress: a configured Accept-Encoding: gzip invites a compressing
    // server to answer gzip, which the ferry then reads as "not a JSON object": every batch 502.
    int port = echoServer(new HttpServerOptions().setCompressionSupported(true).setCompressionContentSizeThreshold(0));
    String refusal = deployOrRefusal(new JsonObject().put("downstream", http("http://127.0.0.1:" + port + "/batch")
        .put("headers", new JsonObject().put("Accept-Encoding", "gzip"))));
    if (refusal != null) {
      assertTrue(refusal.contains("downstream.headers.Accept-Encoding"), refusal);
      return;
    }
    assertEquals("x", body(send("k", "x")), "Accept-Encoding was accepted at deploy, then broke every batch");
  }

  @Test
  void aNon2xxAnswerLongerThanMaxResponseBytesIsReportedByItsStatusNotItsLength() {
    // A 503 with an error page over maxResponseBytes was reported (to every caller, and in the
    // failed-batch log line) as "the downstream's answer is longer than maxResponseBytes": the
    // status, which says what went wrong, was lost. Both with a Content-Length and chunked.
    String page = "<html>" + "x".repeat(3_000) + "</html>";
    HttpServer server = await(vertx.createHttpServer()
        .requestHandler(req -> req.body().onSuccess(body -> {
          Object input = body.toJsonObject().getJsonArray("inputs").getJsonObject(0).getValue("input");
          req.response().setStatusCode(503);
          if ("chunked".equals(input)) {
            req.response().setChunked(true).write(page.substring(0, 1_500));
            req.response().end(page.substring(1_500));
          } else {
            req.response().end(page);
          }
        }))
        .listen(0, "127.0.0.1"));
    deploy(new JsonObject().put("downstream", http("http://127.0.0.1:" + server.actualPort() + "/batch")
        .put("maxResponseBytes", 1_000)));
    for (String input : new String[] {"length", "chunked"}) {
      Throwable t = failure(send("k", input));
      assertEquals(502, ((io.vertx.core.eventbus.ReplyException) t).failureCode());
      assertTrue(t.getMessage().contains("HTTP 503"), input + ": " + t.getMessage());
    }
  }
}
