package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.map.IMap;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review of ADR 0155: a vertx.close() that begins after the deploy was asked but before
 * FerryVerticle.start() took its close hook (the hook is taken at the end of start()). On a node
 * with one event loop, an application that deploys the ferry and closes Vert.x in one task has
 * exactly that order: start() runs after the close began.
 */
class ClusterCloseBeforeHoldReviewTest {
  private final ClusterHarness cluster = new ClusterHarness();

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void aCloseThatBeganBeforeStartRanStillLeavesWithoutLosingWhatReachedTheNode() {
    // Bounds only a hang reaches, and outcomes awaited past the sends' timeout: see
    // ClusterCloseDuringStartTest.BOUNDS.
    cluster.start();
    SharedDownstream downstream = new SharedDownstream(cluster.nodes.get(0), 5, 5);
    await(downstream.listen(2));
    cluster.deploy(cluster.nodes.get(0), ClusterHarness.config(SharedDownstream.address(0), ClusterCloseDuringStartTest.BOUNDS));
    cluster.awaitSettled(0);

    Vertx late = cluster.start(o -> o.setEventLoopPoolSize(1));
    String lateId = ClusterHarness.nodeId(late);
    IMap<String, Object> announced = ((HazelcastClusterManager) ((VertxInternal) cluster.nodes.get(0)).clusterManager())
        .getHazelcastInstance().getMap("__ferry.nodes." + ClusterHarness.SUBMIT);
    announced.lock(lateId);
    Load load = new Load(cluster, 17);
    for (int k = 0; k < 8; k++) {
      load.sender(0, ClusterHarness.SUBMIT, "starting-" + k, false);
    }
    Promise<String> deployed = Promise.promise();
    Promise<Void> closing = Promise.promise();
    try {
      cluster.clients.get(1).runOnContext(v -> {
        late.deployVerticle("dev.ferry.verticle.FerryVerticle",
            new DeploymentOptions().setConfig(ClusterHarness.config(SharedDownstream.address(1), ClusterCloseDuringStartTest.BOUNDS)))
            .onComplete(deployed);
        late.close().onComplete(closing);
      });
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      long began = System.nanoTime();
      while (!closing.future().isComplete() && System.nanoTime() < deadline) {
        load.send(10, 10);
        ClusterHarness.sleep(5);
      }
      System.out.println("close before hold: closed after " + (System.nanoTime() - began) / 1_000_000 + " ms: " + closing.future());
    } finally {
      announced.unlock(lateId);
    }
    await(closing.future(), 120);
    System.out.println("close before hold: deploy " + deployed.future());
    cluster.nodes.remove(late);
    cluster.clients.remove(1);
    Load after = new Load(cluster, 18);
    for (int k = 0; k < 8; k++) {
      after.sender(0, ClusterHarness.SUBMIT, "starting-" + k, false);
    }
    after.send(50, 10);
    System.out.println("close before hold: after the close " + after.outcomes(ClusterCloseDuringStartTest.OUTCOMES_SECONDS));
    Map<String, Integer> outcomes = load.outcomes(ClusterCloseDuringStartTest.OUTCOMES_SECONDS);
    System.out.println("close before hold: " + outcomes + " " + load.samples);
    outcomes.forEach((kind, n) -> assertTrue(kind.equals("ok") || kind.startsWith("NO_HANDLERS"),
        () -> "outcomes " + outcomes + " " + load.samples));
    cluster.awaitSettled(0);
  }
}
