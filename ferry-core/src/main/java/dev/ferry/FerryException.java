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
    super(message, cause, false, cause != null);
    this.kind = Objects.requireNonNull(kind, "kind");
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
