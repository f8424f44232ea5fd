package dev.ferry;

import io.vertx.core.Future;
import java.util.List;

/**
 * The downstream call that carries one batch of a stream ferry ({@link Ferry#make}): the
 * inputs in the order they arrived, with no key.
 *
 * <p>It returns one result for the whole batch; the ferry's {@code extract} function then picks
 * each caller's outcome from it. The returned Future may complete on any thread: the ferry hands
 * the completion back to its own context. A call that throws, returns {@code null} or returns a
 * failed Future fails every caller of the batch with {@link FerryError#FAILED}; so does a Future that
 * cannot be listened to ({@code onComplete} throws), or that calls back with a null {@code
 * AsyncResult} or one whose methods throw (each also reported to the context's exception handler).
 *
 * <p>The Future must complete eventually: its slot stays taken until the call is over, even after
 * the call timeout has failed its callers (so no more than {@code maxInFlightBatches} calls are
 * ever on the wire).
 *
 * @param <I> the input type
 * @param <R> the batch result type
 */
@FunctionalInterface
public interface StreamCall<I, R> {
  Future<R> call(List<I> inputs);
}
