package dev.ferry.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.examples.Accounts;
import dev.ferry.store.JdbcStore;
import dev.ferry.verticle.FerryClient;
import dev.ferry.verticle.FerryVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The samples DocsSamplesTest keeps compiled, run: each does what its guide says it does (a sample
 * can compile and still deploy nothing, or print something else than its comment says). Two are
 * compiled only: fold-write.md's PostgreSQL pool, which names a server at host {@code db}, and its
 * embedded test server, which is how the PostgreSQL tests of ferry-fold start theirs.
 */
class DocsSamplesRunTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    await(vertx.close());
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static void eventually(String what, Supplier<Boolean> check) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!check.get()) {
      assertTrue(System.nanoTime() < end, what);
      Thread.sleep(10);
    }
  }

  /** What a sample prints, from this thread or any other, while {@code run} and the wait last. */
  private static String printed(Runnable run, String expected) throws InterruptedException {
    PrintStream out = System.out;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      run.run();
      eventually("printed " + expected, () -> bytes.toString(StandardCharsets.UTF_8).contains(expected));
      return bytes.toString(StandardCharsets.UTF_8);
    } finally {
      System.setOut(out);
    }
  }

  /** The deployed verticle's metrics at ferry.metrics; null while nothing answers there. */
  private JsonObject metricsOrNull() {
    try {
      return vertx.eventBus().<JsonObject>request("ferry.metrics", null).map(Message::body)
          .toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      return null;
    }
  }

  /**
   * Submits through a FerryClient until the sample's downstream serves: a sample starts its service
   * or server without returning that start's Future, so the first submits may fail.
   */
  private Object submitOnceServing(String key, Object input) throws Exception {
    FerryClient client = FerryClient.create(vertx);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        return await(client.submit(key, input));
      } catch (java.util.concurrent.ExecutionException notYet) {
        assertTrue(System.nanoTime() < end, notYet.getCause().toString());
        Thread.sleep(50);
      }
    }
  }

  @Test
  void theVerticleGuidesDeployDownstreamSubmitAndClientSamplesServeAnInput() throws Exception {
    VerticleSample.eventBusDownstream(vertx);
    VerticleSample.deploy(vertx);
    eventually("the deploy sample's verticle serves ferry.metrics",
        () -> metricsOrNull() != null);
    VerticleSample.submit(vertx);
    VerticleSample.client(vertx, new JsonObject().put("amount", 7));
    eventually("both inputs answered by the downstream", () -> {
      JsonObject m = metricsOrNull();
      return m != null && m.getLong("submitted") == 2 && m.getLong("inFlightBatches") == 0;
    });
    JsonObject after = metricsOrNull();
    assertNotNull(after, "ferry.metrics answers");
    assertEquals(0, after.getLong("failedBatches"));
    assertEquals(new JsonObject().put("amount", 5), await(FerryClient.create(vertx).submit("account-42",
        new JsonObject().put("amount", 5))), "the downstream sample answers each input with itself");
  }

  @Test
  void theVerticleGuidesOptionsSampleRegistersAHealthCheckThatIsUp() throws Exception {
    VerticleSample.eventBusDownstream(vertx);
    HealthChecks checks = HealthChecks.create(vertx);
    VerticleSample.options(vertx, checks);
    eventually("the ferry's check is registered and UP", () -> {
      try {
        return await(checks.checkStatus()).getUp();
      } catch (Exception e) {
        return false;
      }
    });
  }

  @Test
  void thePerKeySamplesPrintTheBalance() throws Exception {
    PerKeySample.Store store = new PerKeySample.Store() {
      @Override
      public Future<Map<PerKeySample.DepositId, Long>> applyAll(String account, List<PerKeySample.Deposit> batch) {
        return Future.succeededFuture(Map.of(batch.get(0).id(), batch.get(0).amount()));
      }

      @Override
      public Future<PerKeySample.Balances> apply(String account, List<PerKeySample.Deposit> batch) {
        return Future.succeededFuture(PerKeySample.Deposit::amount);
      }
    };
    printed(() -> PerKeySample.guide(vertx, store), "balance now 100");
    printed(() -> PerKeySample.readme(vertx, store), "100");
  }

  @Test
  void theFoldWriteSamplesRejectAnOverdraftAndServeTheVerticle() throws Exception {
    JdbcStore store = JdbcStore.withEvents(JdbcStore.h2Pool(vertx, "jdbc:h2:mem:docs-samples;DB_CLOSE_DELAY=-1", 4),
        "accounts", "account_events");
    await(store.createTables());
    String out = printed(() -> FoldWriteSample.build(vertx, store), "insufficient funds: ");
    assertTrue(out.contains("insufficient funds: balance 0, withdrawal 500"), out);

    FoldWriteSample.service(vertx, store);
    await(vertx.deployVerticle(new FerryVerticle(), new DeploymentOptions().setConfig(new JsonObject()
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", "accounts.store")))));
    Object balance = submitOnceServing("a2", Accounts.deposit("a2", 10));
    assertEquals(10L, ((Number) balance).longValue());
  }

  @Test
  void theMakeSamplePrintsTheOffsetItsStoreGaveTheEvent() throws Exception {
    MakeAndKeyedSample.EventStore store = events -> {
      Map<String, Long> offsets = new java.util.HashMap<>();
      for (JsonObject e : events) {
        offsets.put(e.getString("id"), 41L + offsets.size() + 1);
      }
      return Future.succeededFuture(offsets);
    };
    String out = printed(() -> MakeAndKeyedSample.make(vertx, dev.ferry.FerryConfig.defaults(), store,
        new JsonObject().put("id", "e-1").put("kind", "deposit")), "appended at ");
    assertTrue(out.contains("appended at 42"), out);
  }

  @Test
  void theKeyedSampleAnswersTheRequestWithTheUserOrA404() throws Exception {
    JsonObject user = new JsonObject().put("id", "42").put("name", "Ada");
    List<String> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
    MakeAndKeyedSample.UserDb db = ids -> {
      asked.addAll(ids);
      return Future.succeededFuture(ids.contains("42") && asked.size() == 1 ? Map.of("42", user) : Map.of());
    };
    List<String> found = new java.util.concurrent.CopyOnWriteArrayList<>();
    MakeAndKeyedSample.keyed(vertx, dev.ferry.FerryConfig.defaults(), db, routingContext(found));
    eventually("the user answered as JSON", () -> found.equals(List.of("json " + user.encode())));
    // The store has no such user the second time: the sample fails the request with 404.
    List<String> missing = new java.util.concurrent.CopyOnWriteArrayList<>();
    MakeAndKeyedSample.keyed(vertx, dev.ferry.FerryConfig.defaults(), db, routingContext(missing));
    eventually("a 404", () -> missing.equals(List.of("fail 404")));
    assertEquals(List.of("42", "42"), asked);
  }

  /** A RoutingContext that records the two calls the keyed sample makes (json, fail). */
  private static io.vertx.ext.web.RoutingContext routingContext(List<String> calls) {
    return (io.vertx.ext.web.RoutingContext) java.lang.reflect.Proxy.newProxyInstance(
        DocsSamplesRunTest.class.getClassLoader(), new Class<?>[] {io.vertx.ext.web.RoutingContext.class},
        (proxy, method, args) -> {
          switch (method.getName()) {
            case "json" -> calls.add("json " + ((JsonObject) args[0]).encode());
            case "fail" -> calls.add("fail " + args[0]);
            case "toString" -> {
              return "sample routing context";
            }
            default -> throw new UnsupportedOperationException(method.getName());
          }
          return null;
        });
  }

  @Test
  void theVerticleGuidesHttpDownstreamSampleAnswersTheFerrysBatches() throws Exception {
    // The sample listens on 8080, where the guide's config points: run where that port is free.
    try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
      probe.setReuseAddress(true);
      probe.bind(new java.net.InetSocketAddress("127.0.0.1", 8080));
    } catch (java.io.IOException taken) {
      org.junit.jupiter.api.Assumptions.abort("port 8080 is taken on this machine: " + taken);
    }
    VerticleSample.httpDownstream(vertx);
    await(vertx.deployVerticle(new FerryVerticle(), new DeploymentOptions().setConfig(new JsonObject()
        .put("downstream", new JsonObject().put("type", "http").put("url", "http://127.0.0.1:8080/batch")))));
    Object answer = submitOnceServing("account-42", new JsonObject().put("amount", 5));
    assertEquals(new JsonObject().put("amount", 5), answer, "the HTTP sample answers each input with itself");
  }

  @Test
  void theFoldWriteGuidesH2SampleCreatesItsTablesInAFile() throws Exception {
    java.nio.file.Path dir = java.nio.file.Path.of("data");
    org.junit.jupiter.api.Assumptions.assumeFalse(java.nio.file.Files.exists(dir),
        "a ./data directory exists here already: the sample's file is not written over it");
    Vertx own = Vertx.vertx();
    try {
      JdbcStore store = await(FoldWriteSample.h2(own));
      String out = printed(() -> FoldWriteSample.build(own, store), "insufficient funds: ");
      assertTrue(out.contains("insufficient funds: balance 0, withdrawal 500"), out);
      assertTrue(java.nio.file.Files.exists(dir.resolve("ferry.mv.db")), "the sample's database file");
    } finally {
      await(own.close());
      if (java.nio.file.Files.exists(dir)) {
        // (not there when the sample failed before it opened the database: the failure is what counts)
        try (var files = java.nio.file.Files.walk(dir)) {
          for (java.nio.file.Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
            java.nio.file.Files.deleteIfExists(p);
          }
        }
      }
    }
  }
}
