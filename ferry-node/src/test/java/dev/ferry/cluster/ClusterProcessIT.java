package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.hazelcast.map.IMap;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.Promise;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Three {@code java -jar target/ferry.jar -cluster} processes on loopback, plus this JVM as a
 * member that only sends and hosts the downstream. Under load from routing clients and raw
 * senders, a rolling restart (each process stopped with SIGTERM, a graceful leave, and started
 * again, one after another) fails no routing request, gives raw senders nothing but served
 * requests and immediate NO_HANDLERS, never has two calls in flight for a key and keeps each
 * routing client's per-key order. Then one process is killed with SIGKILL under load: every
 * request still gets a reply or a failure, and the two survivors take its keys and keep serving.
 * Run by failsafe after {@code package} (the jar must exist).
 */
class ClusterProcessIT {
  /**
   * Each send's wait: well under the waits for outcomes (60 s), so that an input a SIGKILLed node
   * held ends as the event bus's TIMEOUT, an outcome this test allows, not as "no reply", which it
   * reads as a lost caller. The harness's default (120 s, a hang guard for in-JVM tests) made 199
   * such inputs "no reply" in a CI run.
   */
  private static final long SEND_TIMEOUT_MS = 20_000;
  private final ClusterHarness cluster = new ClusterHarness();
  private final List<Process> processes = new ArrayList<>();
  private Path work;

  @AfterEach
  void stop() {
    for (Process p : processes) {
      p.destroyForcibly();
    }
    cluster.close();
  }

  @Test
  void aKilledNodeLosesNoCallerAndTheSurvivorsTakeItsKeys() throws Exception {
    // Failsafe sets ferry.jar after package; a plain "mvn test -Dtest=Cluster*" must not pick up a
    // missing or stale jar.
    Assumptions.assumeTrue(System.getProperty("ferry.jar") != null, "run by failsafe: mvn verify");
    File jar = new File(System.getProperty("ferry.jar"));
    assertTrue(jar.isFile(), "build the jar first (mvn package): " + jar);
    work = Files.createTempDirectory("ferry-it");
    Path hazelcast = clusterConfig();

    Vertx client = cluster.start(); // this JVM: sender and downstream, never a Ferry owner
    SharedDownstream downstream = new SharedDownstream(client, 13, 3);
    await(downstream.listen(3));
    for (int i = 0; i < 3; i++) {
      processes.add(launch(jar, hazelcast, i));
    }
    HazelcastClusterManager cm = (HazelcastClusterManager) ((VertxInternal) client).clusterManager();
    IMap<String, Boolean> announced = cm.getHazelcastInstance().getMap("__ferry.nodes." + ClusterHarness.SUBMIT);
    List<String> ids = awaitAnnounced(announced, 3, List.of());
    awaitSettled(client, ids);
    ids = byProcess(ids, downstream, "whoami-");

    // A rolling restart under load: each process stopped with SIGTERM (the launcher's shutdown
    // hook closes Vert.x: a graceful leave), then started again, one after another.
    dev.ferry.verticle.FerryClient routed = dev.ferry.verticle.FerryClient.routing(client);
    Load rolling = new Load(cluster, 23).sendTimeout(SEND_TIMEOUT_MS);
    for (int k = 0; k < 24; k++) {
      rolling.routing(0, routed, "roll-" + k).sender(0, ClusterHarness.SUBMIT, "roll-" + k, false);
    }
    rolling.send(400, 20);
    // Stable membership first: every request served, and each routing client's per-key order kept
    // (the event bus alone spreads a raw sender's pipelined inputs over the nodes: issue 15).
    Map<String, Integer> stable = rolling.outcomes(60);
    stable.forEach((kind, n) -> assertTrue(kind.equals("routing ok") || kind.equals("raw ok"),
        () -> "outcome " + kind + " in stable membership: " + stable + " " + rolling.samples));
    assertEquals(List.of(), downstream.reorders(), "a routing client's inputs out of order in stable membership");
    for (int i = 0; i < 3; i++) {
      String leaver = ids.get(i);
      Process stopping = processes.get(i);
      stopping.destroy(); // SIGTERM
      String leaverAddress = dev.ferry.verticle.FerryClient.nodeAddress(ClusterHarness.SUBMIT, leaver);
      while (stopping.isAlive()) {
        rolling.send(8, 8); // about 400 requests a second: load, without starving the starting JVMs
        // And straight to the leaving node's own address, as a raw sender (or a stale client) may:
        // served while it takes them, NO_HANDLERS at once from its refusal on (timed below).
        rolling.direct(0, leaverAddress, "roll-direct-" + i, 1);
        ClusterHarness.sleep(20);
      }
      // 143: the JVM's exit status after SIGTERM once its shutdown hooks (Vert.x's close) ran.
      int status = exitCode(stopping);
      assertTrue(status == 143 || status == 0, "node " + i + " exited with " + status + " on SIGTERM; logs in " + work);
      processes.set(i, launch(jar, hazelcast, i, "restart"));
      List<String> before = ids;
      java.util.concurrent.CompletableFuture<List<String>> back = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
        List<String> now = awaitAnnounced(announced, 3, List.of(leaver));
        awaitSettled(client, now);
        return now;
      });
      while (!back.isDone()) {
        rolling.send(8, 8);
        ClusterHarness.sleep(20);
      }
      List<String> now = back.get();
      String joined = now.stream().filter(id -> !before.contains(id)).findFirst().orElseThrow();
      List<String> next = new ArrayList<>(before);
      next.set(i, joined);
      ids = next;
    }
    rolling.send(400, 20);
    Map<String, Integer> rolled = rolling.outcomes(60);
    System.out.println("ClusterProcessIT outcomes through a rolling restart (SIGTERM, start again, three times): " + rolled);
    // Routing clients: every request served. Raw senders: served, or NO_HANDLERS at once (never
    // delivered); never a timeout, never 503 (ADR 0056, 0093).
    rolled.forEach((kind, n) -> assertTrue(kind.equals("routing ok") || kind.equals("raw ok") || kind.startsWith("raw NO_HANDLERS"),
        () -> "outcome " + kind + " through the rolling restart: " + rolled + " " + rolling.samples));
    // "At once": a refusal takes a round trip, never a hold or a forward's bound (seconds to tens of
    // seconds). Measured loosely, well under the senders' 20 s send timeout, so that a loaded CI
    // machine does not make it flake.
    long slowestRefusal = rolling.slowestMs("raw NO_HANDLERS");
    System.out.println("ClusterProcessIT: slowest raw NO_HANDLERS through the rolling restart: " + slowestRefusal + " ms");
    assertTrue(slowestRefusal < 5_000, "a raw sender waited " + slowestRefusal + " ms for NO_HANDLERS");
    assertEquals(List.of(), downstream.violations(), "two calls in flight for a key through the rolling restart");
    assertEquals(List.of(), downstream.reorders(), "a routing client's inputs out of order through the rolling restart");
    await(routed.close());
    ids = byProcess(ids, downstream, "whoami-again-");

    Load load = new Load(cluster, 17).sendTimeout(SEND_TIMEOUT_MS);
    for (int k = 0; k < 30; k++) {
      load.sender(0, ClusterHarness.SUBMIT, "crash-" + k, false);
      load.sender(0, dev.ferry.verticle.FerryClient.nodeAddress(ClusterHarness.SUBMIT, ids.get(k % 2)), "crash-" + k, true);
    }
    load.send(600, 20);
    String victim = ids.get(2);
    processes.get(2).destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL: no goodbye
    load.send(600, 20);

    Map<String, Integer> outcomes = load.outcomes(60);
    assertFalse(outcomes.containsKey("no reply"), "a caller got no answer: " + outcomes);
    for (String kind : outcomes.keySet()) {
      // Inputs the dead node held: 503 (or 502, "may have been applied", ADR 0064) through a
      // forwarding node, or the event bus's own failure.
      assertTrue(kind.equals("ok") || kind.endsWith("/503") || kind.endsWith("/502") || kind.startsWith("TIMEOUT")
          || kind.startsWith("NO_HANDLERS"),
          "unexpected outcome " + kind + " in " + outcomes);
    }
    System.out.println("ClusterProcessIT outcomes with a SIGKILL under load: " + outcomes);

    List<String> survivors = ids.subList(0, 2);
    awaitSettled(client, survivors);
    Load after = new Load(cluster, 19).sendTimeout(SEND_TIMEOUT_MS);
    for (int k = 0; k < 30; k++) {
      after.sender(0, ClusterHarness.SUBMIT, "crash-" + k, false);
    }
    after.send(300, 30);
    assertEquals(Map.of("ok", 300), after.outcomes(30), () -> after.samples.toString());
    List<String> all = ids;
    long victimKeysServed = downstream.calls().stream()
        .filter(c -> c.key().startsWith("crash-") && victim.equals(Rendezvous.owner(c.key(), all)) && c.node() != 2).count();
    assertTrue(victimKeysServed > 0, "no survivor served a key of the killed node");
  }

  /** The project's cluster.xml under a cluster name of this run's own, with quick failure detection. */
  private Path clusterConfig() throws IOException {
    String xml;
    try (InputStream in = getClass().getResourceAsStream("/cluster.xml")) {
      xml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    xml = xml.replace("<cluster-name>ferry</cluster-name>", "<cluster-name>" + cluster.clusterName + "</cluster-name>")
        .replace("<properties>", "<properties>\n    <property name=\"hazelcast.heartbeat.interval.seconds\">1</property>"
            + "\n    <property name=\"hazelcast.max.no.heartbeat.seconds\">5</property>");
    assertTrue(xml.contains(cluster.clusterName), "cluster.xml changed shape: no cluster-name to replace");
    // The harness's member (this JVM) takes a port block of its own; the processes must join it there.
    StringBuilder members = new StringBuilder();
    for (int port = cluster.portBase; port < cluster.portBase + 10; port++) {
      members.append("<member>127.0.0.1:").append(port).append("</member>");
    }
    String moved = xml.replace("<port auto-increment=\"true\" port-count=\"20\">5701</port>",
            "<port auto-increment=\"true\" port-count=\"10\">" + cluster.portBase + "</port>")
        .replace("<member>127.0.0.1</member>", members.toString());
    assertTrue(moved.contains(":" + cluster.portBase + "<") && moved.contains(">" + cluster.portBase + "</port>"),
        "cluster.xml changed shape: no port or member to move to the harness's block");
    xml = moved;
    Path file = work.resolve("cluster.xml");
    Files.writeString(file, xml);
    return file;
  }

  private static int exitCode(Process p) {
    try {
      return p.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private Process launch(File jar, Path hazelcast, int i) throws IOException {
    return launch(jar, hazelcast, i, "");
  }

  private Process launch(File jar, Path hazelcast, int i, String generation) throws IOException {
    JsonObject conf = new JsonObject()
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", SharedDownstream.address(i)))
        // Roomy: on a loaded CI machine a 5 s call timeout turned slow round trips to the
        // (healthy) downstream in this JVM into 502s, which this test rightly refuses.
        .put("callTimeoutMs", 20000);
    Path confFile = work.resolve("ferry-" + i + ".json");
    Files.writeString(confFile, conf.encode());
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String opt : System.getProperty("jdk.opens", "").split(" ")) {
      if (!opt.isBlank()) {
        cmd.add(opt);
      }
    }
    cmd.addAll(List.of("-Xmx256m", "-Dvertx.hazelcast.config=" + hazelcast,
        "-jar", jar.getAbsolutePath(), "-cluster", "-cluster-host", "127.0.0.1", "-conf", confFile.toString()));
    File log = work.resolve("node-" + i + generation + ".log").toFile();
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log).start();
  }

  /** The announced node ids, once there are {@code n} of them and none of {@code gone}. */
  private List<String> awaitAnnounced(IMap<String, Boolean> announced, int n, List<String> gone) {
    // Generous: three Hazelcast JVMs start in parallel on a shared 2-core CI machine (seen: 50 s
    // to STARTED under load). A node that dies is caught at once below, so this only bounds a hang.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
    while (true) {
      // TRUE: announced; FALSE: withdrawn and leaving (not in anyone's view).
      List<String> ids = await(client().executeBlocking(() -> announced.entrySet().stream()
          .filter(e -> Boolean.TRUE.equals(e.getValue())).map(Map.Entry::getKey).collect(java.util.stream.Collectors.toList())));
      if (ids.size() >= n && ids.stream().noneMatch(gone::contains)) {
        return ids;
      }
      for (Process p : processes) {
        if (!p.isAlive()) {
          fail("a ferry process exited: " + p.exitValue() + "; logs in " + work);
        }
      }
      if (System.nanoTime() > deadline) {
        fail("only " + ids.size() + " ferry nodes announced; logs in " + work);
      }
      ClusterHarness.sleep(200);
    }
  }

  /** Node ids ordered by process index: each node calls down.<i>, so one input owned by it tells. */
  private List<String> byProcess(List<String> ids, SharedDownstream downstream, String prefix) {
    String[] ordered = new String[ids.size()];
    for (String id : ids) {
      String key = null;
      for (int k = 0; key == null; k++) {
        key = id.equals(Rendezvous.owner(prefix + k, ids)) ? prefix + k : null;
      }
      await(cluster.send(0, ClusterHarness.SUBMIT, key, "?"));
      String owned = key;
      int node = downstream.calls().stream().filter(c -> c.key().equals(owned)).findFirst().orElseThrow().node();
      ordered[node] = id;
    }
    return List.of(ordered);
  }

  private Vertx client() {
    return cluster.nodes.get(0);
  }

  /** Node {@code id}'s answer to {@code ferry-ctl: view}, or null when it did not answer within 2 s. */
  private JsonObject viewOf(Vertx client, String id) {
    Promise<Message<JsonObject>> reply = Promise.promise();
    cluster.clients.get(0).runOnContext(v -> client.eventBus().<JsonObject>request(
        dev.ferry.verticle.FerryClient.nodeAddress(ClusterHarness.SUBMIT, id), null,
        new DeliveryOptions().addHeader(ClusterNode.CTL, "view").setSendTimeout(2000)).onComplete(reply));
    return reply.future().toCompletionStage().toCompletableFuture().handle((m, t) -> t == null ? m.body() : null).join();
  }

  /** Waits until each node in {@code ids} routes by exactly {@code ids} and waits for no release. */
  private void awaitSettled(Vertx client, List<String> ids) {
    JsonArray expected = new JsonArray();
    ids.stream().sorted().forEach(expected::add);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    for (String id : ids) {
      while (true) {
        JsonObject v = viewOf(client, id);
        if (v != null && v.getJsonArray("view").equals(expected) && v.getBoolean("settled")) {
          break;
        }
        if (System.nanoTime() > deadline) {
          // Every node's own account, so that a release that never came can be traced to its sender.
          StringBuilder all = new StringBuilder();
          for (String other : ids) {
            all.append("\n  ").append(viewOf(client, other));
          }
          fail("node " + id + " never settled on " + expected + ": " + v + "; every node:" + all);
        }
        ClusterHarness.sleep(100);
      }
    }
  }
}
