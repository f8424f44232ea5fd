package dev.ferry.cluster;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Seeded random load for cluster tests. Each sender is (client node, entry, key): it pipelines
 * inputs {"s": sender, "n": seq} so that the shared downstream can check its per-key order.
 * Senders entering at the public address are not order-checked (round robin gives each input a
 * different path), only counted.
 */
final class Load {
  /** {@code client} set: a routing FerryClient sends (from node {@code from}'s client context). */
  record Sender(int from, String entry, String key, boolean ordered, dev.ferry.verticle.FerryClient client) {}

  private final ClusterHarness cluster;
  private final Random random;
  private final List<Sender> senders = new ArrayList<>();
  private final List<Future<?>> replies = new ArrayList<>();
  private final List<String> kinds = new ArrayList<>();
  /** Per reply, ms from its send to its answer (-1 until answered), set on the sender's thread. */
  private final List<java.util.concurrent.atomic.AtomicLong> latencies = new ArrayList<>();
  private int seq;
  /** How long each send waits for its answer; see {@link #sendTimeout}. */
  private long sendTimeoutMs = ClusterHarness.SEND_TIMEOUT_MS;
  /** A few failure messages, for the assertion message. */
  final List<String> samples = new ArrayList<>();

  Load(ClusterHarness cluster, long seed) {
    this.cluster = cluster;
    this.random = new Random(seed);
  }

  /**
   * Each send waits {@code ms} for its answer (the harness's hang guard by default). A test that
   * counts the event bus's own TIMEOUT as an outcome (inputs held by a node killed outright) sets
   * it below the wait of {@link #outcomes}, or those inputs read as "no reply".
   */
  Load sendTimeout(long ms) {
    this.sendTimeoutMs = ms;
    return this;
  }

  Load sender(int from, String entry, String key, boolean ordered) {
    senders.add(new Sender(from, entry, key, ordered, null));
    return this;
  }

  /** A routing client's sender: ordered, its outcomes counted as "routing ...". */
  Load routing(int from, dev.ferry.verticle.FerryClient client, String key) {
    senders.add(new Sender(from, "routing", key, true, client));
    return this;
  }

  /** Sends {@code count} inputs from random senders, pausing 1 ms every {@code burst}. */
  void send(int count, int burst) {
    for (int i = 0; i < count; i++) {
      int s = random.nextInt(senders.size());
      Sender sender = senders.get(s);
      Object body = sender.ordered() ? new JsonObject().put("s", s).put("n", seq++) : "x" + seq++;
      if (sender.client() != null) {
        io.vertx.core.Promise<Object> reply = io.vertx.core.Promise.promise();
        cluster.clients.get(sender.from()).runOnContext(v -> sender.client().submit(sender.key(), body,
            new dev.ferry.verticle.FerryClient.SubmitOptions().sendTimeout(java.time.Duration.ofMillis(sendTimeoutMs))).onComplete(reply));
        replies.add(reply.future());
        kinds.add("routing ");
      } else {
        replies.add(cluster.send(sendTimeoutMs, sender.from(), sender.entry(), sender.key(), body));
        kinds.add(senders.stream().anyMatch(x -> x.client() != null) ? "raw " : "");
      }
      timeLast();
      if (i % burst == burst - 1) {
        ClusterHarness.sleep(1);
      }
    }
  }

  /**
   * Sends {@code count} unordered inputs of {@code key} from node {@code from}'s client context
   * straight to {@code address} (a node address, as a raw sender or a stale client may), counted
   * as "raw ...".
   */
  void direct(int from, String address, String key, int count) {
    for (int i = 0; i < count; i++) {
      replies.add(cluster.send(sendTimeoutMs, from, address, key, "d" + seq++));
      kinds.add("raw ");
      timeLast();
    }
  }

  /** Waits for every reply (bounded) and counts outcomes: "ok", a failure code, or a transport failure type. */
  Map<String, Integer> outcomes(int seconds) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    Map<String, Integer> out = new TreeMap<>();
    for (int i = 0; i < replies.size(); i++) {
      Future<?> r = replies.get(i);
      String kind;
      try {
        long left = Math.max(1, deadline - System.nanoTime());
        r.toCompletionStage().toCompletableFuture().get(left, TimeUnit.NANOSECONDS);
        kind = "ok";
      } catch (ExecutionException e) {
        kind = kindOf(r);
        if (samples.size() < 5) {
          samples.add(String.valueOf(e.getCause()));
        }
      } catch (Exception e) {
        kind = "no reply";
      }
      out.merge(kinds.get(i) + kind, 1, Integer::sum);
    }
    return out;
  }

  /** Records when the last reply added comes: its latency, from now. */
  private void timeLast() {
    long sentAt = System.nanoTime();
    java.util.concurrent.atomic.AtomicLong latency = new java.util.concurrent.atomic.AtomicLong(-1);
    latencies.add(latency);
    replies.get(replies.size() - 1).onComplete(ar -> latency.set((System.nanoTime() - sentAt) / 1_000_000));
  }

  /**
   * The longest time, in ms, from a send to its answer among the answered replies whose kind (as
   * {@link #outcomes} counts them) starts with {@code kind}, or -1 when none was. Loose: a reply
   * whose time is not recorded yet (its handler runs just after the answer) is not counted.
   */
  long slowestMs(String kind) {
    long slowest = -1;
    for (int i = 0; i < replies.size(); i++) {
      Future<?> r = replies.get(i);
      if (r.isComplete() && (kinds.get(i) + kindOf(r)).startsWith(kind)) {
        slowest = Math.max(slowest, latencies.get(i).get());
      }
    }
    return slowest;
  }

  private static String kindOf(Future<?> r) {
    if (r.succeeded()) {
      return "ok";
    }
    return r.cause() instanceof ReplyException re
        ? re.failureType() + "/" + re.failureCode()
        : r.cause() instanceof dev.ferry.FerryException fe ? fe.kind().toString() : String.valueOf(r.cause());
  }

  int sent() {
    return replies.size();
  }

  /** Inputs sent and not answered yet. */
  long outstanding() {
    return replies.stream().filter(r -> !r.isComplete()).count();
  }

  /**
   * Keeps load on while {@code until} is not done, closed-loop: {@code burst} inputs whenever fewer
   * than {@code window} are unanswered. However long a step takes on a loaded machine, what is left
   * to answer at the end stays bounded by the window, not by the step's duration.
   */
  void sendWhile(java.util.function.BooleanSupplier until, int burst, int window) {
    while (!until.getAsBoolean()) {
      if (outstanding() < window) {
        send(burst, burst);
      }
      ClusterHarness.sleep(10);
    }
  }
}
