package dev.ferry.bench;

import dev.ferry.Ferry;
import dev.ferry.PerKeyConfig;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
 * JMH, scenario 4: the event-loop CPU one input costs through the Java API, against the floor of
 * any async call (a bare promise per input). Each invocation hops once onto the ferry's context,
 * submits {@link #N} inputs, and completes the downstream's calls there until every input is
 * answered; the single hop is spread over N inputs. The downstream costs nothing, so only the
 * ferry's own work is timed: admitting, queueing, forming batches, calling, and answering.
 *
 * <p>{@code keys = 1}: one hot key, so inputs wait and leave in batches of up to 100. {@code keys =
 * N}: every input's key is idle, so each one is a direct call, a batch of one.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SubmitCost {
  static final int N = 1024;

  @Param({"1", "1024"})
  public int keys;

  private Vertx vertx;
  private Context context;
  private Ferry<Integer, Integer> ferry;
  /** The downstream's calls not yet answered; touched only on the context. */
  private final ArrayDeque<Promise<Integer>> calls = new ArrayDeque<>();

  @Setup
  public void setUp() {
    vertx = Vertx.vertx();
    context = ((VertxInternal) vertx).createEventLoopContext();
    ferry = Ferry.perKey(context, PerKeyConfig.builder().maxQueueing(4 * N).build(), i -> i % keys, null, null,
        (Integer key, java.util.List<Integer> batch) -> {
          Promise<Integer> p = Promise.promise();
          calls.add(p);
          return p.future();
        },
        (in, out) -> in);
  }

  @TearDown
  public void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get();
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public int ferry() {
    return onContext(done -> {
      int[] left = {N};
      for (int i = 0; i < N; i++) {
        ferry.submit(i).onComplete(ar -> {
          if (--left[0] == 0) {
            done.complete(N);
          }
        });
      }
      answerCalls();
    });
  }

  /** The floor: one async call per input, answered the same way, with no batching at all. */
  @Benchmark
  @OperationsPerInvocation(N)
  public int barePromise() {
    return onContext(done -> {
      int[] left = {N};
      for (int i = 0; i < N; i++) {
        Promise<Integer> p = Promise.promise();
        calls.add(p);
        int input = i;
        p.future().map(r -> input).onComplete(ar -> {
          if (--left[0] == 0) {
            done.complete(N);
          }
        });
      }
      answerCalls();
    });
  }

  /** Answers calls until none is left; answering a batch may start the key's next one. */
  private void answerCalls() {
    for (Promise<Integer> p = calls.poll(); p != null; p = calls.poll()) {
      p.complete(0);
    }
  }

  private int onContext(java.util.function.Consumer<CompletableFuture<Integer>> work) {
    CompletableFuture<Integer> done = new CompletableFuture<>();
    context.runOnContext(v -> work.accept(done));
    return done.join();
  }
}
