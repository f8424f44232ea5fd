package dev.ferry;

/**
 * A store's conditional write was answered with a refusal: the database returned an error for it
 * (a constraint, a trigger, a serialization failure), so nothing of the batch was written. A store
 * fails its write's Future with this exception only when it knows that (PgStore does for an error
 * PostgreSQL returned); any other failed write is reported as {@link WriteOutcomeUnknownException}.
 * Callers see it as the cause of {@link FerryError#FAILED}: like {@link WriteConflictException}, safe
 * to retry, though a retry of the same inputs may well be refused again. See {@code
 * docs/adr/0145-a-write-the-database-refused-is-not-an-unknown-outcome.md}.
 */
public final class WriteRefusedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Object key;

  public WriteRefusedException(Object key, Throwable cause) {
    super("the write of key " + text(key) + " was refused, nothing written: " + text(cause), cause);
    this.key = key;
  }

  // As in WriteOutcomeUnknownException: a toString that throws must not replace this exception.
  private static String text(Object o) {
    try {
      return String.valueOf(o);
    } catch (Exception broken) {
      return o.getClass().getName();
    }
  }

  public Object key() {
    return key;
  }
}
