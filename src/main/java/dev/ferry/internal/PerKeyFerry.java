package dev.ferry.internal;

import dev.ferry.BatchCall;
import dev.ferry.Ferry;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.FerryMetrics;
import dev.ferry.PerKeyConfig;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.Comparator;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * {@link Ferry#perKey}: validates each input, hands it to a {@link PerKeyEngine} on the owning loop,
 * and performs the engine's effects. {@code submit} may be called from any thread; everything else
 * runs only on the owning loop.
 */
public final class PerKeyFerry<K, I, R, O> extends Driver<K, I, R, O> implements Ferry<I, O> {
  private final PerKeyEngine<K, I> engine;
  private final Function<? super I, ? extends K> keyOf;
  private final ToLongFunction<? super I> weigh;
  private final BatchCall<K, I, R> call;

  public PerKeyFerry(
      Loop loop,
      PerKeyConfig config,
      Function<? super I, ? extends K> keyOf,
      ToLongFunction<? super I> weigh,
      Comparator<? super I> order,
      BatchCall<K, I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    super(loop, extract);
    this.keyOf = keyOf;
    this.weigh = weigh;
    this.call = call;
    this.engine = new PerKeyEngine<>(config, order, engineLoop(), this);
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

  private void admit(I input, long timeoutNanos, Promise<O> promise) {
    K key;
    long weight;
    try {
      key = keyOf.apply(input);
      weight = weigh == null ? 1 : weigh.applyAsLong(input);
    } catch (RuntimeException e) {
      promise.fail(new FerryException(FerryError.BAD_INPUT, "the key or weight function failed: " + e, e));
      return;
    }
    if (key == null) {
      promise.fail(new FerryException(FerryError.BAD_INPUT, "the key function returned null"));
      return;
    }
    if (weight < 0) {
      promise.fail(new FerryException(FerryError.BAD_INPUT, "the weight must be >= 0, got " + weight));
      return;
    }
    engine.admit(engine.entry(key, input, weight, promise, timeoutNanos));
  }

  @Override
  protected Future<R> invoke(Batch<K, I> batch) {
    return call.call(batch.key, batch.inputs());
  }

  @Override
  protected void callOver(Batch<K, I> batch) {
    engine.completed(batch);
  }

  /** Reports the engine's work to {@code probe} (metrics); call before the first submit. */
  public void observe(Probe probe) {
    onLoop(() -> engine.observe(probe));
  }

  /** The engine, for tests in this package. */
  PerKeyEngine<K, I> engine() {
    return engine;
  }

  /**
   * Hands {@code key} to another owner: once its call in flight here is over, its waiting inputs
   * are passed, in order, to {@code forward}, and each caller gets the new owner's answer. The
   * returned Future completes when every waiting input has been forwarded (not answered).
   */
  public Future<Void> handOff(K key, Forward<I, O> forward) {
    Promise<Void> done = Promise.promise();
    onLoop(() -> engine.handOff(key, new HandOff<>(forward, done)));
    return done.future();
  }

  /**
   * The keys with inputs waiting or a call in flight, as a snapshot taken on the loop (at once
   * when called there): the keys a cluster node must hand over when ownership moves.
   */
  public Future<java.util.List<K>> activeKeys() {
    Promise<java.util.List<K>> keys = Promise.promise();
    onLoop(() -> keys.complete(engine.laneKeys()));
    return keys.future();
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
