package dev.ferry.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * can compile and still deploy nothing, or print something else than its comment says).
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

  private JsonObject metrics(String address) {
    try {
      return await(vertx.eventBus().<JsonObject>request(address, null).map(Message::body));
    } catch (Exception e) {
      throw new AssertionError(e);
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
    assertEquals(0, metrics("ferry.metrics").getLong("failedBatches"));
    assertEquals(new JsonObject().put("amount", 5), await(FerryClient.create(vertx).submit("account-42",
        new JsonObject().put("amount", 5))), "the downstream sample answers each input with itself");
  }

  private JsonObject metricsOrNull() {
    try {
      return vertx.eventBus().<JsonObject>request("ferry.metrics", null).map(Message::body)
          .toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      return null;
    }
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
    FerryClient client = FerryClient.create(vertx);
    Object balance = null;
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (balance == null) {
      try {
        balance = await(client.submit("a2", Accounts.deposit("a2", 10)));
      } catch (java.util.concurrent.ExecutionException notYet) {
        // the service's start is the sample's own (its Future is not returned): retry until it serves
        assertTrue(System.nanoTime() < end, notYet.getCause().toString());
        Thread.sleep(50);
      }
    }
    assertEquals(10L, ((Number) balance).longValue());
  }
}
