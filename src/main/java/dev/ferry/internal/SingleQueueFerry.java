package dev.ferry.internal;

import dev.ferry.Ferry;
import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.FerryMetrics;
import dev.ferry.StreamCall;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.ToLongFunction;

/**
 * {@link Ferry#make}: validates each input, hands it to a {@link SingleQueueEngine} on the owning
 * loop, and performs the engine's effects. {@code submit} may be called from any thread; everything
 * else runs only on the owning loop.
 */
public final class SingleQueueFerry<I, R, O> extends Driver<Void, I, R, O> implements Ferry<I, O> {
  private final SingleQueueEngine<I> engine;
  private final ToLongFunction<? super I> weigh;
  private final StreamCall<I, R> call;

  public SingleQueueFerry(
      Loop loop,
      FerryConfig config,
      ToLongFunction<? super I> weigh,
      StreamCall<I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    super(loop, extract);
    this.weigh = weigh;
    this.call = call;
    this.engine = new SingleQueueEngine<>(config, engineLoop(), this);
    engine.observe(probe);
  }

  @Override
  public Future<O> submit(I input) {
    return submit(input, 0);
  }

  @Override
  public Future<O> submit(I input, Duration timeout) {
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT,
          "a deadline must be a positive duration, got " + timeout));
    }
    return submit(input, timeout.toNanos());
  }

  private Future<O> submit(I input, long timeoutNanos) {
    if (input == null) {
      return Future.failedFuture(new FerryException(FerryError.BAD_INPUT, "the input is null"));
    }
    Promise<O> promise = Promise.promise();
    onLoop(() -> admit(input, timeoutNanos, promise));
    return promise.future();
  }

  /**
   * Admits one input on the loop. Returns its entry (whose state tells whether it waits, left at
   * once, or was refused), or {@code null} when the input was bad and its caller already failed.
   */
  Entry<Void, I> admit(I input, long timeoutNanos, Promise<O> promise) {
    assert loop.inLoop();
    long weight;
    try {
      weight = weigh == null ? 1 : weigh.applyAsLong(input);
    } catch (RuntimeException e) {
      promise.fail(new FerryException(FerryError.BAD_INPUT, "the weight function failed: " + e, e));
      return null;
    }
    if (weight < 0) {
      promise.fail(new FerryException(FerryError.BAD_INPUT, "the weight must be >= 0, got " + weight));
      return null;
    }
    Entry<Void, I> entry = engine.entry(input, weight, promise, timeoutNanos);
    engine.admit(entry);
    return entry;
  }

  /** The engine, for {@link KeyedFerry}, which shares entries between callers of one key. */
  SingleQueueEngine<I> engine() {
    return engine;
  }

  /** Runs {@code transition} on the loop, then the effects it queued (for {@link KeyedFerry}). */
  void run(Runnable transition) {
    onLoop(transition);
  }

  @Override
  protected Future<R> invoke(Batch<Void, I> batch) {
    return call.call(batch.inputs());
  }

  @Override
  protected void callOver(Batch<Void, I> batch) {
    engine.completed(batch);
  }

  @Override
  public FerryMetrics metrics() {
    return engine.metrics();
  }

  @Override
  public Future<Void> close() {
    onLoop(engine::close);
    return closedFuture();
  }

  @Override
  public Future<Void> drain(Duration timeout) {
    long nanos = timeout == null ? 0 : Math.max(0, timeout.toNanos());
    onLoop(() -> engine.drain(nanos));
    return closedFuture();
  }
}
