package dev.ferry.internal;

import dev.ferry.Ferry;
import dev.ferry.FerryConfig;
import dev.ferry.StreamCall;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.function.BiFunction;
import java.util.function.ToLongFunction;

/**
 * {@link Ferry#make}: validates each input, hands it to a {@link StreamEngine} on the owning
 * loop, and performs the engine's effects. {@code submit} may be called from any thread; everything
 * else runs only on the owning loop.
 */
public final class StreamFerry<I, R, O> extends Driver<Void, I, R, O> implements Ferry<I, O> {
  private final StreamEngine<I> engine;
  private final ToLongFunction<? super I> weigh;
  private final StreamCall<I, R> call;

  public StreamFerry(
      Loop loop,
      FerryConfig config,
      ToLongFunction<? super I> weigh,
      StreamCall<I, R> call,
      BiFunction<? super I, ? super R, ? extends O> extract) {
    super(loop, extract);
    this.weigh = weigh;
    this.call = call;
    this.engine = bind(new StreamEngine<>(config, engineLoop(), this));
  }

  /**
   * Admits one input on the loop. Returns its entry (whose state tells whether it waits, left at
   * once, or was refused), or {@code null} when the input was bad and its caller already failed.
   */
  Entry<Void, I> admitEntry(I input, long deadline, Completable<O> promise) {
    assert loop.inLoop();
    long weight = weightOf(weigh, input, promise);
    if (weight < 0) {
      return null;
    }
    Entry<Void, I> entry = engine.entry(input, weight, promise, deadline);
    engine.admit(entry);
    return entry;
  }

  @Override
  protected void admit(I input, long deadline, Completable<O> promise) {
    admitEntry(input, deadline, promise);
  }

  /** The engine, for {@link KeyedFerry}, which shares entries between callers of one key. */
  StreamEngine<I> engine() {
    return engine;
  }

  /**
   * Runs {@code transition} on the loop, then the effects it queued (for {@link KeyedFerry});
   * false when the loop is gone (its Vert.x closed) and nothing ran.
   */
  boolean run(Runnable transition) {
    return onLoopOrRefused(transition);
  }

  @Override
  protected Future<R> invoke(Batch<Void, I> batch) {
    return call.call(batch.inputs());
  }
}
