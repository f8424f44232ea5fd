package dev.ferry.internal;

/**
 * One accepted input, from admission to its single outcome. Runs only on the owning loop.
 *
 * <p>{@code caller} is the driver's handle for replying (a promise); the engine never touches it.
 * The state moves one way, WAITING to SENT to SETTLED (or WAITING straight to SETTLED): an entry
 * that is SETTLED has had its one reply, which is how "exactly one reply" is enforced.
 */
public final class Entry<K, I> {
  enum State { WAITING, SENT, SETTLED }

  public final K key;
  public final I input;
  public final long weight;
  public final Object caller;
  /** Admission order, used for ties under a custom order and for fairness checks. */
  final long seq;
  final long arrivedAt;
  /**
   * Absolute deadline in loop nanos, or {@link Long#MAX_VALUE} for none. Fixed at admission, except
   * for a {@link KeyedFerry} entry: callers share it, and it lasts as long as the latest of theirs.
   */
  long deadline;
  /**
   * When it was taken into a batch, in loop nanos ({@link Long#MIN_VALUE} until then): a keyed
   * caller is judged against it.
   */
  long takenAt = Long.MIN_VALUE;
  long deadlineTimer = -1;
  State state = State.WAITING;
  /** The driver answered its caller (checked there, so that a second answer is seen as the bug it is). */
  boolean answered;
  /**
   * The lane that holds (or held) it, set when it joins one: the engine finds an entry's lane
   * through this, never by hashing its key again, which a key mutated after submit would miss.
   */
  Lane<K, I> lane;

  public Entry(K key, I input, long weight, Object caller, long seq, long arrivedAt, long deadline) {
    this.key = key;
    this.input = input;
    this.weight = weight;
    this.caller = caller;
    this.seq = seq;
    this.arrivedAt = arrivedAt;
    this.deadline = deadline;
  }

  /** How long each entry has waited at {@code now}, in order (for probes). */
  static long[] waits(java.util.List<? extends Entry<?, ?>> entries, long now) {
    long[] waits = new long[entries.size()];
    for (int i = 0; i < waits.length; i++) {
      waits[i] = now - entries.get(i).arrivedAt;
    }
    return waits;
  }

  boolean waiting() {
    return state == State.WAITING;
  }
}
