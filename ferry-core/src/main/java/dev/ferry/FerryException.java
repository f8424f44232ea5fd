package dev.ferry;

import java.util.Objects;

/**
 * The one exception type through which failures reach callers. {@link #kind()} says what
 * happened; for {@link FerryError#FAILED} the downstream's failure is the {@linkplain #getCause()
 * cause}.
 */
public final class FerryException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final FerryError kind;

  public FerryException(FerryError kind, String message) {
    this(kind, message, null);
  }

  public FerryException(FerryError kind, String message, Throwable cause) {
    // Failures are routine under load (rejections, timeouts): skip the stack trace unless a cause
    // needs one to be understood.
    super(message, cause, false, cause != null && !unknownOutcome(cause));
    this.kind = Objects.requireNonNull(kind, "kind");
  }

  /**
   * The engine's own causes for a call that gave no answer (a timeout, a call given up): they say
   * all there is to say, and a stack trace per caller would be filled on the event loop, for every
   * input of a timed-out batch, just when the downstream is overloaded (ADR 0141).
   */
  private static boolean unknownOutcome(Throwable cause) {
    return cause instanceof java.util.concurrent.TimeoutException
        || cause instanceof java.util.concurrent.CancellationException;
  }

  public FerryError kind() {
    return kind;
  }

  /** The event-bus failure code for this kind (see {@link FerryError#code()}). */
  public int code() {
    return kind.code();
  }

  /** A rejection of one input by the downstream, with its reason: fails only that caller. */
  public static FerryException inputRejected(String reason) {
    return new FerryException(FerryError.INPUT_REJECTED, reason);
  }

  @Override
  public String toString() {
    return "FerryException[" + kind + "]: " + getMessage();
  }
}
