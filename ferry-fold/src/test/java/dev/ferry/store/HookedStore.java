package dev.ferry.store;

import dev.ferry.Versioned;
import dev.ferry.VersionedStore;
import io.vertx.core.Future;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Wraps a store to let a test act between a FoldWrite's read and its write (a concurrent writer, an
 * injected failure) and to count round trips. Each hook receives the real operation and decides
 * whether, and after what, to run it.
 */
public final class HookedStore<K, S, E> implements VersionedStore<K, S, E> {
  /** Around each write: call {@code write.get()} to really write, or answer without it. */
  public interface WriteHook<K> {
    Future<Boolean> onWrite(K key, long expectedVersion, Supplier<Future<Boolean>> write);
  }

  /** Around each read: call {@code read.get()} to really read, or answer without it. */
  public interface ReadHook<K, S> {
    Future<Versioned<S>> onRead(K key, Supplier<Future<Versioned<S>>> read);
  }

  private final VersionedStore<K, S, E> inner;
  private volatile WriteHook<K> writeHook = (k, v, w) -> w.get();
  private volatile ReadHook<K, S> readHook = (k, r) -> r.get();
  public final AtomicLong reads = new AtomicLong();
  public final AtomicLong writes = new AtomicLong();
  public final AtomicLong conflicts = new AtomicLong();

  public HookedStore(VersionedStore<K, S, E> inner) {
    this.inner = inner;
  }

  public HookedStore<K, S, E> onWrite(WriteHook<K> hook) {
    this.writeHook = hook;
    return this;
  }

  public HookedStore<K, S, E> onRead(ReadHook<K, S> hook) {
    this.readHook = hook;
    return this;
  }

  @Override
  public Future<Versioned<S>> read(K key) {
    reads.incrementAndGet();
    return readHook.onRead(key, () -> inner.read(key));
  }

  @Override
  public String refusal(E event) {
    return inner.refusal(event);
  }

  @Override
  public String stateRefusal(S state) {
    return inner.stateRefusal(state);
  }

  @Override
  public Future<Boolean> write(K key, S state, long expectedVersion, List<? extends E> events) {
    writes.incrementAndGet();
    return writeHook.onWrite(key, expectedVersion, () -> inner.write(key, state, expectedVersion, events))
        .andThen(ar -> {
          if (ar.succeeded() && !ar.result()) {
            conflicts.incrementAndGet();
          }
        });
  }
}
