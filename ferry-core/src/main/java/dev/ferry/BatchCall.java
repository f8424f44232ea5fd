package dev.ferry;

import io.vertx.core.Future;
import java.util.List;

/**
 * The downstream call that carries one batch: one key's inputs, in the order they are sent.
 *
 * <p>It returns one result for the whole batch; the ferry's {@code extract} function then picks
 * each caller's outcome from it. The returned Future may complete on any thread: the ferry hands
 * the completion back to its own context. A call that throws, returns {@code null} or returns a
 * failed Future fails every caller of the batch with {@link FerryError#FAILED}; so does a Future whose
 * {@code onComplete} throws, at once, the throw also reported to the context's exception handler
 * ({@code docs/adr/0129-a-future-that-cannot-be-listened-to-ends-its-call.md}), and one that calls
 * back with a null {@code AsyncResult} or one whose methods throw (reported likewise).
 *
 * <p>The Future must complete eventually: a key stays reserved until its call is over (see
 * {@code docs/adr/0005-call-timeout.md}).
 *
 * @param <K> the key type
 * @param <I> the input type
 * @param <R> the batch result type
 */
@FunctionalInterface
public interface BatchCall<K, I, R> {
  Future<R> call(K key, List<I> inputs);
}
