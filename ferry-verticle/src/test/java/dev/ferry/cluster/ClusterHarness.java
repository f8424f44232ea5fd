package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.fail;

import com.hazelcast.config.Config;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Clustered Vert.x nodes in this JVM, on loopback, in a cluster of their own (a unique name per
 * harness, so that concurrent runs on the machine never merge). Starts from the project's
 * cluster.xml (the class path default), so the tests also check that file.
 */
final class ClusterHarness implements AutoCloseable {
  static final String SUBMIT = "ferry.submit";
  /** Held so the level sticks (JUL keeps loggers weakly): Hazelcast's INFO lines drown test output. */
  private static final java.util.logging.Logger HAZELCAST_LOG = java.util.logging.Logger.getLogger("com.hazelcast");

  static {
    HAZELCAST_LOG.setLevel(java.util.logging.Level.WARNING);
  }

  final String clusterName = "ferry-test-" + UUID.randomUUID();
  /**
   * Hazelcast ports of this harness: a random block of its own, so that members of other runs on
   * the machine (which take 5701-5720 first) never leave this cluster's members unable to find
   * each other.
   */
  final int portBase = 20_000 + new java.util.Random().nextInt(400) * 100;
  final List<Vertx> nodes = new java.util.concurrent.CopyOnWriteArrayList<>();
  final List<Context> clients = new java.util.concurrent.CopyOnWriteArrayList<>();

  Vertx start() {
    return start(o -> {});
  }

  /** A node whose VertxOptions {@code tune} adjusts first (one event loop, say). */
  Vertx start(java.util.function.Consumer<VertxOptions> tune) {
    Config config = ConfigUtil.loadConfig();
    config.setClusterName(clusterName);
    config.getNetworkConfig().setPort(portBase).setPortAutoIncrement(true).setPortCount(10);
    List<String> members = new ArrayList<>();
    for (int port = portBase; port < portBase + 10; port++) {
      members.add("127.0.0.1:" + port);
    }
    config.getNetworkConfig().getJoin().getTcpIpConfig().setMembers(members);
    // Test-only: notice a dead member within seconds, not the default minute.
    config.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    config.setProperty("hazelcast.max.no.heartbeat.seconds", "5");
    VertxOptions options = new VertxOptions();
    options.getEventBusOptions().setHost("127.0.0.1").setPort(0);
    tune.accept(options);
    // Generous: joining takes a few seconds alone, far longer on a loaded shared CI machine.
    Vertx vertx = await(Vertx.builder().with(options).withClusterManager(new HazelcastClusterManager(config)).buildClustered(), 180);
    nodes.add(vertx);
    // Captured once: off Vert.x threads every getOrCreateContext() call makes a new context.
    clients.add(vertx.getOrCreateContext());
    return vertx;
  }

  static String nodeId(Vertx vertx) {
    return ((VertxInternal) vertx).clusterManager().getNodeId();
  }

  String deploy(Vertx vertx, JsonObject config) {
    // A hang guard: the deploy is a handful of Hazelcast writes, which wait while partitions
    // migrate after a join; one took over 30 s in a CI run on a loaded 2-core machine.
    return await(vertx.deployVerticle("dev.ferry.verticle.FerryVerticle", new DeploymentOptions().setConfig(config)), 120);
  }

  /** Ferry config whose downstream is {@code down}, plus {@code extra}. */
  static JsonObject config(String down, JsonObject extra) {
    return new JsonObject()
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", down))
        .put("drainTimeoutMs", 5000)
        .put("callTimeoutMs", 5000)
        .mergeIn(extra);
  }

  /** Sends one input from node {@code from}'s client context to {@code address}. */
  Future<Message<Object>> send(int from, String address, String key, Object body, String... headers) {
    return send(SEND_TIMEOUT_MS, from, address, key, body, headers);
  }

  /** {@link #send(int, String, String, Object, String...)}, waiting {@code timeoutMs} for the answer. */
  Future<Message<Object>> send(long timeoutMs, int from, String address, String key, Object body, String... headers) {
    DeliveryOptions options = sendOptions(key, headers).setSendTimeout(timeoutMs);
    Vertx vertx = nodes.get(from);
    Promise<Message<Object>> reply = Promise.promise();
    clients.get(from).runOnContext(v -> vertx.eventBus().<Object>request(address, body, options).onComplete(reply));
    return reply.future();
  }

  /**
   * How long a test's send waits for its answer: a hang guard, never a bound under test. With
   * {@link #config}'s bounds a node may rightly hold an input for 15 s (drainTimeoutMs + 2 x
   * callTimeoutMs, ADR 0099) before it answers, and a join or a leave adds Hazelcast operations
   * whose time is the machine's; at 20 s, a loaded run of a sound leave could end in a send
   * timeout, which the tests read as a lost input. A test that raises those bounds stays below
   * this (review AK).
   */
  static final long SEND_TIMEOUT_MS = 120_000;

  /**
   * How a test sends one input: with {@code key} (null: no key header) and {@code headers}, given
   * as name, value, name, value..., waiting {@link #SEND_TIMEOUT_MS} for its answer.
   */
  static DeliveryOptions sendOptions(String key, String... headers) {
    DeliveryOptions options = new DeliveryOptions().setSendTimeout(SEND_TIMEOUT_MS);
    if (key != null) {
      options.addHeader("key", key);
    }
    for (int i = 0; i < headers.length; i += 2) {
      options.addHeader(headers[i], headers[i + 1]);
    }
    return options;
  }

  /**
   * Answers {@code m} with {@code ar} as FerryVerticle does: the value, a FerryException's code and
   * message, or any other failure as FAILED with its text.
   */
  static void reply(Message<Object> m, AsyncResult<Object> ar) {
    if (ar.succeeded()) {
      m.reply(ar.result());
    } else if (ar.cause() instanceof FerryException e) {
      m.fail(e.code(), e.getMessage());
    } else {
      m.fail(FerryError.FAILED.code(), String.valueOf(ar.cause()));
    }
  }

  /** The address that enters the cluster at {@code node} (keeps one sender's order on a stable path). */
  String entry(int node) {
    return dev.ferry.verticle.FerryClient.nodeAddress(SUBMIT, nodeId(nodes.get(node)));
  }

  /** Asks a node what it routes by. */
  JsonObject view(int node) {
    DeliveryOptions o = new DeliveryOptions().addHeader(ClusterNode.CTL, "view").setSendTimeout(10_000);
    Promise<Message<JsonObject>> reply = Promise.promise();
    clients.get(0).runOnContext(v -> nodes.get(0).eventBus().<JsonObject>request(entry(node), null, o).onComplete(reply));
    return await(reply.future()).body();
  }

  /** Waits until every listed node routes by exactly those nodes and waits for no release. */
  void awaitSettled(int... which) {
    JsonArray expected = new JsonArray();
    List<String> ids = new ArrayList<>();
    for (int i : which) {
      ids.add(nodeId(nodes.get(i)));
    }
    ids.stream().sorted().forEach(expected::add);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40); // generous: other builds load the machine
    for (int i : which) {
      JsonObject v = view(i);
      while (!v.getJsonArray("view").equals(expected) || !v.getBoolean("settled")) {
        if (System.nanoTime() > deadline) {
          fail("node " + i + " never settled on " + expected + ": " + v);
        }
        sleep(20);
        v = view(i);
      }
    }
  }

  /** A free TCP port on loopback (for a bridge). */
  static int freePort() {
    return dev.ferry.verticle.TestPorts.free();
  }

  /** Writes one TCP-bridge frame (length, then JSON), unflushed. */
  static void writeFrame(java.io.DataOutputStream out, JsonObject frame) throws java.io.IOException {
    byte[] bytes = frame.encode().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  /** Reads one TCP-bridge frame. */
  static JsonObject readFrame(java.io.DataInputStream in) throws java.io.IOException {
    byte[] bytes = new byte[in.readInt()];
    in.readFully(bytes);
    return new JsonObject(io.vertx.core.buffer.Buffer.buffer(bytes));
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  static Throwable failure(Future<?> future) {
    try {
      Object v = future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      throw new AssertionError("expected a failure, got " + v);
    } catch (java.util.concurrent.ExecutionException e) {
      return e.getCause();
    } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
      throw new AssertionError("future not complete in time: " + e, e);
    }
  }

  static <T> T await(Future<T> future) {
    return await(future, 30);
  }

  static <T> T await(Future<T> future, int seconds) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(seconds, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new AssertionError("future failed: " + e.getCause(), e.getCause());
    } catch (java.util.concurrent.TimeoutException e) {
      // What each thread was doing says why (a stuck Hazelcast call, a busy worker pool, a loop).
      System.err.println("future not complete in " + seconds + " s; threads:\n" + threadDump());
      throw new AssertionError("future not complete in time: " + e, e);
    } catch (Exception e) {
      throw new AssertionError("future not complete in time: " + e, e);
    }
  }

  static String threadDump() {
    StringBuilder out = new StringBuilder();
    for (java.lang.management.ThreadInfo t : java.lang.management.ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
      out.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
      if (t.getLockName() != null) {
        out.append(" on ").append(t.getLockName());
      }
      out.append('\n');
      for (StackTraceElement e : t.getStackTrace()) {
        out.append("    at ").append(e).append('\n');
      }
    }
    return out.toString();
  }

  @Override
  public void close() {
    List<Future<Void>> closing = new ArrayList<>();
    for (Vertx v : nodes) {
      closing.add(v.close());
    }
    try {
      Future.join(closing).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      // Best effort: a test already failed, or the JVM ends soon.
    }
  }
}
