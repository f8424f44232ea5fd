package dev.ferry.internal;

import dev.ferry.BatchCall;
import dev.ferry.Ferry;
import dev.ferry.PerKeyConfig;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
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
    this.engine = bind(new PerKeyEngine<>(config, order, engineLoop(), this));
  }

  @Override
  protected void admit(I input, long deadline, Completable<O> promise) {
    K key;
    try {
      key = keyOf.apply(input);
      if (key != null) {
        // The engine hashes the key in its lane map; a key whose hashCode throws is refused here,
        // before any state changes, rather than halfway through a transition.
        key.hashCode();
      }
    } catch (Throwable e) {
      // Errors and sneaky-thrown checked exceptions too: the caller must be answered.
      refuse(promise, "the key function failed: " + LogText.describe(e), e);
      return;
    }
    if (key == null) {
      refuse(promise, "the key function returned null", null);
      return;
    }
    long weight = weightOf(weigh, input, promise);
    if (weight < 0) {
      return;
    }
    engine.admit(engine.entry(key, input, weight, promise, deadline));
  }

  @Override
  protected Future<R> invoke(Batch<K, I> batch) {
    return call.call(batch.key, batch.inputs());
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
    if (!onLoopOrRefused(() -> engine.handOff(key, new HandOff<>(forward, done)))) {
      // The loop is gone (its Vert.x closed), and with it the ferry: it holds nothing of the key,
      // as a hand-off asked after any close finds (ADR 0127). Left to the loop, it never completed.
      done.tryComplete();
    }
    return done.future();
  }

  /**
   * The keys with inputs waiting or a call in flight, as a snapshot taken on the loop (at once
   * when called there): the keys a cluster node must hand over when ownership moves. Its
   * callbacks, like those of {@link #handOff}'s Future, run on the ferry's loop (the cluster
   * router, its one user, lives there too).
   */
  public Future<java.util.List<K>> activeKeys() {
    Promise<java.util.List<K>> keys = Promise.promise();
    if (!onLoopOrRefused(() -> {
      // Handed over after the transition, shielded, as every answer is: completed inside it, the
      // callbacks ran there, and one that threw ended the step before its effects ran (review AM).
      java.util.List<K> snapshot = engine.laneKeys();
      afterTransition(() -> complete(keys, snapshot, null, loop));
    })) {
      keys.tryComplete(java.util.List.of()); // the loop is gone, and with it the ferry's lanes
    }
    return keys.future();
  }
}
