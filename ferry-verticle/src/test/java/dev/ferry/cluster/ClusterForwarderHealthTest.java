package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.verticle.FerryVerticle;
import dev.ferry.verticle.FerryVerticleOptions;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.Status;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Review AS, pinned: health judges a node's own downstream calls (ADR 0172). A node that only
 * forwards a key reads UP while every forward of it comes back 502 from the key's owner, whose
 * downstream fails; the owner reads degraded. Counted on the forwarder too, one owner in trouble
 * would turn every node of the cluster DOWN (each forwards to it), and a load balancer would then
 * have nowhere to send the keys whose owners are well (docs/operations.md, Health).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterForwarderHealthTest {
  private ClusterHarness cluster;
  private final List<FerryVerticle> verticles = new ArrayList<>();
  private List<String> ids;

  @BeforeAll
  void startCluster() {
    cluster = new ClusterHarness();
    for (int i = 0; i < 2; i++) {
      cluster.start();
    }
    SharedDownstream downstream = new SharedDownstream(cluster.nodes.get(0), 11, 0);
    await(downstream.listen(2));
    for (int i = 0; i < 2; i++) {
      FerryVerticle v = new FerryVerticle(new FerryVerticleOptions(
          ClusterHarness.config(SharedDownstream.address(i), new JsonObject())));
      await(cluster.nodes.get(i).deployVerticle(v, new DeploymentOptions()), 120);
      verticles.add(v);
    }
    cluster.awaitSettled(0, 1);
    ids = cluster.nodes.stream().map(ClusterHarness::nodeId).toList();
  }

  @AfterAll
  void stopCluster() {
    cluster.close();
  }

  private String keyOwnedBy(int owner) {
    for (int k = 0; ; k++) {
      if (Rendezvous.owner("fwd-" + k, ids).equals(ids.get(owner))) {
        return "fwd-" + k;
      }
    }
  }

  /** The node's own health, through its verticle (the health address takes turns over the nodes). */
  private JsonObject health(int node) {
    Promise<Status> status = Promise.promise();
    verticles.get(node).healthProcedure().handle(status);
    return await(status.future()).getData();
  }

  @Test
  void aNodeWhoseForwardsAllFailAtTheOwnersDownstreamReadsUpAndTheOwnerDegraded() {
    String key = keyOwnedBy(1);
    for (int i = 0; i < 5; i++) {
      // Entering at node 0, forwarded to node 1, whose downstream fails the call: 502 back.
      ReplyException failed = (ReplyException) ClusterHarness.failure(
          cluster.send(0, cluster.entry(0), key, new JsonObject().put("fail", true)));
      assertEquals(502, failed.failureCode(), failed.getMessage());
    }
    JsonObject owner = health(1);
    assertEquals("degraded", owner.getString("state"), owner.encode());
    assertEquals(5, owner.getInteger("failedBatchesInARow"), owner.encode());
    JsonObject forwarder = health(0);
    assertEquals("up", forwarder.getString("state"), forwarder.encode());
    assertEquals(0, forwarder.getJsonObject("metrics").getLong("failedBatches"), forwarder.encode());
  }
}
