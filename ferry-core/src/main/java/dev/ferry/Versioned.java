package dev.ferry;

/**
 * An entity's state as read, with the version a conditional write must match. Version 0 means the
 * entity does not exist yet; its state is then {@code null} and the reader starts from its own
 * initial state.
 *
 * @param <S> the state type
 */
public record Versioned<S>(S state, long version) {
  public Versioned {
    if (version < 0) {
      throw new IllegalArgumentException("version must be >= 0, got " + version);
    }
  }

  /** The reading of an entity that has never been written. */
  public static <S> Versioned<S> absent() {
    return new Versioned<>(null, 0);
  }

  public boolean exists() {
    return version > 0;
  }
}
