package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Shared plumbing for the verticle's integration tests: a real Vert.x (from vertx-junit5), a
 * recording event-bus downstream, and a client that sends every request from one fixed context so
 * that requests reach the ferry in the order the test sends them. The test thread waits on
 * futures with a bound ({@link #await}); nothing sleeps. Every bound here only guards against a
 * hang ({@link #HANG_GUARD_SECONDS}).
 */
@ExtendWith(VertxExtension.class)
abstract class VerticleTestBase {
  static final String SUBMIT = "ferry.submit";
  static final String METRICS = "ferry.metrics";
  static final String DOWN = "test.downstream";
  /**
   * How long a test waits for what must happen before calling it a hang. Generous, for CI runs the
   * suite on a loaded 2-core machine (it was 10 s); but below the 30 s of the default callTimeoutMs
   * and of the event bus's send timeout, so that a call a shorter bound should have ended (a
   * timeoutMs, a deadline) still fails the test when that bound breaks, instead of being answered
   * at the default one (review AE).
   */
  static final long HANG_GUARD_SECONDS = 25;

  Vertx vertx;
  Context client;
  EbRecorder downstream;

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
    // Created once: from a non-Vert.x thread each getOrCreateContext() call makes a new one.
    this.client = vertx.getOrCreateContext();
    this.downstream = new EbRecorder(vertx, DOWN);
    await(downstream.start());
  }

  @AfterEach
  void checkDownstream() {
    downstream.releaseAll();
    assertEquals(java.util.List.of(), downstream.violations(), "downstream saw a guarantee broken");
  }

  /** A config with the event-bus downstream and {@code extra} fields merged in. */
  static JsonObject config(JsonObject extra) {
    return new JsonObject()
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", DOWN))
        .mergeIn(extra);
  }

  String deploy(JsonObject config) {
    return await(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(config)));
  }

  /** Sends one input; headers are name/value pairs. */
  Future<Message<Object>> send(String key, Object body, String... headers) {
    DeliveryOptions options = new DeliveryOptions();
    if (key != null) {
      options.addHeader("key", key);
    }
    for (int i = 0; i < headers.length; i += 2) {
      options.addHeader(headers[i], headers[i + 1]);
    }
    Promise<Message<Object>> reply = Promise.promise();
    client.runOnContext(v -> vertx.eventBus().<Object>request(SUBMIT, body, options).onComplete(reply));
    return reply.future();
  }

  /**
   * The ferry's metrics. Not a barrier: each consumer has its own inbound queue, so a metrics
   * request may overtake submissions sent before it; use {@link #admitted} to wait for those.
   */
  JsonObject metrics() {
    Promise<Message<JsonObject>> reply = Promise.promise();
    client.runOnContext(v -> vertx.eventBus().<JsonObject>request(METRICS, null).onComplete(reply));
    return await(reply.future()).body();
  }

  /**
   * Asks for metrics until {@code condition} holds: for states reached by a reply the test sent
   * from another thread, which no single barrier orders. Each round is a real round trip.
   */
  JsonObject metricsUntil(java.util.function.Predicate<JsonObject> condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
    JsonObject m = metrics();
    while (!condition.test(m)) {
      if (System.nanoTime() > deadline) {
        fail("metrics never reached the expected state: " + m.encode());
      }
      m = metrics();
    }
    return m;
  }

  /** This node's health, from {@code ferry.health}. */
  JsonObject health() {
    Promise<Message<JsonObject>> reply = Promise.promise();
    client.runOnContext(v -> vertx.eventBus().<JsonObject>request("ferry.health", null).onComplete(reply));
    return await(reply.future()).body();
  }

  /** Asks for health until the node says it is draining (the undeploy reached the verticle). */
  void awaitDraining() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
    while (!health().encode().contains("\"draining\"")) {
      if (System.nanoTime() > deadline) {
        fail("the node never reported draining");
      }
    }
  }

  /** Waits until the ferry has taken in {@code n} submissions in all (bad input not counted). */
  JsonObject admitted(long n) {
    return metricsUntil(m -> m.getLong("submitted") >= n);
  }

  /**
   * GET {@code path} on this host's {@code port}: "status\nbody". The client stays referenced
   * until the answer is in, then is closed: a Vert.x 5 client nobody references is shut down when
   * the garbage collector finds it ("Pool closed" mid-request under load; eclipse-vertx/vert.x#5577).
   */
  String httpGet(int port, String path) {
    io.vertx.core.http.HttpClient client = vertx.createHttpClient();
    // Each stage bounded below await's bound, so that a hang says where it stopped (a CI run once
    // waited 10 s for the second GET of /health, never reproduced in ten runs since).
    io.vertx.core.http.RequestOptions options = new io.vertx.core.http.RequestOptions()
        .setMethod(io.vertx.core.http.HttpMethod.GET).setHost("127.0.0.1").setPort(port).setURI(path)
        .setConnectTimeout(10_000).setIdleTimeout(10_000);
    try {
      return await(client.request(options)
          .recover(e -> Future.failedFuture(new AssertionError("GET " + path + ": no connection: " + e, e)))
          .compose(req -> req.send()
              .compose(resp -> resp.body().map(b -> resp.statusCode() + "\n" + b))
              .recover(e -> Future.failedFuture(new AssertionError("GET " + path + ": no answer: " + e, e)))));
    } finally {
      client.close();
    }
  }

  /**
   * {@code future} watched from now on, for a test that closes Vert.x before it awaits it: a
   * future bound to a context refuses a listener added after that context's event loop has
   * terminated (RejectedExecutionException), even when it had completed long before.
   */
  static <T> Future<T> watched(Future<T> future) {
    return Future.fromCompletionStage(future.toCompletionStage());
  }

  static <T> T await(Future<T> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new AssertionError("future failed: " + e.getCause(), e.getCause());
    } catch (Exception e) {
      throw new AssertionError("future not complete in time: " + e, e);
    }
  }

  /**
   * Like {@link #await}, with 60 s: for a downstream a test builds itself, whose calls no 30 s
   * default ends first (the reason {@link #HANG_GUARD_SECONDS} stays below it does not apply).
   */
  static <T> T await60(Future<T> f) {
    try {
      return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new AssertionError("future failed: " + e.getCause(), e.getCause());
    } catch (Exception e) {
      throw new AssertionError("future not complete in time: " + e, e);
    }
  }

  /** Waits up to 60 s for {@code f} to complete, either way: the caller judges how, with what the server saw. */
  static void settle60(Future<?> f) {
    try {
      f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (Exception judgedByTheCaller) {
      // a failure or no answer: the caller's assertions say which, and why
    }
  }

  static Throwable failure(Future<?> future) {
    try {
      Object value = future.toCompletionStage().toCompletableFuture().get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
      return fail("expected a failure, got " + value);
    } catch (java.util.concurrent.ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new AssertionError("future not complete in time: " + e, e);
    }
  }

  /** The failure code of a failed request (asserting it failed as a recipient failure). */
  static int code(Future<Message<Object>> reply) {
    Throwable t = failure(reply);
    assertTrue(t instanceof ReplyException, "not a ReplyException: " + t);
    return ((ReplyException) t).failureCode();
  }

  /**
   * Sends {@code body} to {@code key} until an attempt is answered, and returns that answer: for an
   * input whose call has a real-time bound short enough (a callTimeoutMs or an HTTP timeoutMs of a
   * few hundred ms, needed for the test's other call to time out) that a loaded machine can stretch
   * its round trip past it. An attempt not answered must fail with 502, at that bound: slowness
   * costs only another attempt, while a key that never moves on, or answers that are lost, still
   * fail the test.
   */
  Object answeredDespiteSlowness(String key, Object body) {
    for (int attempt = 1; ; attempt++) {
      Future<Message<Object>> reply = send(key, body);
      Throwable failed = await(reply.transform(ar -> Future.succeededFuture(ar.failed() ? ar.cause() : null)));
      if (failed == null) {
        return body(reply);
      }
      assertTrue(failed instanceof ReplyException r && r.failureCode() == 502, "not a 502 at the bound: " + failed);
      assertTrue(attempt < 20, "never answered in " + attempt + " attempts: " + failed);
    }
  }

  static Object body(Future<Message<Object>> reply) {
    return await(reply).body();
  }
}
