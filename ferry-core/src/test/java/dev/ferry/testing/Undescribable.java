package dev.ferry.testing;

/**
 * An exception that cannot describe itself: its {@code toString} and {@code getMessage} both throw,
 * as a user's broken exception may. Text built from it while answering callers must not throw in
 * turn.
 */
public final class Undescribable extends RuntimeException {
  @Override
  public String getMessage() {
    throw new UnsupportedOperationException("no message");
  }

  @Override
  public String toString() {
    throw new UnsupportedOperationException("no text");
  }
}
