package dev.ferry.cluster;

import io.vertx.core.Future;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A membership for tests without Hazelcast: it delivers one snapshot at start, every node of
 * {@code view} live and announced, and never changes; its close completes with {@code closed}.
 */
record FixedView(String self, Set<String> view, Future<Void> closed) implements Membership {
  FixedView(String self, Set<String> view) {
    this(self, view, Future.succeededFuture());
  }

  @Override
  public Future<Void> start(String life, Consumer<Snapshot> listener) {
    listener.accept(new Snapshot(view, view, Set.of()));
    return Future.succeededFuture();
  }

  @Override
  public Future<Void> withdraw() {
    return Future.succeededFuture();
  }

  @Override
  public Future<Void> close() {
    return closed;
  }
}
