package dev.ferry;

import dev.ferry.internal.KeyedFerry;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.internal.StreamFerry;
import dev.ferry.internal.VertxLoop;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * A batching ferry: callers submit inputs one at a time, and the ferry carries them to the
 * downstream in batches, handing each caller its own outcome.
 *
 * <p>A ferry is bound to one Vert.x event-loop context, where all of its state lives (no locks).
 * {@link #submit} may be called from any thread; the returned Future fails only with {@link
 * FerryException}. Create one with {@link #perKey} (one lane per key), {@link #make} (one queue,
 * no keys) or {@link #keyed} (the data-loader pattern, on {@code make}).
 *
 * @param <I> the input type
 * @param <O> a caller's outcome type
 */
public interface Ferry<I, O> {

  /** Submits one input; the Future completes with its outcome, or fails with a {@link FerryException}. */
  Future<O> submit(I input);

  /**
   * Submits one input with a deadline: if it has not left in a batch within {@code timeout}, it is
   * dropped, never sent, and the Future fails with {@link FerryError#TIMEOUT}. An input already in
   * flight is never dropped.
   */
  Future<O> submit(I input, Duration timeout);

  /**
   * A snapshot of state and counters: exact when called on the ferry's context; from any other
   * thread, the snapshot published on that context at the end of its last transition.
   */
  FerryMetrics metrics();

  /**
   * Closes now: new submissions fail with {@link FerryError#CLOSED}, every waiting input fails
   * with CLOSED, and calls in flight finish and deliver. Completes once the last call is over; its
   * callbacks run on the caller's context when it has one, as a submit's do. Any number of times.
   */
  Future<Void> close();

  /**
   * Closes gracefully: new submissions fail with CLOSED at once, waiting inputs are still sent
   * (without waiting for a batch delay) for up to {@code timeout}, whatever is left then fails with
   * CLOSED. Completes once the last call is over, its callbacks on the caller's context as for
   * {@link #close()}. A null, zero or negative timeout drains for no time: what a free call takes
   * at that instant still leaves, everything else waiting is CLOSED. A timeout longer than about
   * 292 years fails the returned Future with {@link FerryError#BAD_INPUT} and leaves the ferry open.
   */
  Future<Void> drain(Duration timeout);

  /**
   * A per-key ferry: each key has its own lane; one call in flight per key; a key's inputs are sent
   * in submission order; keys take turns; batches form on completion.
   *
   * @param key the key of an input (must not return null)
   * @param call the downstream call for one key's batch
   * @param extract each caller's outcome from the batch result; throwing fails only that caller
   *     (a {@link FerryException} as it is, anything else as {@link FerryError#FAILED})
   */
  static <I, K, R, O> Ferry<I, O> perKey(
      Vertx vertx,
      PerKeyConfig config,
      Function<? super I, ? extends K> key,
      BatchCall<K, I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    return perKey(vertx, config, key, null, null, call, extract);
  }

  /**
   * A per-key ferry with weights and a custom order.
   *
   * @param weigh an input's weight, computed once at submit (null: every input weighs 1)
   * @param order the order in which a key's waiting inputs leave, ties in submission order (null:
   *     submission order)
   */
  static <I, K, R, O> Ferry<I, O> perKey(
      Vertx vertx,
      PerKeyConfig config,
      Function<? super I, ? extends K> key,
      ToLongFunction<? super I> weigh,
      Comparator<? super I> order,
      BatchCall<K, I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    return perKey(VertxLoop.forCaller(vertx), config, key, weigh, order, call, extract);
  }

  /** A per-key ferry bound to the given event-loop context. */
  static <I, K, R, O> Ferry<I, O> perKey(
      Context context,
      PerKeyConfig config,
      Function<? super I, ? extends K> key,
      ToLongFunction<? super I> weigh,
      Comparator<? super I> order,
      BatchCall<K, I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    return perKey(new VertxLoop(context), config, key, weigh, order, call, extract);
  }

  private static <I, K, R, O> Ferry<I, O> perKey(
      VertxLoop loop,
      PerKeyConfig config,
      Function<? super I, ? extends K> key,
      ToLongFunction<? super I> weigh,
      Comparator<? super I> order,
      BatchCall<K, I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    java.util.Objects.requireNonNull(config, "config");
    java.util.Objects.requireNonNull(key, "key");
    java.util.Objects.requireNonNull(call, "call");
    java.util.Objects.requireNonNull(extract, "extract");
    return new PerKeyFerry<>(loop, config, key, weigh, order, call, extract);
  }

  /**
   * A stream ferry: inputs wait in one bounded FIFO queue and leave in batches, up to {@code
   * maxInFlightBatches} calls at once. A batch forms only when a slot is free, taking everything
   * waiting up to the batch bounds; with a positive {@code maxBatchDelay} it waits until full or
   * until its oldest input has waited that long. Every input weighs 1.
   *
   * @param call the downstream call for one batch
   * @param extract each caller's outcome from the batch result; throwing fails only that caller
   *     (a {@link FerryException} as it is, anything else as {@link FerryError#FAILED})
   */
  static <I, R, O> Ferry<I, O> make(
      Vertx vertx,
      FerryConfig config,
      StreamCall<I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    return make(vertx, config, null, call, extract);
  }

  /**
   * A stream ferry with weights.
   *
   * @param weigh an input's weight (at least 0), computed once at submit; null: every input weighs
   *     1. A throwing weigh, or a negative weight, fails that submit with {@link FerryError#BAD_INPUT}.
   */
  static <I, R, O> Ferry<I, O> make(
      Vertx vertx,
      FerryConfig config,
      ToLongFunction<? super I> weigh,
      StreamCall<I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    return make(VertxLoop.forCaller(vertx), config, weigh, call, extract);
  }

  /** A stream ferry bound to the given event-loop context. */
  static <I, R, O> Ferry<I, O> make(
      Context context,
      FerryConfig config,
      ToLongFunction<? super I> weigh,
      StreamCall<I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    return make(new VertxLoop(context), config, weigh, call, extract);
  }

  private static <I, R, O> Ferry<I, O> make(
      VertxLoop loop,
      FerryConfig config,
      ToLongFunction<? super I> weigh,
      StreamCall<I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    java.util.Objects.requireNonNull(config, "config");
    java.util.Objects.requireNonNull(call, "call");
    java.util.Objects.requireNonNull(extract, "extract");
    return new StreamFerry<>(loop, config, weigh, call, extract);
  }

  /**
   * A keyed ferry (the data-loader pattern), built on {@link #make}: {@code submit(key)} asks for
   * one key's value. A batch calls {@code call} once with its distinct keys, in first-seen order;
   * callers asking for a key that is still waiting share its place in the queue, so the key is
   * fetched once and each of them gets the value. A key absent from the returned map completes
   * with {@link Optional#empty()} (not found, which is not a failure); a failed call fails every
   * caller of the batch with {@link FerryError#FAILED}.
   *
   * <p>Nothing is cached across batches: a key asked for again after its batch left is fetched
   * again. Put a cache in front if values may be reused. A caller's deadline is its own: it fails
   * with TIMEOUT if its key has not left by then, and the key is dropped, never sent, once every
   * caller waiting for it has given up. Each waiting key counts once (weight 1) toward the batch
   * bounds, however many callers share it; toward {@code maxQueueing}, while the key waits, the key
   * and every other caller sharing it count (each is held in memory), so a caller joining a full
   * room is REJECTED. Once the key has left in a batch, neither counts.
   */
  static <K, V> Ferry<K, Optional<V>> keyed(
      Vertx vertx, FerryConfig config, Function<List<K>, Future<Map<K, V>>> call) {
    return keyed(VertxLoop.forCaller(vertx), config, call);
  }

  /** A keyed ferry bound to the given event-loop context. */
  static <K, V> Ferry<K, Optional<V>> keyed(
      Context context, FerryConfig config, Function<List<K>, Future<Map<K, V>>> call) {
    return keyed(new VertxLoop(context), config, call);
  }

  private static <K, V> Ferry<K, Optional<V>> keyed(
      VertxLoop loop, FerryConfig config, Function<List<K>, Future<Map<K, V>>> call) {
    java.util.Objects.requireNonNull(config, "config");
    java.util.Objects.requireNonNull(call, "call");
    return new KeyedFerry<>(loop, config, call);
  }
}
