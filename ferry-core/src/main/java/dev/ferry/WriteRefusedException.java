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
    // A key's or a cause's toString that throws must not replace this exception with its own.
    super("the write of key " + WriteOutcomeUnknownException.text(key) + " was refused, nothing written: "
        + WriteOutcomeUnknownException.text(cause), cause);
    this.key = key;
  }

  public Object key() {
    return key;
  }
}
