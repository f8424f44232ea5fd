package dev.ferry;

import java.util.Objects;

/**
 * What a {@link FoldWrite} apply function decides for one input: accept it (a new state and the
 * caller's result) or reject it (a reason; the state stays as it was).
 *
 * @param <S> the state type
 * @param <R> the caller's result type
 */
public sealed interface FoldDecision<S, R> {

  /** The input is applied: {@code state} is the new state, {@code result} goes to its caller. */
  record Accepted<S, R>(S state, R result) implements FoldDecision<S, R> {
    public Accepted {
      Objects.requireNonNull(state, "state");
    }
  }

  /** The input is refused: only its caller fails, with {@link FerryError#INPUT_REJECTED}. */
  record Rejected<S, R>(String reason) implements FoldDecision<S, R> {
    public Rejected {
      Objects.requireNonNull(reason, "reason");
    }
  }

  static <S, R> FoldDecision<S, R> accept(S state, R result) {
    return new Accepted<>(state, result);
  }

  static <S, R> FoldDecision<S, R> reject(String reason) {
    return new Rejected<>(reason);
  }
}
