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
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Forwarding overhead, measured once for docs/performance.md ("## Forwarding"): three clustered
 * Vert.x in one JVM on loopback: a client node (sender and an echo downstream, no ferry) and two
 * Ferry nodes A and B. Every key is owned by A; the client enters either at A (the owner) or at B
 * (one forward to A and back). Latency: one request at a time. Throughput: a window of requests
 * in flight over many keys. Run (after {@code mvn -q test-compile dependency:build-classpath
 * -Dmdep.outputFile=cp.txt}): {@code java <jdk.opens flags> -cp
 * target/classes:target/test-classes:$(cat cp.txt) dev.ferry.bench.ForwardingBench}.
 */
public final class ForwardingBench {
  private static final String SUBMIT = "ferry.submit";

  public static void main(String[] args) throws Exception {
    java.util.logging.Logger hz = java.util.logging.Logger.getLogger("com.hazelcast");
    hz.setLevel(java.util.logging.Level.WARNING);
    String name = "ferry-bench-" + UUID.randomUUID();
    Vertx client = node(name);
    Vertx a = node(name);
    Vertx b = node(name);
    client.eventBus().<JsonObject>consumer("bench.down", m -> {
      JsonArray outcomes = new JsonArray();
      for (Object ignored : m.body().getJsonArray("inputs")) {
        outcomes.add(new JsonObject().put("ok", 1));
      }
      m.reply(new JsonObject().put("outcomes", outcomes));
    }).completion().await(10, TimeUnit.SECONDS);
    JsonObject conf = new JsonObject().put("downstream", new JsonObject().put("type", "eventbus").put("address", "bench.down"));
    for (Vertx v : List.of(a, b)) {
      v.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(conf)).await(30, TimeUnit.SECONDS);
    }
    String idA = nodeId(a);
    String idB = nodeId(b);
    List<String> view = List.of(idA, idB);
    List<String> keys = new ArrayList<>();
    for (int k = 0; keys.size() < 256; k++) {
      if (idA.equals(Rendezvous.owner("bench-" + k, view))) {
        keys.add("bench-" + k);
      }
    }
    Thread.sleep(2000); // let both nodes settle on the two-node view
    Context ctx = client.getOrCreateContext();
    String atOwner = SUBMIT + ".node." + idA;
    String atOther = SUBMIT + ".node." + idB;
    for (int round = 0; round < 2; round++) { // round 0 warms up the JIT and connections
      boolean report = round == 1;
      for (String[] entry : new String[][] {{"owner (A)", atOwner}, {"non-owner (B)", atOther}}) {
        long[] lat = latency(client, ctx, entry[1], keys.get(0), report ? 3000 : 1000);
        double rate = throughput(client, ctx, entry[1], keys, 64, report ? 4000 : 1000);
        if (report) {
          System.out.printf("entry %-14s latency p50 %.3f ms, p99 %.3f ms; throughput %.0f req/s (window 64, 256 keys)%n",
              entry[0], lat[lat.length / 2] / 1e6, lat[(int) (lat.length * 0.99)] / 1e6, rate);
        }
      }
    }
    for (Vertx v : List.of(a, b, client)) {
      v.close().await(30, TimeUnit.SECONDS);
    }
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

  /** Sequential round trips: each request leaves when the previous reply came back. */
  private static long[] latency(Vertx vertx, Context ctx, String address, String key, int n) throws Exception {
    long[] out = new long[n];
    Promise<Void> done = Promise.promise();
    DeliveryOptions o = new DeliveryOptions().addHeader("key", key);
    AtomicInteger i = new AtomicInteger();
    Runnable[] next = new Runnable[1];
    next[0] = () -> {
      long start = System.nanoTime();
      vertx.eventBus().request(address, 1, o).onComplete(ar -> {
        out[i.get()] = System.nanoTime() - start;
        if (i.incrementAndGet() == n) {
          done.complete();
        } else {
          next[0].run();
        }
      });
    };
    ctx.runOnContext(v -> next[0].run());
    done.future().await(120, TimeUnit.SECONDS);
    Arrays.sort(out);
    return out;
  }

  /** Keeps {@code window} requests in flight over {@code keys} until {@code n} were answered. */
  private static double throughput(Vertx vertx, Context ctx, String address, List<String> keys, int window, int n)
      throws Exception {
    Promise<Void> done = Promise.promise();
    AtomicInteger sent = new AtomicInteger();
    AtomicInteger answered = new AtomicInteger();
    Runnable[] send = new Runnable[1];
    send[0] = () -> {
      int k = sent.getAndIncrement();
      if (k >= n) {
        return;
      }
      DeliveryOptions o = new DeliveryOptions().addHeader("key", keys.get(k % keys.size()));
      vertx.eventBus().request(address, k, o).onComplete(ar -> {
        if (answered.incrementAndGet() == n) {
          done.complete();
        }
        send[0].run();
      });
    };
    long start = System.nanoTime();
    ctx.runOnContext(v -> {
      for (int w = 0; w < window; w++) {
        send[0].run();
      }
    });
    done.future().await(120, TimeUnit.SECONDS);
    return n / ((System.nanoTime() - start) / 1e9);
  }
}
