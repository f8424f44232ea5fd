package dev.ferry;

import io.vertx.core.Future;
import java.util.List;
import java.util.function.Function;

/** A {@link VersionedStore} made of two lambdas, for tests that need one odd store. */
final class TestStores {
  private TestStores() {}

  /** {@link VersionedStore#write} as a lambda. */
  interface Write<K, S, E> {
    Future<Boolean> write(K key, S state, long expectedVersion, List<? extends E> events);
  }

  static <K, S, E> VersionedStore<K, S, E> of(Function<K, Future<Versioned<S>>> read, Write<K, S, E> write) {
    return new VersionedStore<>() {
      @Override
      public Future<Versioned<S>> read(K key) {
        return read.apply(key);
      }

      @Override
      public Future<Boolean> write(K key, S state, long expectedVersion, List<? extends E> events) {
        return write.write(key, state, expectedVersion, events);
      }
    };
  }
}
