package dev.ferry.bench;

import dev.ferry.verticle.FerryVerticle;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * JMH, scenario 4, event-bus path: what one input costs through {@code ferry.submit} on the local
 * event bus, against a bare event-bus request answered by an echo consumer, measured in the same run.
 *
 * <p>Vert.x runs with a single event loop, so the sender, the {@link FerryVerticle}, its event-bus
 * downstream and the echo consumer all share one thread: the time per input is then the event
 * loop's CPU for that input, with no cross-thread wake-ups in it. Each invocation hops once onto the
 * sender's context, sends {@link #N} requests and waits until every reply is in; the hop is spread
 * over N inputs.
 *
 * <p>The downstream echoes each input as its outcome ({@code {"outcomes":[{"ok": input}...]}}),
 * the bare echo replies with the request's body: both answers carry the same JSON. {@code keys = 1}:
 * one hot key, so inputs leave in batches of up to 100 (one downstream request per batch). {@code
 * keys = N}: every key is idle, so every input is a direct call, i.e. its own downstream request.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EventBusCost {
  static final int N = 1024;
  static final String SUBMIT = "ferry.submit";
  static final String DOWNSTREAM = "bench.downstream";
  static final String ECHO = "bench.echo";
  /** A second ferry whose downstream replies with {@code LocalCodec}: its outcomes are not copied. */
  static final String SUBMIT_UNCOPIED = "ferry.submit.uncopied";
  static final String DOWNSTREAM_UNCOPIED = "bench.downstream.uncopied";
  /** System property: where to write the mean batch of a trial (suffixed with {@code -<keys>}). */
  static final String MEAN_BATCH_FILE = "ferry.bench.meanBatchFile";

  @Param({"1", "1024"})
  public int keys;

  /**
   * The event loop's own CPU time, beside JMH's wall-clock score: on a shared machine a wall-clock
   * nanosecond includes the time the loop waited for a core, a CPU nanosecond does not. Summed per
   * iteration (JMH "events"); {@code loopCpuNs / inputs} is the CPU per input.
   */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class LoopCpu {
    public long loopCpuNs;
    public long inputs;
    /**
     * Bytes the event loop allocated: unlike time, the same on a loaded machine as on a quiet one,
     * so a change's effect on this figure needs no side-by-side run to be trusted.
     */
    public long loopAllocBytes;
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  /** HotSpot's per-thread allocation counter, when the JVM has it (null otherwise: not recorded). */
  private static final com.sun.management.ThreadMXBean ALLOCATIONS =
      THREADS instanceof com.sun.management.ThreadMXBean hotspot && hotspot.isThreadAllocatedMemorySupported()
          ? hotspot : null;
  private long loopThread;

  private Vertx vertx;
  private Context sender;
  private EventBus bus;
  private DeliveryOptions[] byKey;
  private final DeliveryOptions plain = new DeliveryOptions();
  private final JsonObject body = new JsonObject().put("amount", 1);
  /** Batches per N inputs in {@link #downstreamShare}: 12 of about 85, the ferry's mean batch. */
  static final int BATCHES = 12;
  private final java.util.List<JsonObject> batchRequests = new java.util.ArrayList<>();
  private final DeliveryOptions local = new DeliveryOptions().setCodecName(dev.ferry.verticle.LocalCodec.NAME);

  @Setup
  public void setUp() throws Exception {
    vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
    bus = vertx.eventBus();
    // The same downstream twice: replying as most code does (Vert.x deep-copies the outcomes on
    // local delivery), and replying with the ferry's LocalCodec, which hands them over as they are
    // (the downstream's choice, in the same JVM only: docs/guide/verticle.md).
    bus.<JsonObject>consumer(DOWNSTREAM, msg -> msg.reply(echoOutcomes(msg.body())));
    bus.<JsonObject>consumer(DOWNSTREAM_UNCOPIED, msg -> msg.reply(echoOutcomes(msg.body()), local));
    bus.consumer(ECHO, msg -> msg.reply(msg.body()));
    JsonObject config = new JsonObject().put("address", SUBMIT).put("maxQueueing", 4 * N)
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", DOWNSTREAM));
    await(vertx.deployVerticle(new FerryVerticle(), new DeploymentOptions().setConfig(config)));
    if (keys == 1) {
      JsonObject uncopied = config.copy().put("address", SUBMIT_UNCOPIED).put("metricsAddress", SUBMIT_UNCOPIED + ".metrics")
          .put("healthAddress", SUBMIT_UNCOPIED + ".health")
          .put("downstream", new JsonObject().put("type", "eventbus").put("address", DOWNSTREAM_UNCOPIED));
      await(vertx.deployVerticle(new FerryVerticle(), new DeploymentOptions().setConfig(uncopied)));
    }
    sender = ((VertxInternal) vertx).createEventLoopContext();
    // One event loop: the sender, the ferry, the downstream and the echo all run on this thread.
    CompletableFuture<Long> thread = new CompletableFuture<>();
    sender.runOnContext(v -> thread.complete(Thread.currentThread().getId()));
    loopThread = thread.join();
    for (int b = 0; b < BATCHES; b++) {
      int size = N / BATCHES + (b < N % BATCHES ? 1 : 0);
      JsonArray inputs = new JsonArray();
      for (int i = 0; i < size; i++) {
        inputs.add(new JsonObject().put("id", null).put("input", body.copy()));
      }
      batchRequests.add(new JsonObject().put("key", "key-0").put("inputs", inputs));
    }
    byKey = new DeliveryOptions[keys];
    for (int k = 0; k < keys; k++) {
      byKey[k] = new DeliveryOptions().addHeader("key", "key-" + k);
    }
  }

  /** Each input echoed as its outcome: {@code {"outcomes":[{"ok": input}...]}}. */
  private static JsonObject echoOutcomes(JsonObject request) {
    JsonArray inputs = request.getJsonArray("inputs");
    JsonArray outcomes = new JsonArray(new java.util.ArrayList<>(inputs.size()));
    for (int i = 0; i < inputs.size(); i++) {
      outcomes.add(new JsonObject().put("ok", inputs.getJsonObject(i).getValue("input")));
    }
    return new JsonObject().put("outcomes", outcomes);
  }

  @TearDown
  public void tearDown() throws Exception {
    // The floor of the ferry path is 1 + 1/(mean batch) echoes per input: one request per input,
    // plus its share of one downstream request per batch. Reported from the ferry's own counters.
    JsonObject m = await(bus.<JsonObject>request("ferry.metrics", null)).body();
    double meanBatch = (double) m.getLong("submitted") / Math.max(1, m.getLong("batches"));
    String file = System.getProperty(MEAN_BATCH_FILE);
    if (m.getLong("submitted") > 0) {
      System.out.printf("%n[EventBusCost keys=%d] submitted %d in %d calls: mean batch %.1f%n",
          keys, m.getLong("submitted"), m.getLong("batches"), meanBatch);
    }
    if (file != null && m.getLong("submitted") > 0) {
      java.nio.file.Files.writeString(java.nio.file.Path.of(file + "-" + keys), Double.toString(meanBatch));
    }
    await(vertx.close());
  }

  /** Through the ferry: request to {@code ferry.submit}, batched per key to the echoing downstream. */
  @Benchmark
  @OperationsPerInvocation(N)
  public int ferrySubmit(LoopCpu cpu) {
    return submitAll(cpu, SUBMIT);
  }

  /**
   * The same, through the ferry whose downstream replies uncopied ({@code keys = 1} only): what
   * is left of the path once the downstream lets go of its outcomes.
   */
  @Benchmark
  @OperationsPerInvocation(N)
  public int ferrySubmitUncopiedReply(LoopCpu cpu) {
    if (keys != 1) {
      throw new IllegalStateException("measured with one hot key only");
    }
    return submitAll(cpu, SUBMIT_UNCOPIED);
  }

  private int submitAll(LoopCpu cpu, String address) {
    return onSender(cpu, done -> {
      int[] left = {N};
      for (int i = 0; i < N; i++) {
        bus.request(address, body, byKey[i % keys]).onComplete(ar -> {
          if (ar.failed()) {
            done.completeExceptionally(ar.cause());
          } else if (--left[0] == 0) {
            done.complete(N);
          }
        });
      }
    });
  }

  /**
   * The echo with the {@code key} header the submit protocol requires (Vert.x builds and, on local
   * delivery, copies a header map per message). Not a JMH benchmark: {@link EventBusInterleaved}
   * uses it to split the header's cost from the ferry's own.
   */
  public int bareEchoWithKey(LoopCpu cpu) {
    return onSender(cpu, done -> {
      int[] left = {N};
      for (int i = 0; i < N; i++) {
        bus.request(ECHO, body, byKey[0]).onComplete(ar -> {
          if (ar.failed()) {
            done.completeExceptionally(ar.cause());
          } else if (--left[0] == 0) {
            done.complete(N);
          }
        });
      }
    });
  }

  /** The floor: the same request sent straight to a consumer that echoes it. */
  @Benchmark
  @OperationsPerInvocation(N)
  public int bareEcho(LoopCpu cpu) {
    return onSender(cpu, done -> {
      int[] left = {N};
      for (int i = 0; i < N; i++) {
        bus.request(ECHO, body, plain).onComplete(ar -> {
          if (ar.failed()) {
            done.completeExceptionally(ar.cause());
          } else if (--left[0] == 0) {
            done.complete(N);
          }
        });
      }
    });
  }

  /**
   * The downstream's own share of an input: batch requests of the ferry's shape ({@link
   * #BATCHES} of them for N inputs, about the ferry's mean batch of 85), built once and sent
   * straight to the echoing downstream, uncopied as the ferry sends them. What it measures (the
   * request per batch, the downstream building its outcomes, Vert.x copying them back) is paid by
   * any batching client of this downstream; {@code ferrySubmit} minus {@code bareEcho} minus this
   * is what the ferry itself adds.
   */
  @Benchmark
  @OperationsPerInvocation(N)
  public int downstreamShare(LoopCpu cpu) {
    return sendBatches(cpu, DOWNSTREAM);
  }

  /** The downstream's share when it replies uncopied. */
  @Benchmark
  @OperationsPerInvocation(N)
  public int downstreamShareUncopiedReply(LoopCpu cpu) {
    return sendBatches(cpu, DOWNSTREAM_UNCOPIED);
  }

  /**
   * The downstream's share as {@link #downstreamShare} measures it, but on fresh inputs: each
   * invocation sends new batch requests whose inputs are new objects, built off the event loop
   * (their building is not counted), as the ferry's inputs are new objects every time. {@link
   * #downstreamShare} replays the same 1,024 inputs, which stay in the caches and the old
   * generation; the downstream reading and copying fresh ones costs more. Not a JMH benchmark:
   * {@link EventBusInterleaved} uses it (ADR 0074).
   */
  public int downstreamShareFresh(LoopCpu cpu) {
    return sendBatches(cpu, DOWNSTREAM, freshBatches());
  }

  /** {@link #downstreamShareFresh} with the downstream replying uncopied. */
  public int downstreamShareFreshUncopiedReply(LoopCpu cpu) {
    return sendBatches(cpu, DOWNSTREAM_UNCOPIED, freshBatches());
  }

  private java.util.List<JsonObject> freshBatches() {
    java.util.List<JsonObject> fresh = new java.util.ArrayList<>(BATCHES);
    for (JsonObject request : batchRequests) {
      int size = request.getJsonArray("inputs").size();
      JsonArray inputs = new JsonArray(new java.util.ArrayList<>(size));
      for (int i = 0; i < size; i++) {
        inputs.add(new JsonObject(new java.util.LinkedHashMap<>(4)).put("id", null).put("input", body.copy()));
      }
      fresh.add(new JsonObject().put("key", "key-0").put("inputs", inputs));
    }
    return fresh;
  }

  private int sendBatches(LoopCpu cpu, String address) {
    return sendBatches(cpu, address, batchRequests);
  }

  private int sendBatches(LoopCpu cpu, String address, java.util.List<JsonObject> requests) {
    return onSender(cpu, done -> {
      int[] left = {N};
      for (JsonObject request : requests) {
        int size = request.getJsonArray("inputs").size();
        bus.request(address, request, local).onComplete(ar -> {
          if (ar.failed()) {
            done.completeExceptionally(ar.cause());
          } else if ((left[0] -= size) == 0) {
            done.complete(N);
          }
        });
      }
    });
  }

  private int onSender(LoopCpu cpu, java.util.function.Consumer<CompletableFuture<Integer>> work) {
    long before = THREADS.getThreadCpuTime(loopThread);
    long allocatedBefore = ALLOCATIONS == null ? 0 : ALLOCATIONS.getThreadAllocatedBytes(loopThread);
    CompletableFuture<Integer> done = new CompletableFuture<>();
    sender.runOnContext(v -> work.accept(done));
    int n = done.join();
    cpu.loopCpuNs += THREADS.getThreadCpuTime(loopThread) - before;
    if (ALLOCATIONS != null) {
      cpu.loopAllocBytes += ALLOCATIONS.getThreadAllocatedBytes(loopThread) - allocatedBefore;
    }
    cpu.inputs += n;
    return n;
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
