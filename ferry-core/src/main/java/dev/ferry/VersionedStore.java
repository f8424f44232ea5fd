package dev.ferry;

import io.vertx.core.Future;
import java.util.List;

/**
 * A store of versioned entities with a conditional write: the shape {@link dev.ferry.FoldWrite}
 * needs. Implementations must never block the calling thread.
 *
 * @param <K> the key type
 * @param <S> the state type
 * @param <E> the type of the events written alongside a new state (the applied inputs)
 */
public interface VersionedStore<K, S, E> {

  /** The entity's state and version; {@link Versioned#absent()} when it was never written. */
  Future<Versioned<S>> read(K key);

  /**
   * Writes {@code state} as version {@code expectedVersion + 1} if, and only if, the entity is
   * still at {@code expectedVersion} (0: it must not exist yet), together with {@code events} in
   * the same atomic step.
   *
   * @return {@code true} when written; {@code false} on a version conflict, in which case nothing
   *     was written. A failed Future, one that answers {@code null}, or none ({@code null}) means
   *     the outcome is unknown to the caller: the batch fails and is not retried; unless the Future
   *     failed with {@link WriteRefusedException}, which says the store knows nothing was written
   *     (the database answered with an error).
   * @throws RuntimeException when the store refuses the arguments before sending anything (say, an
   *     {@link IllegalArgumentException} for a state it cannot hold): nothing was written.
   */
  Future<Boolean> write(K key, S state, long expectedVersion, List<? extends E> events);

  /**
   * Why this store cannot record {@code event} as it is, or {@code null} when it can. {@link
   * FoldWrite} asks for each input that apply accepted, and rejects one the store refuses on its
   * own (its caller gets INPUT_REJECTED with this reason), so that it cannot fail its whole batch
   * at {@link #write}. Must be quick and must not block: it runs as the batch is folded. The
   * default refuses nothing.
   */
  default String refusal(E event) {
    return null;
  }

  /**
   * Why this store cannot hold {@code state} as it is, or {@code null} when it can. {@link
   * FoldWrite} asks only after {@link #write} threw (refused before sending anything), to find the
   * input whose accepted state the store cannot hold: that input is rejected alone and the batch
   * written without it (ADR 0143). Must be quick and must not block. The default refuses nothing,
   * so a write that throws fails its batch as it is.
   */
  default String stateRefusal(S state) {
    return null;
  }
}
