package dev.ferry.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * One call's worth of entries, and what became of the call. Runs only on the owning loop.
 *
 * <p>The driver fills {@link #result} or {@link #failure} when the call's Future completes and then
 * reports it to the engine; the engine decides whether the callers still await that outcome.
 */
public final class Batch<K, I> {
  public final K key;
  /** The lane of the key, found again through this when the call is over (not by hashing the key). */
  final Lane<K, I> lane;
  public final List<Entry<K, I>> entries;
  /** A direct call: an idle key's input sent at once, outside the batch slots. */
  public final boolean direct;
  public final long weight;
  final long startedAt;
  /** Calls on the wire just after this one started, itself included (for the call limit). */
  final int inFlightAtStart;
  /** The call timeout fired: callers were failed already, the key is still held. */
  boolean overdue;
  boolean over;

  public Object result;
  public Throwable failure;

  Batch(K key, Lane<K, I> lane, List<Entry<K, I>> entries, boolean direct, long weight, long startedAt,
      int inFlightAtStart) {
    this.key = key;
    this.lane = lane;
    this.inFlightAtStart = inFlightAtStart;
    this.entries = entries;
    this.direct = direct;
    this.weight = weight;
    this.startedAt = startedAt;
  }

  public int size() {
    return entries.size();
  }

  /** The inputs, in the order they are sent. */
  public <T> List<T> inputs() {
    List<T> inputs = new ArrayList<>(entries.size());
    for (Entry<K, I> e : entries) {
      @SuppressWarnings("unchecked")
      T input = (T) e.input;
      inputs.add(input);
    }
    return inputs;
  }
}
