package dev.ferry.testing;

import dev.ferry.BatchCall;
import dev.ferry.internal.Loop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;

/**
 * A batch call that records every call (key, inputs, start and end time) and leaves it open until
 * the test completes it, so tests decide exactly when each call is over.
 */
public final class RecordingDownstream<K, I> implements BatchCall<K, I, List<I>> {
  /** One recorded call. {@code end} is -1 while it is open. */
  public static final class Call<K, I> {
    public final K key;
    public final List<I> inputs;
    public final long start;
    public long end = -1;
    final Promise<List<I>> promise = Promise.promise();

    Call(K key, List<I> inputs, long start) {
      this.key = key;
      this.inputs = List.copyOf(inputs);
      this.start = start;
    }

    public boolean open() {
      return end < 0;
    }
  }

  private final Loop clock;
  public final List<Call<K, I>> calls = new ArrayList<>();

  public RecordingDownstream(Loop clock) {
    this.clock = clock;
  }

  @Override
  public Future<List<I>> call(K key, List<I> inputs) {
    Call<K, I> c = new Call<>(key, inputs, clock.nanoTime());
    calls.add(c);
    return c.promise.future();
  }

  /** Completes call {@code index} successfully: its result is the inputs, echoed. */
  public void succeed(int index) {
    Call<K, I> c = calls.get(index);
    c.end = clock.nanoTime();
    c.promise.complete(c.inputs);
  }

  public void fail(int index, Throwable cause) {
    Call<K, I> c = calls.get(index);
    c.end = clock.nanoTime();
    c.promise.fail(cause);
  }

  public List<Call<K, I>> open() {
    return calls.stream().filter(Call::open).toList();
  }

  public int openCount() {
    return (int) calls.stream().filter(Call::open).count();
  }

  /** Completes every open call successfully, oldest first. */
  public void succeedAll() {
    for (int i = 0; i < calls.size(); i++) {
      if (calls.get(i).open()) {
        succeed(i);
      }
    }
  }
}
