package dev.ferry.bench;

import dev.ferry.Ferry;
import dev.ferry.FerryMetrics;
import dev.ferry.PerKeyConfig;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * Scenario 5: memory. (a) Bytes the ferry holds per waiting input, beyond the input itself: one
 * key's call is held open while N more inputs for it wait; the used heap after a full GC is
 * compared before and after, with the inputs allocated beforehand so their own size is excluded. A
 * bare pending promise per input (what any async API holds) is measured the same way beside it.
 * (b) A million distinct keys pass through a ferry: since a lane exists only while its key has
 * work, the heap must end where it started.
 */
final class Memory implements Scenario {
  @Override
  public String id() {
    return "s5";
  }

  @Override
  public String title() {
    return "Memory: bytes per waiting input, and a million keys passing through";
  }

  @Override
  public Outcome run(BenchEnv env) throws Exception {
    int waiting = env.pick(200_000, 5_000);
    int distinct = env.pick(1_000_000, 20_000);
    double perInput = perWaitingInput(env, waiting);
    double perPromise = perBarePromise(waiting);
    long[] keys = distinctKeys(env, distinct);
    long delta = keys[1] - keys[0];
    List<Row> rows = new ArrayList<>();
    rows.add(new Row(id(), "heap held per waiting input", String.format("%.0f bytes", perInput), "-",
        String.format("bare pending promise %.0f bytes", perPromise), "-"));
    rows.add(new Row(id(), String.format("heap after %,d distinct keys", distinct),
        String.format("%+,d KB (%.3f bytes per key; %d lanes left)", delta / 1024, delta / (double) distinct, keys[2]),
        "back where it started (< 1 byte/key, 0 lanes)", "-",
        Row.verdict(delta / (double) distinct < 1 && keys[2] == 0)));
    return new Outcome(new JsonObject().put("waitingInputs", waiting).put("bytesPerWaitingInput", perInput)
        .put("bytesPerBarePromise", perPromise).put("distinctKeys", distinct).put("heapBefore", keys[0])
        .put("heapAfter", keys[1]).put("lanesLeft", keys[2]), rows);
  }

  private double perWaitingInput(BenchEnv env, int n) throws Exception {
    Context context = env.newContext();
    // The calls kept open, and whether to stop holding them; touched on the context only.
    java.util.ArrayDeque<Promise<Void>> held = new java.util.ArrayDeque<>();
    boolean[] released = {false};
    Ferry<Object, Object> ferry = Ferry.perKey(context, PerKeyConfig.builder().maxQueueing(n + 1).build(),
        in -> "the-key", null, null,
        (String key, List<Object> batch) -> {
          if (released[0]) {
            return Future.failedFuture("released");
          }
          Promise<Void> p = Promise.promise();
          held.add(p);
          return p.future();
        }, (in, out) -> in);
    Object[] inputs = new Object[n];
    for (int i = 0; i < n; i++) {
      inputs[i] = new Object();
    }
    ferry.submit(new Object()); // occupies the key: everything after it waits
    while (metrics(context, ferry).inFlightBatches() < 1) {
      Thread.sleep(10);
    }
    long before = usedHeap();
    context.runOnContext(v -> {
      for (Object in : inputs) {
        ferry.submit(in);
      }
    });
    while (metrics(context, ferry).queuedInputs() < n) {
      Thread.sleep(10);
    }
    long after = usedHeap();
    context.runOnContext(v -> {
      released[0] = true;
      for (Promise<Void> p = held.poll(); p != null; p = held.poll()) {
        p.tryFail("released");
      }
    });
    BenchEnv.await(ferry.close());
    return (after - before) / (double) n;
  }

  private static double perBarePromise(int n) {
    Object[] promises = new Object[n];
    long before = usedHeap();
    for (int i = 0; i < n; i++) {
      Promise<Object> p = Promise.promise();
      p.future().onComplete(ar -> {});
      promises[i] = p;
    }
    long after = usedHeap();
    return promises.length == n ? (after - before) / (double) n : 0;
  }

  /** Heap before and after {@code n} distinct keys pass through, and the lanes left over. */
  private long[] distinctKeys(BenchEnv env, int n) throws Exception {
    Context context = env.newContext();
    Ferry<Integer, Integer> ferry = Ferry.perKey(context, PerKeyConfig.builder().maxQueueing(20_000).build(),
        i -> "key-" + i, null, null,
        (String key, List<Integer> batch) -> context.owner().timer(1).map(t -> batch.size()), (in, out) -> out);
    pass(context, ferry, 0, 20_000); // warm up the code paths, so their one-off allocations are not counted
    long before = usedHeap();
    for (int from = 0; from < n; from += 10_000) {
      pass(context, ferry, from, Math.min(n, from + 10_000));
    }
    long after = usedHeap();
    int lanes = metrics(context, ferry).activeLanes();
    BenchEnv.await(ferry.close());
    return new long[] {before, after, lanes};
  }

  /** Submits inputs {@code [from, to)} on the ferry's context and waits for every answer. */
  private static void pass(Context context, Ferry<Integer, Integer> ferry, int from, int to) throws Exception {
    Promise<Void> done = Promise.promise();
    context.runOnContext(v -> {
      List<Future<Integer>> answers = new ArrayList<>(to - from);
      for (int i = from; i < to; i++) {
        answers.add(ferry.submit(i));
      }
      Future.join(answers).onComplete(ar -> done.complete());
    });
    BenchEnv.await(done.future());
  }

  private static FerryMetrics metrics(Context context, Ferry<?, ?> ferry) throws Exception {
    Promise<FerryMetrics> p = Promise.promise();
    context.runOnContext(v -> p.complete(ferry.metrics()));
    return BenchEnv.await(p.future());
  }

  private static long usedHeap() {
    Runtime rt = Runtime.getRuntime();
    long used = Long.MAX_VALUE;
    // Several collections: one may leave garbage that a finalizer or reference queue frees later.
    for (int i = 0; i < 4; i++) {
      System.gc();
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      used = Math.min(used, rt.totalMemory() - rt.freeMemory());
    }
    return used;
  }
}
