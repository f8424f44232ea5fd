package dev.ferry;

/**
 * One input's outcome in a {@link FoldWrite} batch that was written (or needed no write).
 *
 * @param <R> the caller's result type
 */
public sealed interface FoldOutcome<R> {

  /** Applied and durably written. */
  record Applied<R>(R result) implements FoldOutcome<R> {}

  /** Rejected by the apply function; it left no trace in the store. */
  record Rejected<R>(String reason) implements FoldOutcome<R> {}

  /** The result, or a {@link FerryError#INPUT_REJECTED} {@link FerryException} for a rejection. */
  default R resultOrThrow() {
    if (this instanceof Applied<R> applied) {
      return applied.result();
    }
    throw FerryException.inputRejected(((Rejected<R>) this).reason());
  }
}
