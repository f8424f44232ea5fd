package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.Message;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The single-node submit path attacked as careless or hostile users do: bodies the downstream's
 * JSON cannot carry, configs at their edges, two ferries in one Vert.x. Each case is a defect that
 * was found and fixed; the test names say what holds now. No test sleeps or measures time: each
 * waits for the replies it asserts on.
 */
class SubmitHostileTest extends VerticleTestBase {
  /** The batches the HTTP downstream of {@link #httpEcho} received, in arrival order. */
  private final List<JsonObject> posted = new CopyOnWriteArrayList<>();

  /** An HTTP downstream on 127.0.0.1 that records each batch and echoes its inputs; its url. */
  private String httpEcho() {
    HttpServer server = await(vertx.createHttpServer()
        .requestHandler(req -> req.body().onSuccess(body -> {
          req.response().end(echo(body));
        }))
        .listen(0, "127.0.0.1"));
    return "http://127.0.0.1:" + server.actualPort() + "/batch";
  }

  /** Records the batch and answers each input with itself as its outcome. */
  private Buffer echo(Buffer body) {
    JsonObject batch = body.toJsonObject();
    posted.add(batch);
    JsonArray outcomes = new JsonArray();
    batch.getJsonArray("inputs").forEach(i -> outcomes.add(new JsonObject().put("ok", ((JsonObject) i).getValue("input"))));
    return new JsonObject().put("outcomes", outcomes).toBuffer();
  }

  private static JsonObject http(String url) {
    return new JsonObject().put("type", "http").put("url", url);
  }

  @Test
  void theLargestMaxInFlightBatchesWithAnHttpDownstreamDeploysAndServesInEitherMode() {
    // The HTTP pool was sized 2 * maxInFlightBatches (fixed slots): past 2^30 that overflowed, the
    // deploy failed with a bare IllegalArgumentException and, thrown after the address was
    // claimed, left the address refused for good. Adaptive, the pool of Integer.MAX_VALUE slots
    // failed every batch with 502 ("Requested array size exceeds VM limit").
    String url = httpEcho();
    int n = 0;
    for (String dispatch : new String[] {"fixed-slots", "adaptive"}) {
      String id = deploy(new JsonObject().put("dispatch", dispatch).put("maxInFlightBatches", Integer.MAX_VALUE)
          .put("downstream", http(url)));
      assertEquals(dispatch, body(send("k", dispatch)), dispatch);
      assertEquals(++n, posted.size());
      await(vertx.undeploy(id));
    }
  }

  /** {"n": {"n": ... {"leaf": 1}}}, {@code depth} objects around the leaf. */
  private static JsonObject nested(int depth) {
    JsonObject o = new JsonObject().put("leaf", 1);
    for (int i = 0; i < depth; i++) {
      o = new JsonObject().put("n", o);
    }
    return o;
  }

  /**
   * An HTTP downstream on 127.0.0.1 that echoes as {@link #httpEcho} does, but holds its first
   * call's answer until {@code release} completes ({@code firstArrived} says it came): what is
   * submitted meanwhile waits behind it, and leaves in the key's next batch.
   */
  private String heldHttpEcho(Promise<Void> firstArrived, Future<Void> release) {
    HttpServer server = await(vertx.createHttpServer()
        .requestHandler(req -> req.body().onSuccess(body -> {
          Buffer answer = echo(body);
          if (firstArrived.tryComplete()) {
            release.onComplete(v -> req.response().end(answer)); // held: the rest queue behind it
          } else {
            req.response().end(answer);
          }
        }))
        .listen(0, "127.0.0.1"));
    return "http://127.0.0.1:" + server.actualPort() + "/batch";
  }

  @Test
  void aBodyJsonCannotEncodeIs400AtOnceAndItsBatchMatesAreSent() {
    // A body nested deeper than Jackson's write bound (1000) is a JsonObject on the local bus but
    // cannot be written as JSON. The HTTP downstream's encoding threw inside the client's callback:
    // the call stayed open, holding the key, until timeoutMs, then every caller of the batch got 502.
    // Refused on arrival now, whatever the downstream (ADR 0128): never admitted.
    Promise<Void> release = Promise.promise();
    Promise<Void> firstArrived = Promise.promise();
    deploy(new JsonObject().put("downstream", http(heldHttpEcho(firstArrived, release.future())).put("timeoutMs", 60_000)));
    Future<Message<Object>> first = send("k", "first");
    await(firstArrived.future());
    Future<Message<Object>> deep = send("k", nested(1_500));
    Future<Message<Object>> before = send("k", "before");
    Future<Message<Object>> deepToo = send("k", nested(1_000)); // within the bound alone, not inside a request
    Future<Message<Object>> after = send("k", "after");
    admitted(3);
    release.complete(); // the key's next batch: the two waiting inputs
    ReplyException bad = (ReplyException) failure(deep);
    assertEquals(400, bad.failureCode());
    assertTrue(bad.getMessage().startsWith("the body cannot be encoded as JSON: "), bad.getMessage());
    assertEquals(400, code(deepToo));
    assertEquals("before", body(before));
    assertEquals("after", body(after));
    assertEquals("first", body(first));
    assertEquals(new JsonArray().add(new JsonObject().put("id", null).put("input", "before"))
        .add(new JsonObject().put("id", null).put("input", "after")), posted.get(1).getJsonArray("inputs"));
    assertEquals(2, posted.size());
  }

  @Test
  void nanOrAnInfinityInsideABodyIs400AtOnceForEitherDownstreamAndItsBatchMatesAreSent() {
    // A body built in Java may hold Double.NaN: the top was checked, not what is inside. JSON has
    // no NaN; Jackson wrote it as the string "NaN", so an HTTP downstream got {"x": "NaN"} for the
    // number the caller sent, and a local event-bus downstream got the Double itself.
    List<Object> bad = List.of(new JsonObject().put("x", Double.NaN),
        new JsonArray().add(1).add(new JsonObject().put("y", new JsonArray().add(Float.NEGATIVE_INFINITY))),
        new JsonObject().put("z", new JsonObject().put("deeper", Double.POSITIVE_INFINITY)));
    for (String kind : List.of("http", "eventbus")) {
      Promise<Void> release = Promise.promise();
      Promise<Void> firstArrived = Promise.promise();
      JsonObject down = "http".equals(kind) ? http(heldHttpEcho(firstArrived, release.future()))
          : new JsonObject().put("type", "eventbus").put("address", DOWN);
      String id = deploy(new JsonObject().put("downstream", down));
      Future<Message<Object>> first = send("k", "first");
      if ("http".equals(kind)) {
        await(firstArrived.future());
      } else {
        await(downstream.call(0)); // held by the recorder until answered
      }
      List<Future<Message<Object>>> refused = new java.util.ArrayList<>();
      Future<Message<Object>> before = send("k", "before");
      bad.forEach(body -> refused.add(send("k", body)));
      Future<Message<Object>> after = send("k", "after");
      for (Future<Message<Object>> r : refused) {
        ReplyException e = (ReplyException) failure(r);
        assertEquals(400, e.failureCode(), kind);
        assertTrue(e.getMessage().equals("the body cannot be encoded as JSON: it holds NaN or an infinite number,"
            + " which JSON cannot carry (Jackson would write a string)"), kind + ": " + e.getMessage());
      }
      admitted(3); // "after" too: it leaves with "before"
      if ("http".equals(kind)) {
        release.complete();
      } else {
        await(downstream.call(0)).echo();
        EbRecorder.Call next = await(downstream.call(1));
        assertEquals(List.of("before", "after"), next.bodies(), kind);
        next.echo();
      }
      assertEquals("first", body(first), kind);
      assertEquals("before", body(before), kind);
      assertEquals("after", body(after), kind);
      await(vertx.undeploy(id));
    }
    assertEquals(2, posted.size());
    assertEquals(List.of("before", "after"), posted.get(1).getJsonArray("inputs").stream()
        .map(i -> ((JsonObject) i).getValue("input")).toList());
    assertEquals(2, downstream.count());
  }

  @Test
  void aSecondFerryWhoseMetricsOrHealthAddressIsTakenIsRefusedNamingItAndTheFirstAnswersAlone() {
    // Two ferries at different addresses, the second left at the default metricsAddress and
    // healthAddress: both consumers took ferry.metrics, and a metrics request was answered in
    // turn by each, half of them with the other ferry's figures. Or a ferry whose metricsAddress
    // is another's submit address: inputs answered with a metrics snapshot.
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject()));
    String sameMetrics = refused(config(new JsonObject().put("address", "other.submit")));
    assertTrue(sameMetrics.contains("metricsAddress = ferry.metrics: another FerryVerticle already uses it"), sameMetrics);
    assertTrue(sameMetrics.contains("healthAddress = ferry.health: another FerryVerticle already uses it"), sameMetrics);
    assertTrue(!sameMetrics.contains("address = other.submit"), sameMetrics);
    String onTheSubmitAddress = refused(config(new JsonObject().put("address", "other.submit")
        .put("metricsAddress", SUBMIT).put("healthAddress", "other.health")));
    assertTrue(onTheSubmitAddress.contains("metricsAddress = ferry.submit: another FerryVerticle already uses it"),
        onTheSubmitAddress);
    // Nothing of the refused ones stayed: the first answers every input and metrics request alone.
    assertEquals("x", body(send("k", "x")));
    for (int i = 0; i < 4; i++) {
      assertEquals(1, metrics().getLong("submitted"), "metrics request " + i);
    }
    // Refused ones claimed nothing: a ferry with endpoints of its own deploys, at the address a
    // refused one asked for too.
    String other = deploy(config(new JsonObject().put("address", "other.submit").put("metricsAddress", "other.metrics")
        .put("healthAddress", "other.health")));
    await(vertx.undeploy(other));
  }

  private String refused(JsonObject config) {
    Throwable t = failure(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(config)));
    assertTrue(t instanceof dev.ferry.InvalidConfigException, String.valueOf(t));
    return t.getMessage();
  }

  @Test
  void tlsFilesThatCannotBeLoadedFailTheDeployNamingTheirFields(@TempDir Path dir) throws Exception {
    // The client reads its TLS files only when it first connects: the deploy succeeded and every
    // batch then failed with 502 ("no connection to the downstream: Unable to read file ...").
    Path garbled = dir.resolve("garbled.p12");
    Files.writeString(garbled, "not a key store");
    JsonObject tls = new JsonObject().put("trustPem", dir.resolve("missing.pem").toString())
        .put("keyStore", new JsonObject().put("path", garbled.toString()).put("password", "secret"));
    String message = refused(new JsonObject().put("downstream", http("https://127.0.0.1:8443/batch").put("tls", tls)));
    assertTrue(message.contains("downstream.tls.trustPem: cannot be loaded: "), message);
    assertTrue(message.contains("downstream.tls.keyStore: cannot be loaded: "), message);
    assertTrue(!message.contains("secret"), message);
    // The refused deploy left nothing behind: the address is free.
    deploy(config(new JsonObject()));
  }

  @Test
  void aClientOfAClosedVertxGetsAFailedFutureClosedNotAnException() {
    // submit threw RejectedExecutionException ("event executor terminated") at a caller racing
    // the application's shutdown, out of a method that answers with a Future.
    Vertx closed = Vertx.vertx();
    FerryClient client = FerryClient.create(closed);
    await(closed.close());
    Throwable t = failure(client.submit("k", "x"));
    assertTrue(t instanceof FerryException e && e.kind() == FerryError.CLOSED, String.valueOf(t));
  }

  @Test
  void aSendTimeoutShorterThanTheDeadlineIsRefusedWhenSetAndTheDefaultOneOutlastsTheDeadline() {
    // The caller gave up at its send timeout (FAILED: "may or may not have been sent") while its
    // input still waited in its lane and could be sent up to the deadline: a retry applied twice.
    Duration deadline = Duration.ofSeconds(45);
    IllegalArgumentException second = assertThrows(IllegalArgumentException.class,
        () -> new FerryClient.SubmitOptions().timeout(deadline).sendTimeout(Duration.ofSeconds(1)));
    assertTrue(second.getMessage().startsWith("sendTimeout (1000 ms) is shorter than timeout (45000 ms)"), second.getMessage());
    IllegalArgumentException first = assertThrows(IllegalArgumentException.class,
        () -> new FerryClient.SubmitOptions().sendTimeout(Duration.ofSeconds(1)).timeout(deadline));
    assertEquals(second.getMessage(), first.getMessage());
    // Left to its default (30 s), the send timeout outlasted a 45 s deadline only if raised.
    assertEquals(75_000, new FerryClient.SubmitOptions().timeout(deadline).sendTimeoutMs());
    assertEquals(30_000, new FerryClient.SubmitOptions().sendTimeoutMs());
    assertEquals(45_000, new FerryClient.SubmitOptions().timeout(deadline).sendTimeout(deadline).sendTimeoutMs());
    assertEquals(VerticleConfig.MAX_MS,
        new FerryClient.SubmitOptions().timeout(Duration.ofMillis(VerticleConfig.MAX_MS)).sendTimeoutMs());
  }

  @Test
  void configEdgesAreNamedInFullAndWholeNumbersReadAlikeEverywhere() {
    // Nested fields were named by their key alone ("port = ...": the monitoring's or the bridge's?),
    // a url's port past 65535 deployed and then failed every batch, and downstream.timeoutMs or
    // maxResponseBytes written 5000.0 was "not a whole number" where callTimeoutMs 5000.0 is read.
    String message = refused(config(new JsonObject()
        .put("monitoring", new JsonObject().put("host", 1).put("port", "80"))
        .put("bridge", new JsonObject().put("port", 0).put("permitMetrics", "yes").put("maxFrameBytes", "big"))));
    for (String part : new String[] {"monitoring.host = 1: must be a string", "monitoring.port = \"80\": must be a whole number",
        "bridge.permitMetrics = \"yes\": must be true or false", "bridge.maxFrameBytes = \"big\": must be a whole number"}) {
      assertTrue(message.contains(part), "no \"" + part + "\" in: " + message);
    }
    String port = refused(new JsonObject().put("downstream", http("http://127.0.0.1:99999/batch")));
    assertTrue(port.contains("downstream.url = \"http://127.0.0.1:99999/batch\""), port);
    String url = httpEcho();
    deploy(new JsonObject().put("downstream", http(url).put("timeoutMs", 5000.0).put("maxResponseBytes", 65536.0)));
    assertEquals("whole", body(send("k", "whole")));
  }

  @Test
  void optionsReadFromJsonWithWholeDoublesAnswerTheValuesTheVerticleDeploysWith() {
    // Typed getters took only Integer and Long: for 10.0 they answered the default (100) while
    // the deployment, reading the same JSON, ran with 10.
    JsonObject json = config(new JsonObject().put("maxBatchSize", 10.0).put("callTimeoutMs", 2000.0)
        .put("maxInFlightBatches", 1e10));
    FerryVerticleOptions options = new FerryVerticleOptions(json);
    assertEquals(10, options.getMaxBatchSize());
    assertEquals(2000, options.getCallTimeoutMs());
    assertEquals(json, options.toJson());
    // Not an int: kept as given, and validation names it with the field's rule (review AD).
    assertTrue(assertThrows(dev.ferry.InvalidConfigException.class, options::validate).getMessage()
        .contains("maxInFlightBatches = 10000000000: must be >= 1 and <= 2147483647"));
  }

  @Test
  void aClientBodyHoldingAValueOfNoJsonTypeIsAFailedFutureBadInputNotAnException() {
    // Vert.x copies a JsonObject as it is sent and throws IllegalStateException ("Illegal type in
    // Json") for a value of no JSON type inside it: submit threw it at its caller.
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject()));
    FerryClient client = FerryClient.create(vertx);
    for (Object body : new Object[] {new JsonObject().put("x", new Object()), new JsonArray().add(new Object())}) {
      Throwable t = failure(client.submit("k", body));
      assertTrue(t instanceof FerryException e && e.kind() == FerryError.BAD_INPUT
          && e.getMessage().startsWith("the body cannot be encoded as JSON: it holds a value of type Object"), String.valueOf(t));
    }
    assertEquals("fine", await(client.submit("k", "fine")));
    assertEquals(1, downstream.count());
  }

  @Test
  void theSameInstanceDeployedAgainIsRefusedAndKeepsItsOwnDeployment() {
    // Vert.x gave the running instance the second deployment's context before start() refused
    // it: deploymentID() then named the failed deployment, and an undeploy by it failed.
    downstream.auto(EbRecorder.Call::echo);
    FerryVerticle verticle = new FerryVerticle(new FerryVerticleOptions(config(new JsonObject())));
    String id = await(vertx.deployVerticle(verticle));
    Throwable again = failure(vertx.deployVerticle(verticle));
    assertEquals(id, verticle.deploymentID());
    assertTrue(String.valueOf(again.getMessage()).contains("already deployed"), String.valueOf(again));
    assertEquals("x", body(send("k", "x")));
    await(vertx.undeploy(verticle.deploymentID()));
    // Once undeployed, the instance may be deployed again.
    await(vertx.deployVerticle(verticle));
    assertEquals("y", body(send("k", "y")));
  }

  @Test
  void headerValuesTheHttpClientWouldRefuseOrGarbleFailTheDeployWithoutQuotingThem() {
    // Only CR, LF and NUL were refused: a value with another control character deployed, then
    // every batch failed with 502 whose message quoted the value (an Authorization token, say);
    // a character past U+00FF was sent as '?'.
    String message = refused(new JsonObject().put("downstream", http("http://127.0.0.1:8080/batch")
        .put("headers", new JsonObject().put("Authorization", "Bearer s3cr\u0001t").put("X-Del", "a\u007fb")
            .put("X-Han", "\u4e2d").put("X-Tab", "a\tb").put("X-Latin", "caf\u00e9"))));
    for (String field : new String[] {"Authorization", "X-Del", "X-Han"}) {
      assertTrue(message.contains("downstream.headers." + field + " = \"...\": must hold no control character"), message);
    }
    assertTrue(!message.contains("X-Tab") && !message.contains("X-Latin") && !message.contains("s3cr"), message);
  }

  @Test
  void aBridgeFrameWithANullHeaderGetsAnErrorFrameAndTheSocketGoesOn() throws Exception {
    // The bridge adds each header to a MultiMap, which throws on null, after our hook let the
    // frame through: that frame and every later one on the socket went unanswered.
    int port = FerryVerticleOpsTest.freePort();
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject().put("bridge", new JsonObject().put("port", port))));
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      java.io.DataOutputStream out = new java.io.DataOutputStream(socket.getOutputStream());
      java.io.DataInputStream in = new java.io.DataInputStream(socket.getInputStream());
      for (JsonObject frame : List.of(
          bridgeSend(new JsonObject().put("key", "k").put("id", null), "nulled", "r-1"),
          // At any address: the bridge reads the headers before it looks at the address.
          bridgeSend(new JsonObject().put("key", "k").put("id", null), "nulled", "r-0").put("address", METRICS),
          bridgeSend(new JsonObject().put("key", "k"), "fine", "r-2"))) {
        byte[] bytes = frame.encode().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
      }
      out.flush();
      for (int i = 0; i < 2; i++) {
        JsonObject refused = readFrame(in);
        assertEquals("err", refused.getString("type"), refused.encode());
      }
      JsonObject served = readFrame(in);
      assertEquals("r-2", served.getString("address"), served.encode());
      assertEquals("fine", served.getValue("body"), served.encode());
    }
    assertEquals(1, downstream.count());
  }

  @Test
  void aBridgeFrameTheBridgeCannotDecodeOrTakeGetsAnErrorFrameAndItsConnectionCloses() throws Exception {
    // The bridge logged a frame that is not a JSON object and answered nothing, its sender waiting
    // for ever; one whose type it does not know threw out of its parser, and the socket answered
    // nothing more, that frame or any after it, while it stayed open.
    int port = FerryVerticleOpsTest.freePort();
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject().put("bridge", new JsonObject().put("port", port))));
    java.util.Map<String, String> cases = new java.util.LinkedHashMap<>();
    cases.put("{\"type\": \"send\", \"address\": \"ferry.submit\", \"replyAddress\": \"r-x\", \"body\": NaN}",
        "a frame that is not a JSON object the bridge can read; the connection is closed");
    cases.put("[\"not\", \"an\", \"object\"]", "a frame that is not a JSON object the bridge can read; the connection is closed");
    cases.put(bridgeSend(new JsonObject().put("key", "k"), "x", "r-x").put("type", "sned").encode(),
        "a frame the bridge cannot take (Invalid frame type sned; a frame's \"type\" is send, publish, register,"
            + " unregister or ping); the connection is closed");
    JsonObject untyped = bridgeSend(new JsonObject().put("key", "k"), "x", "r-x");
    untyped.remove("type");
    cases.put(untyped.encode(),
        "a frame the bridge cannot take (Invalid frame type message; a frame's \"type\" is send, publish, register,"
            + " unregister or ping); the connection is closed");
    int served = 0;
    for (java.util.Map.Entry<String, String> c : cases.entrySet()) {
      try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
        socket.setSoTimeout(10_000);
        java.io.DataOutputStream out = new java.io.DataOutputStream(socket.getOutputStream());
        java.io.DataInputStream in = new java.io.DataInputStream(socket.getInputStream());
        writeFrame(out, bridgeSend(new JsonObject().put("key", "k"), "before", "r-1").encode());
        assertEquals("before", readFrame(in).getValue("body"), c.getKey());
        served++;
        writeFrame(out, c.getKey());
        writeFrame(out, bridgeSend(new JsonObject().put("key", "k"), "after", "r-2").encode());
        JsonObject refused = readFrame(in);
        assertEquals(new JsonObject().put("type", "err").put("message", c.getValue()), refused, c.getKey());
        assertEquals(-1, in.read(), c.getKey() + ": the connection is closed");
      }
    }
    // "after" never reached the ferry: only the "before" of each connection was sent.
    assertEquals(served, downstream.count());
    assertEquals(served, metrics().getLong("submitted"));
  }

  private static void writeFrame(java.io.DataOutputStream out, String json) throws java.io.IOException {
    byte[] bytes = json.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    out.writeInt(bytes.length);
    out.write(bytes);
    out.flush();
  }

  private static JsonObject bridgeSend(JsonObject headers, Object body, String replyAddress) {
    return new JsonObject().put("type", "send").put("address", SUBMIT).put("headers", headers).put("body", body)
        .put("replyAddress", replyAddress);
  }

  private static JsonObject readFrame(java.io.DataInputStream in) throws java.io.IOException {
    byte[] bytes = new byte[in.readInt()];
    in.readFully(bytes);
    return new JsonObject(Buffer.buffer(bytes));
  }
}
