package dev.ferry;

/**
 * A {@link FoldWrite} batch lost the race for its entity on every attempt: other writers changed it
 * between each read and write. Nothing of the batch was written; callers see it as the cause of
 * {@link FerryError#FAILED}, which is worth retrying.
 */
public final class WriteConflictException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Object key;
  private final int attempts;

  public WriteConflictException(Object key, int attempts) {
    // A key whose toString throws must not replace the conflict with its own throw.
    super("version conflict on key " + WriteOutcomeUnknownException.text(key) + " in each of " + attempts
        + " attempts; nothing written");
    this.key = key;
    this.attempts = attempts;
  }

  public Object key() {
    return key;
  }

  public int attempts() {
    return attempts;
  }
}
