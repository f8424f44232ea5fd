package dev.ferry;

import dev.ferry.internal.LogText;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The read, apply, conditional-write round trip as a per-key batch call.
 *
 * <p>For one key's batch it reads the entity once, folds the apply function over the inputs in
 * order (a rejected input leaves the state as it was), and writes the final state and the accepted
 * inputs with one conditional write; an input the store says it cannot record ({@link
 * VersionedStore#refusal}) is rejected like one apply rejects, and so is one after which the store
 * cannot hold the state ({@link VersionedStore#stateRefusal}, asked when a write refused). When
 * another writer got in between (a version conflict), it reads again and folds the whole batch
 * again, up to {@code maxAttempts} rounds; then the batch fails and nothing of it was written. A batch whose inputs were all rejected writes nothing. A
 * write that fails without an answer fails the batch with {@link WriteOutcomeUnknownException}: it
 * may have been applied, so it is not retried; one the store says was refused ({@link
 * WriteRefusedException}) fails it with that exception, nothing written.
 *
 * <pre>{@code
 * FoldWrite<String, JsonObject, Object, Long> fw = FoldWrite
 *     .<String, JsonObject, Object, Long>builder(store, Accounts::apply)
 *     .initial(Accounts::opened)
 *     .build();
 * Ferry<Object, Long> ferry = fw.ferry(vertx, config, op -> Accounts.accountOf((JsonObject) op));
 * }</pre>
 *
 * @param <K> the key type
 * @param <S> the state type; apply must treat it as immutable (it may be the initial state)
 * @param <I> the input type (also what the store records as events)
 * @param <R> a caller's result type
 */
public final class FoldWrite<K, S, I, R> implements BatchCall<K, I, FoldOutcomes<I, R>> {
  private final VersionedStore<? super K, S, ? super I> store;
  private final BiFunction<? super S, ? super I, ? extends FoldDecision<S, R>> apply;
  private final Supplier<? extends S> initial;
  private final int maxAttempts;

  private FoldWrite(Builder<K, S, I, R> b) {
    this.store = b.store;
    this.apply = b.apply;
    this.initial = b.initial;
    this.maxAttempts = b.maxAttempts;
  }

  /**
   * Starts a FoldWrite over {@code store}; {@code apply} must be pure: it decides from the state
   * and the input alone, and may run more than once for the same input (after a conflict).
   */
  public static <K, S, I, R> Builder<K, S, I, R> builder(
      VersionedStore<? super K, S, ? super I> store,
      BiFunction<? super S, ? super I, ? extends FoldDecision<S, R>> apply) {
    return new Builder<>(store, apply);
  }

  @Override
  public Future<FoldOutcomes<I, R>> call(K key, List<I> inputs) {
    // Copied once: the same list is folded again after a conflict.
    return attempts(key, List.copyOf(inputs), 1);
  }

  /**
   * Runs attempts from {@code first} until one answers or the last conflicts. Conflicts answered at
   * once run in a loop ({@link #untilPending}), not each attempt inside the last one's completion:
   * a store that answers at once (in memory, a cache) grew the stack by an attempt per conflict,
   * and a large {@code maxAttempts} overflowed it (review D). After an attempt answered later, the
   * rest run from completions ({@link #later}), the caller keeping the Future composed over that
   * attempt, with its context: an Error thrown by the caller's handler still reaches the context's
   * handler.
   */
  private Future<FoldOutcomes<I, R>> attempts(K key, List<I> inputs, int first) {
    int[] at = {first};
    Future<FoldOutcomes<I, R>> round = untilPending(key, inputs, at);
    return round.compose(done -> done != null ? Future.succeededFuture(done) : later(key, inputs, at[0] + 1));
  }

  /**
   * Runs attempts from {@code at[0]} while each conflicts at once, and returns the first that did
   * not: one answered later, failed, or answered (null: a conflict answered later), with {@code
   * at[0]} its number. What the first attempt throws is thrown (as a batch call that throws); what
   * a later one throws fails the Future (as a compose whose function throws).
   */
  private Future<FoldOutcomes<I, R>> untilPending(K key, List<I> inputs, int[] at) {
    for (int first = at[0]; ; at[0]++) {
      Future<FoldOutcomes<I, R>> round;
      try {
        round = attempt(key, inputs, at[0]);
      } catch (Throwable e) {
        if (at[0] == first) {
          throw e;
        }
        return Future.failedFuture(e);
      }
      if (!round.isComplete() || round.failed() || round.result() != null) {
        return round;
      }
    }
  }

  /**
   * The attempts after one answered later, as one Future: each completes it or starts the next
   * from its own completion. Each returning a Future composed over the next attempt's chained one
   * completion per attempt, run back all at once from the last: at some thousands of conflicts
   * answered later that overflowed the stack, and on an event loop no caller was answered (review
   * J).
   */
  private Future<FoldOutcomes<I, R>> later(K key, List<I> inputs, int first) {
    Promise<FoldOutcomes<I, R>> done = Promise.promise();
    later(key, inputs, first, done);
    return done.future();
  }

  private void later(K key, List<I> inputs, int first, Promise<FoldOutcomes<I, R>> done) {
    int[] at = {first};
    Future<FoldOutcomes<I, R>> round;
    try {
      round = untilPending(key, inputs, at);
    } catch (Throwable e) {
      done.fail(e); // from a completion, a throw answers no one
      return;
    }
    round.onComplete(r -> {
      if (r.succeeded() && r.result() == null) {
        later(key, inputs, at[0] + 1, done);
      } else {
        done.handle(r);
      }
    });
  }

  /** The extract for {@link Ferry#perKey}: the caller's result, or INPUT_REJECTED with its reason. */
  public R extract(I input, FoldOutcomes<I, R> outcomes) {
    return outcomes.of(input).resultOrThrow();
  }

  /** A per-key ferry whose batch call is this FoldWrite. */
  public Ferry<I, R> ferry(Vertx vertx, PerKeyConfig config, Function<? super I, ? extends K> key) {
    return Ferry.perKey(vertx, config, key, this, this::extract);
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  /** One read, fold and write; null when the write lost a race and another attempt is due. */
  private Future<FoldOutcomes<I, R>> attempt(K key, List<I> inputs, int attempt) {
    return store.read(key).compose(current -> {
      if (current.version() == Long.MAX_VALUE) {
        // No write can make this row version + 1: sent, the next version wrapped to a negative
        // number (reported as written), or the database refused it as out of range, which a store
        // may report as an unknown outcome. Failed as a failed read instead, nothing sent (review D).
        return Future.failedFuture(new IllegalStateException("the stored entity is at version " + Long.MAX_VALUE
            + ", the largest a version can be, so no write can advance it; nothing was written"));
      }
      Fold fold = fold(current, inputs);
      if (fold.accepted.isEmpty()) {
        return Future.succeededFuture(new FoldOutcomes<>(inputs, fold.outcomes, current.version(), attempt));
      }
      // A failed write Future means the outcome is unknown (VersionedStore#write): it is reported as
      // such, never retried, and never confused with a failure where nothing was written (ADR 0126).
      // A write that throws refused before sending anything: unless an input made a state the
      // store cannot hold (found and rejected by refold), its exception, escaping this compose,
      // fails the batch as it is.
      Future<Boolean> write;
      try {
        write = store.write(key, fold.state, current.version(), fold.accepted);
      } catch (RuntimeException refused) {
        Fold again = refold(current, inputs, fold, refused);
        if (again.accepted.isEmpty()) {
          return Future.succeededFuture(new FoldOutcomes<>(inputs, again.outcomes, current.version(), attempt));
        }
        fold = again;
        write = store.write(key, fold.state, current.version(), fold.accepted);
      }
      if (write == null) {
        // No Future says nothing about what the store sent: unknown, like a failed one (the report
        // may be too cautious, never too hopeful).
        write = Future.failedFuture(new NullPointerException("the store's write returned null instead of a Future"));
      }
      Fold done = fold;
      return write.compose(written -> {
        if (written == null) {
          // Neither written nor a conflict: the outcome is unknown, and folding the batch again
          // over a write that did happen (a store answering with mapEmpty(), say) would apply
          // every input twice. The batch fails, as for a failed write (ADR 0120).
          return Future.failedFuture(new WriteOutcomeUnknownException(key, attempt, new IllegalStateException(
              "the store's write answered null, neither true (written) nor false (version conflict)")));
        }
        if (written) {
          return Future.succeededFuture(
              new FoldOutcomes<>(inputs, done.outcomes, current.version() + 1, attempt));
        }
        if (attempt >= maxAttempts) {
          return Future.failedFuture(new WriteConflictException(key, attempt));
        }
        return Future.succeededFuture(); // another attempt (attempts)
      }, failed -> Future.failedFuture(failed instanceof WriteRefusedException
          ? failed // the store knows nothing was written (ADR 0145)
          : new WriteOutcomeUnknownException(key, attempt, failed)));
    });
  }

  private final class Fold {
    S state;
    final List<I> accepted = new ArrayList<>();
    final List<FoldOutcome<R>> outcomes = new ArrayList<>();
    /** In a refold only: per accepted input, its index in the batch and the state after it. */
    List<Integer> acceptedAt;
    List<S> after;
  }

  private Fold fold(Versioned<S> current, List<I> inputs) {
    return fold(current, inputs, null);
  }

  /**
   * The write refused {@code fold} before sending anything. When the store says it cannot hold the
   * folded state, finds the input that led to a state it cannot hold, rejects it alone and folds
   * again, until the store holds the final state (ADR 0143); otherwise the write's refusal stands
   * (rethrown: the key or an event, nothing any one input's rejection would mend). The input is
   * found by bisection over the states after each accepted input (the first refused, when a refused
   * state stays refused as inputs follow, as a NUL copied into it does): a few questions per input
   * rejected, each of which may encode the whole state, rather than one per input of the batch.
   * Each input rejected this way costs one more fold of the batch (apply again for every input).
   */
  private Fold refold(Versioned<S> current, List<I> inputs, Fold fold, RuntimeException refused) {
    String why = stateRefusal(fold.state);
    if (why == null) {
      throw refused;
    }
    if (stateRefusal(startingState(current)) != null) {
      // The state the batch starts from is refused already (an initial state the store cannot
      // hold, a store refusing every state): no input is to blame, and rejecting them one by one
      // would tell every caller it was theirs. The batch fails as before (found by review).
      throw refused;
    }
    String[] stateRefused = new String[inputs.size()];
    Fold again = fold(current, inputs, stateRefused); // apply is pure: its final state is fold's
    while (why != null && !again.accepted.isEmpty()) {
      int lo = 0;
      int hi = again.after.size() - 1; // the last state is refused (why)
      String firstWhy = why;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        String at = stateRefusal(again.after.get(mid));
        if (at != null) {
          hi = mid;
          firstWhy = at;
        } else {
          lo = mid + 1;
        }
      }
      stateRefused[again.acceptedAt.get(lo)] = firstWhy;
      again = fold(current, inputs, stateRefused);
      why = again.accepted.isEmpty() ? null : stateRefusal(again.state);
    }
    return again;
  }

  /** The state a batch is folded over: the entity's, or the initial one for an entity not written yet. */
  private S startingState(Versioned<S> current) {
    S state = current.exists() ? current.state() : initial.get();
    if (state == null) {
      // No state is null (FoldDecision.accept refuses one): handed to apply, it failed every input,
      // each rejected with INPUT_REJECTED, a final answer blaming it for a configuration mistake
      // (review Q). Thrown inside the read's compose, it fails the batch, nothing written.
      throw new IllegalStateException(current.exists()
          ? "the store read the entity at version " + current.version() + " with a null state; nothing was written"
          : "the initial state supplier returned null; nothing was written");
    }
    return state;
  }

  /**
   * Folds {@code inputs} over the current state. {@code stateRefused} (a refold's, else null): per
   * input, why the store cannot hold the state it led to; such an input is rejected with it.
   */
  private Fold fold(Versioned<S> current, List<I> inputs, String[] stateRefused) {
    Fold fold = new Fold();
    fold.state = startingState(current);
    if (stateRefused != null) {
      fold.acceptedAt = new ArrayList<>();
      fold.after = new ArrayList<>();
    }
    for (int i = 0; i < inputs.size(); i++) {
      I input = inputs.get(i);
      FoldDecision<S, R> d = decide(fold.state, input);
      String refused = d instanceof FoldDecision.Accepted ? refusal(input) : null;
      if (refused == null && stateRefused != null && stateRefused[i] != null) {
        refused = stateRefused[i];
      }
      if (refused != null) {
        // Accepted by apply, but the store cannot record it (or hold the state it leads to):
        // refused here it fails only itself, as a rejection; found at the write it would fail
        // every input of the batch (ADRs 0139, 0143).
        fold.outcomes.add(new FoldOutcome.Rejected<>(refused));
      } else if (d instanceof FoldDecision.Accepted<S, R> a) {
        fold.state = a.state();
        fold.accepted.add(input);
        fold.outcomes.add(new FoldOutcome.Applied<>(a.result()));
        if (stateRefused != null) {
          fold.acceptedAt.add(i);
          fold.after.add(a.state());
        }
      } else {
        fold.outcomes.add(new FoldOutcome.Rejected<>(((FoldDecision.Rejected<S, R>) d).reason()));
      }
    }
    return fold;
  }

  // A throwing apply is a bug in handling that one input: it is refused like a rejection, so one
  // poisonous input cannot block its key's every later batch. Anything it throws: an Error, or a
  // checked exception thrown sneakily (Lombok, Kotlin), must not fail the other inputs' batch either,
  // except an error that tells of the JVM, not of the input.
  private FoldDecision<S, R> decide(S state, I input) {
    try {
      FoldDecision<S, R> d = apply.apply(state, input);
      return d != null ? d : FoldDecision.reject("apply returned null");
    } catch (Throwable e) {
      if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
        // Out of memory (or the JVM broken) says nothing about this input: rejecting it would give
        // its caller INPUT_REJECTED, a final answer for what a retry may do, and write the others
        // from a heap that just failed. The batch fails instead (FAILED, worth retrying). A stack
        // overflow stays a rejection: a deeply nested input causes it, and would fail every batch.
        throw (VirtualMachineError) e;
      }
      return FoldDecision.reject("apply failed: " + LogText.describe(e));
    }
  }

  // Asking the store is guarded as apply is: what its check throws refuses that input alone.
  private String refusal(I input) {
    try {
      return store.refusal(input);
    } catch (Throwable e) {
      if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
        throw (VirtualMachineError) e;
      }
      return "the store cannot record it: " + LogText.describe(e);
    }
  }

  private String stateRefusal(S state) {
    try {
      String why = store.stateRefusal(state);
      return why == null ? null : "the store cannot hold the state it leads to: " + why;
    } catch (Throwable e) {
      if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
        throw (VirtualMachineError) e;
      }
      return "the store cannot hold the state it leads to: " + LogText.describe(e);
    }
  }

  /** Builds a {@link FoldWrite}. */
  public static final class Builder<K, S, I, R> {
    private final VersionedStore<? super K, S, ? super I> store;
    private final BiFunction<? super S, ? super I, ? extends FoldDecision<S, R>> apply;
    private Supplier<? extends S> initial;
    private int maxAttempts = 5;

    private Builder(VersionedStore<? super K, S, ? super I> store,
        BiFunction<? super S, ? super I, ? extends FoldDecision<S, R>> apply) {
      this.store = Objects.requireNonNull(store, "store");
      this.apply = Objects.requireNonNull(apply, "apply");
    }

    /**
     * The state of an entity that does not exist yet (required, and never null: a batch folded over
     * a null state fails); called each time a batch is folded over such an entity: once per read,
     * more after a write that refused a state (ADR 0143).
     */
    public Builder<K, S, I, R> initial(Supplier<? extends S> initial) {
      this.initial = Objects.requireNonNull(initial, "initial");
      return this;
    }

    /** Read/write rounds per batch before it fails on conflicts; at least 1 (default 5). */
    public Builder<K, S, I, R> maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** Validates every setting at once; {@link InvalidConfigException} names each violation. */
    public FoldWrite<K, S, I, R> build() {
      List<String> violations = new ArrayList<>();
      if (initial == null) {
        violations.add("initial = null: an initial state supplier is required");
      }
      if (maxAttempts < 1) {
        violations.add("maxAttempts = " + maxAttempts + ": must be >= 1");
      }
      if (!violations.isEmpty()) {
        throw new InvalidConfigException("FoldWrite", violations);
      }
      return new FoldWrite<>(this);
    }
  }
}
