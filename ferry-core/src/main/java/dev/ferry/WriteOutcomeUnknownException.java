package dev.ferry;

import dev.ferry.internal.LogText;

/**
 * A {@link FoldWrite} batch's conditional write failed without an answer, so the store may or may
 * not have applied it: a connection that broke while the write was committing, a pool closed under
 * it. FoldWrite does not retry it (a retry could apply the batch twice). Callers see it as the
 * cause of {@link FerryError#FAILED}; unlike {@link WriteConflictException} or a failed read, where
 * nothing was written, it is safe to retry only when the apply function can recognise a repeat (an
 * id carried in the input). See {@code docs/adr/0126-a-write-without-an-answer-is-reported-as-unknown.md}.
 */
public final class WriteOutcomeUnknownException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Object key;
  private final int attempt;

  public WriteOutcomeUnknownException(Object key, int attempt, Throwable cause) {
    super("the write of key " + text(key) + " (attempt " + attempt + ") failed without an answer; it may or may not"
        + " have been applied: " + text(cause), cause);
    this.key = key;
    this.attempt = attempt;
  }

  // Made where a store failed: a key's or a cause's toString that throws must not replace this
  // exception with its own, whose caller (StoreService: "batch not written") would take it for safe
  // to retry. WriteRefusedException uses it too.
  static String text(Object o) {
    return LogText.describe(o);
  }

  public Object key() {
    return key;
  }

  /** The read/write round whose write failed (1 unless conflicts came before it). */
  public int attempt() {
    return attempt;
  }
}
