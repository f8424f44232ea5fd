package dev.ferry.bench;

import com.hazelcast.config.Config;
import dev.ferry.cluster.Rendezvous;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Forwarding overhead and the routing client, measured for docs/performance.md ("## Forwarding"):
 * clustered Vert.x in one JVM on loopback: a client member (sender and an echo downstream, no
 * ferry) and three Ferry nodes. Closed loop: 40 keys, each with 8 requests outstanding (a reply
 * sends the key's next request), over three ways in:
 * <ul>
 *   <li><b>owner</b>: each request sent to its key's owner's node address, computed here from the
 *       known view (the ideal: one hop, no forward);
 *   <li><b>routing client</b>: {@code FerryClient.routing(vertx).submit} (learns the view itself);
 *   <li><b>random node</b>: the public address (the event bus picks a node round robin: two
 *       thirds of the requests are forwarded).
 * </ul>
 * A warm-up round, then 5 rounds, the modes in a rotating order within each; reported per round
 * and as the median over rounds of each mode's ratio to the owner mode (p50 latency,
 * throughput). Run (after {@code mvn -q test-compile dependency:build-classpath
 * -Dmdep.outputFile=cp.txt}): {@code java <jdk.opens flags> -cp
 * target/classes:target/test-classes:$(cat cp.txt) dev.ferry.bench.ForwardingBench}, or with
 * {@code exec:java -Dexec.mainClass=dev.ferry.bench.ForwardingBench}.
 */
public final class ForwardingBench {
  private static final String SUBMIT = "ferry.submit";
  private static final int KEYS = 40;
  private static final int OUTSTANDING = 8;
  private static final int REQUESTS = Integer.getInteger("ferry.forwarding.requests", 20_000);
  private static final int ROUNDS = 5;

  /** One way in: sends request {@code seq} of {@code key}. */
  private interface Entry {
    Future<?> send(String key, int seq);
  }

  public static void main(String[] args) throws Exception {
    java.util.logging.Logger hz = java.util.logging.Logger.getLogger("com.hazelcast");
    hz.setLevel(java.util.logging.Level.WARNING);
    String name = "ferry-bench-" + UUID.randomUUID();
    Vertx client = node(name);
    List<Vertx> ferries = List.of(node(name), node(name), node(name));
    client.eventBus().<JsonObject>consumer("bench.down", m -> {
      JsonArray outcomes = new JsonArray();
      for (Object ignored : m.body().getJsonArray("inputs")) {
        outcomes.add(new JsonObject().put("ok", 1));
      }
      m.reply(new JsonObject().put("outcomes", outcomes));
    }).completion().await(10, TimeUnit.SECONDS);
    JsonObject conf = new JsonObject().put("downstream", new JsonObject().put("type", "eventbus").put("address", "bench.down"));
    for (Vertx v : ferries) {
      v.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(conf)).await(30, TimeUnit.SECONDS);
    }
    List<String> view = new ArrayList<>();
    for (Vertx v : ferries) {
      view.add(nodeId(v));
    }
    List<String> keys = new ArrayList<>();
    for (int k = 0; k < KEYS; k++) {
      keys.add("bench-" + k);
    }
    dev.ferry.verticle.FerryClient routed = dev.ferry.verticle.FerryClient.routing(client);
    Thread.sleep(3000); // let the nodes and the routing client settle on the three-node view
    Context ctx = client.getOrCreateContext();
    DeliveryOptions[] byKey = new DeliveryOptions[KEYS];
    String[] ownerAddress = new String[KEYS];
    for (int k = 0; k < KEYS; k++) {
      byKey[k] = new DeliveryOptions().addHeader("key", keys.get(k));
      ownerAddress[k] = SUBMIT + ".node." + Rendezvous.owner(keys.get(k), view);
    }
    String[] names = {"owner", "routing client", "random node"};
    Entry[] entries = {
      (key, seq) -> client.eventBus().request(ownerAddress[index(key)], seq, byKey[index(key)]),
      (key, seq) -> routed.submit(key, seq),
      (key, seq) -> client.eventBus().request(SUBMIT, seq, byKey[index(key)]),
    };
    double[][] p50 = new double[names.length][ROUNDS];
    double[][] rate = new double[names.length][ROUNDS];
    for (int round = -1; round < ROUNDS; round++) { // round -1 warms up the JIT and connections
      for (int j = 0; j < names.length; j++) {
        int m = Math.floorMod(j + round, names.length); // each mode takes each place in turn
        double[] r = closedLoop(ctx, entries[m], keys, REQUESTS);
        if (round >= 0) {
          p50[m][round] = r[0];
          rate[m][round] = r[2];
          System.out.printf("round %d  %-14s p50 %.3f ms, p99 %.3f ms, %.0f req/s%n", round + 1, names[m], r[0], r[1], r[2]);
        }
      }
    }
    System.out.printf("%d keys x %d outstanding, %d requests per mode and round, %d rounds; median over rounds:%n",
        KEYS, OUTSTANDING, REQUESTS, ROUNDS);
    for (int m = 0; m < names.length; m++) {
      double[] latencyRatio = new double[ROUNDS];
      double[] rateRatio = new double[ROUNDS];
      for (int r = 0; r < ROUNDS; r++) {
        latencyRatio[r] = p50[m][r] / p50[0][r];
        rateRatio[r] = rate[m][r] / rate[0][r];
      }
      System.out.printf("  %-14s p50 %.3f ms (%.2fx owner), throughput %.0f req/s (%.2fx owner)%n",
          names[m], median(p50[m]), median(latencyRatio), median(rate[m]), median(rateRatio));
    }
    try {
      routed.close().await(10, TimeUnit.SECONDS);
      for (Vertx v : ferries) {
        v.close().await(30, TimeUnit.SECONDS);
      }
      client.close().await(30, TimeUnit.SECONDS);
    } finally {
      System.exit(0); // the report is out: Hazelcast's threads must not keep a slow close alive
    }
  }

  private static int index(String key) {
    return Integer.parseInt(key.substring("bench-".length()));
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  /**
   * Each key keeps {@link #OUTSTANDING} requests in flight until {@code n} were answered (all on
   * {@code ctx}): p50 and p99 latency in ms, and requests per second. A failed request fails the
   * run (the benchmark measures served requests).
   */
  private static double[] closedLoop(Context ctx, Entry entry, List<String> keys, int n) throws Exception {
    long[] latencies = new long[n];
    Promise<Void> done = Promise.promise();
    int[] sent = new int[1];
    int[] answered = new int[1];
    java.util.function.Consumer<String>[] send = new java.util.function.Consumer[1];
    send[0] = key -> {
      if (sent[0] >= n) {
        return;
      }
      int seq = sent[0]++;
      long start = System.nanoTime();
      entry.send(key, seq).onComplete(ar -> {
        if (ar.failed()) {
          done.tryFail(ar.cause());
          return;
        }
        latencies[answered[0]++] = System.nanoTime() - start;
        if (answered[0] == n) {
          done.complete();
        } else {
          send[0].accept(key);
        }
      });
    };
    long start = System.nanoTime();
    ctx.runOnContext(v -> {
      for (int o = 0; o < OUTSTANDING; o++) {
        for (String key : keys) {
          send[0].accept(key);
        }
      }
    });
    done.future().await(300, TimeUnit.SECONDS);
    double seconds = (System.nanoTime() - start) / 1e9;
    Arrays.sort(latencies);
    return new double[] {latencies[n / 2] / 1e6, latencies[(int) (n * 0.99)] / 1e6, n / seconds};
  }

  private static Vertx node(String cluster) throws Exception {
    Config config = ConfigUtil.loadConfig();
    config.setClusterName(cluster);
    VertxOptions options = new VertxOptions();
    options.getEventBusOptions().setHost("127.0.0.1").setPort(0);
    return Vertx.builder().with(options).withClusterManager(new HazelcastClusterManager(config))
        .buildClustered().await(60, TimeUnit.SECONDS);
  }

  private static String nodeId(Vertx v) {
    return ((VertxInternal) v).clusterManager().getNodeId();
  }
}
