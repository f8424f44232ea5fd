package dev.ferry;

import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The result of one {@link FoldWrite} batch: one outcome per input, in batch order, plus the
 * version the entity is at afterwards and how many read/write attempts it took.
 *
 * @param <I> the input type
 * @param <R> the caller's result type
 */
public final class FoldOutcomes<I, R> {
  private final List<I> inputs;
  private final List<FoldOutcome<R>> outcomes;
  private final long version;
  private final int attempts;
  // Built on first lookup. Inputs are matched by identity, not equals: two equal deposits are two
  // callers. Queues hand a repeated object its outcomes in batch order, the order extract runs in.
  private Map<I, ArrayDeque<FoldOutcome<R>>> byInput;

  FoldOutcomes(List<I> inputs, List<FoldOutcome<R>> outcomes, long version, int attempts) {
    this.inputs = inputs;
    this.outcomes = List.copyOf(outcomes);
    this.version = version;
    this.attempts = attempts;
  }

  /** Outcomes in batch order, one per input. */
  public List<FoldOutcome<R>> list() {
    return outcomes;
  }

  /** The entity's version after this batch (unchanged when every input was rejected). */
  public long version() {
    return version;
  }

  /** Read/write rounds it took: 1 unless a concurrent writer got in between. */
  public int attempts() {
    return attempts;
  }

  /**
   * The outcome of {@code input}, which must be one of this batch's input objects. Called once per
   * caller, in batch order, when an object appears more than once.
   */
  public FoldOutcome<R> of(I input) {
    if (byInput == null) {
      byInput = new IdentityHashMap<>();
      for (int i = 0; i < inputs.size(); i++) {
        byInput.computeIfAbsent(inputs.get(i), k -> new ArrayDeque<>()).add(outcomes.get(i));
      }
    }
    ArrayDeque<FoldOutcome<R>> queue = byInput.get(input);
    if (queue == null || queue.isEmpty()) {
      throw new IllegalArgumentException("not an input of this batch (or asked twice): " + input);
    }
    return queue.size() == 1 ? queue.peek() : queue.poll();
  }
}
