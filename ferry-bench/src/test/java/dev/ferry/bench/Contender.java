package dev.ferry.bench;

import dev.ferry.Dispatch;
import dev.ferry.Ferry;
import dev.ferry.PerKeyConfig;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.List;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * One way of getting keyed inputs to the {@link SimStore}, compared side by side in scenario 3.
 * Every contender gets a fresh store with the same costs and connection pool, and is started on the
 * load generator's context. A new contender joins by adding an implementation to {@link #all}, if
 * it honours the scenario's per-key semantics. {@code Ferry.make} and {@code Ferry.keyed} do not
 * (mixed-key batches, no per-key order), so they are not here; docs/performance.md says why.
 */
interface Contender {
  String name();

  Running start(Context context, SimStore store, Shape shape);

  /** A started contender. */
  interface Running {
    Future<?> submit(String key);

    /** Stops taking inputs; whatever is still waiting may fail. */
    Future<Void> close();

    /** The ferry's metrics, for a Ferry contender (on its context: exact); null for the others. */
    default dev.ferry.FerryMetrics metrics() {
      return null;
    }
  }

  /**
   * The batching bounds every batching contender is given (the same for all). In the
   * adaptive-dispatch scenarios {@code maxInFlightBatches} carries the store's pool size, which
   * only the contender tuned to it uses.
   */
  record Shape(int maxBatchSize, int maxInFlightBatches) {}

  /**
   * The contenders the adaptive-dispatch issue names, each given only the scenario's batch limit
   * and, where it is the tuning under test, the pool size: Ferry with every default but {@code
   * maxBatchSize} (adaptive dispatch since ADR 0016); the seeds' fixed-slots mode as it was the
   * default until then ({@code fixed slots 16}), with fixed 1 ms and 5 ms delays (at the same 16
   * slots) and with direct calls off and as many slots as connections; unbatched; Reactor.
   */
  static List<Contender> adaptiveSet() {
    List<Contender> all = new java.util.ArrayList<>(List.of(
        perKey("ferry", shape -> PerKeyConfig.builder().maxBatchSize(shape.maxBatchSize())),
        perKey("fixed slots 16", shape -> fixedSlots(shape).maxInFlightBatches(16)),
        perKey("fixed 1ms", shape -> fixedSlots(shape).maxInFlightBatches(16).maxBatchDelay(Duration.ofMillis(1))),
        perKey("fixed 5ms", shape -> fixedSlots(shape).maxInFlightBatches(16).maxBatchDelay(Duration.ofMillis(5))),
        perKey("fixed direct off", shape -> fixedSlots(shape).maxInFlightBatches(shape.maxInFlightBatches())
            .directIdleKeys(false)),
        unbatched(), reactor(Duration.ofMillis(1))));
    if (ShapeVsLoad.withHold) {
      // The Nagle question (ADR 0011): adaptive dispatch, but a lane that is not full waits up to 1 ms for company.
      all.add(2, perKey("ferry hold 1ms", shape -> PerKeyConfig.builder().dispatch(Dispatch.ADAPTIVE).maxBatchSize(shape.maxBatchSize())
          .maxBatchDelay(Duration.ofMillis(1))));
    }
    if (ShapeVsLoad.withTwin) {
      all.add(perKey(ShapeVsLoad.TWIN, shape -> PerKeyConfig.builder().maxBatchSize(shape.maxBatchSize())));
    }
    return all;
  }

  private static PerKeyConfig.Builder fixedSlots(Shape shape) {
    return PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).maxBatchSize(shape.maxBatchSize());
  }

  /** {@code Ferry.perKey} with the config {@code configure} gives for the shape (waiting room made unbounded). */
  static Contender perKey(String name, java.util.function.Function<Shape, PerKeyConfig.Builder> configure) {
    return new Contender() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public Running start(Context context, SimStore store, Shape shape) {
        PerKeyConfig config = configure.apply(shape).maxQueueing(5_000_000).build();
        Ferry<String, String> f = Ferry.perKey(context, config, s -> s, null, null,
            (String key, List<String> batch) -> store.call(batch.size(), key), (in, out) -> out);
        return new Running() {
          @Override
          public Future<?> submit(String key) {
            return f.submit(key);
          }

          @Override
          public Future<Void> close() {
            return f.close();
          }

          @Override
          public dev.ferry.FerryMetrics metrics() {
            return f.metrics();
          }
        };
      }
    };
  }

  /**
   * Scenario 3's contenders: Ferry with every default but {@code maxBatchSize} (adaptive dispatch
   * since ADR 0016, its limit learned under the default ceiling); the seeds' fixed-slots mode with
   * as many slots as the scenario gives ({@code fixed slots}), and its tunings: direct calls off, a
   * 1 ms and a 5 ms delay; unbatched; Reactor.
   */
  static List<Contender> all() {
    return List.of(perKey("ferry", shape -> PerKeyConfig.builder().maxBatchSize(shape.maxBatchSize())),
        ferry("fixed slots", Duration.ZERO), ferry("ferry direct off", Duration.ZERO, false),
        ferry("ferry delay 1ms", Duration.ofMillis(1)), ferry("ferry delay 5ms", Duration.ofMillis(5)),
        unbatched(), reactor(Duration.ofMillis(1)));
  }

  /**
   * {@code Ferry.perKey} in the seeds' fixed-slots mode with the shape's slots; a positive delay
   * gives fixed-delay batching ("wait for company").
   */
  static Contender ferry(String name, Duration delay) {
    return ferry(name, delay, true);
  }

  /**
   * {@code Ferry.perKey} in the seeds' fixed-slots mode with direct calls of idle keys on or off:
   * off, the slots are the one hard bound on concurrent calls, which a store with a small
   * connection pool may prefer.
   */
  static Contender ferry(String name, Duration delay, boolean directIdleKeys) {
    return new Contender() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public Running start(Context context, SimStore store, Shape shape) {
        // The waiting room is made effectively unbounded, like every other contender's queues:
        // overload shows as latency, not as rejections.
        PerKeyConfig config = PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).maxBatchSize(shape.maxBatchSize())
            .maxInFlightBatches(shape.maxInFlightBatches()).maxQueueing(5_000_000).maxBatchDelay(delay)
            .directIdleKeys(directIdleKeys).build();
        Ferry<String, String> f = Ferry.perKey(context, config, s -> s, null, null,
            (String key, List<String> batch) -> store.call(batch.size(), key), (in, out) -> out);
        return new Running() {
          @Override
          public Future<?> submit(String key) {
            return f.submit(key);
          }

          @Override
          public Future<Void> close() {
            return f.close();
          }
        };
      }
    };
  }

  /** One store call per input: no batching, no per-key ordering; the store's pool is the only bound. */
  static Contender unbatched() {
    return new Contender() {
      @Override
      public String name() {
        return "unbatched";
      }

      @Override
      public Running start(Context context, SimStore store, Shape shape) {
        return new Running() {
          @Override
          public Future<?> submit(String key) {
            return store.call(1, key);
          }

          @Override
          public Future<Void> close() {
            return Future.succeededFuture();
          }
        };
      }
    };
  }

  /**
   * The usual Project Reactor recipe: {@code groupBy(key)}, then per key {@code bufferTimeout} and
   * {@code concatMap} (one call in flight per key, in order). The fair-backpressure variant of
   * bufferTimeout is used because the plain one fails the whole stream with an overflow error as
   * soon as a key's calls fall behind its timer, which happens under overload.
   */
  static Contender reactor(Duration bufferTimeout) {
    return new Contender() {
      @Override
      public String name() {
        return "reactor " + bufferTimeout.toMillis() + "ms";
      }

      @Override
      public Running start(Context context, SimStore store, Shape shape) {
        record Item(String key, Promise<String> promise) {}
        // Emitted only from the generator's context, so a single-producer sink is enough.
        Sinks.Many<Item> sink = Sinks.many().unicast().onBackpressureBuffer();
        Disposable subscription = sink.asFlux()
            .groupBy(Item::key)
            .flatMap(group -> group
                .bufferTimeout(shape.maxBatchSize(), bufferTimeout, true)
                .concatMap(batch -> Mono.fromCompletionStage(store.call(batch.size(), batch).toCompletionStage())),
                Integer.MAX_VALUE)
            .subscribe(batch -> batch.forEach(item -> item.promise().tryComplete(item.key())), e -> {});
        return new Running() {
          @Override
          public Future<?> submit(String key) {
            Promise<String> p = Promise.promise();
            sink.tryEmitNext(new Item(key, p)).orThrow();
            return p.future();
          }

          @Override
          public Future<Void> close() {
            subscription.dispose();
            return Future.succeededFuture();
          }
        };
      }
    };
  }
}
