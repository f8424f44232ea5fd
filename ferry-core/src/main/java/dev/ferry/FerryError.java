package dev.ferry;

/**
 * The closed set of ways an input can fail. Each kind maps to one event-bus failure code, so a
 * caller on the far side of {@code ferry.submit} sees the same kinds a Java caller does.
 */
public enum FerryError {
  /** The waiting room is full ({@code maxQueueing} or {@code maxQueuedWeight}); answered at once. */
  REJECTED(429),
  /** The batch call failed, timed out or answered malformed. The cause is attached; worth retrying. */
  FAILED(502),
  /** The ferry is closing or closed (or, clustered, the key's owner could not be reached). */
  CLOSED(503),
  /** The caller's deadline passed before its input left in a batch; it was never sent. */
  TIMEOUT(504),
  /** The input itself is malformed (no key, bad weight, bad header); nothing else was disturbed. */
  BAD_INPUT(400),
  /** The downstream rejected this one input; the rest of its batch is unaffected. */
  INPUT_REJECTED(422);

  private final int code;

  FerryError(int code) {
    this.code = code;
  }

  /** The failure code used on the event bus (and HTTP status-like: 4xx the input, 5xx the path). */
  public int code() {
    return code;
  }

  /** The kind for an event-bus failure code, or {@code null} when the code is not one of ours. */
  public static FerryError ofCode(int code) {
    for (FerryError kind : values()) {
      if (kind.code == code) {
        return kind;
      }
    }
    return null;
  }
}
