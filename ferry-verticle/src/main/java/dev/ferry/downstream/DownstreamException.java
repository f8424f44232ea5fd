package dev.ferry.downstream;

/**
 * The downstream answered, but not usably: a non-2xx status, or not one well-formed outcome per
 * input. The message describes what was wrong and never quotes the answer (it may carry payloads).
 */
public final class DownstreamException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public DownstreamException(String message) {
    super(message, null, false, false);
  }

  public DownstreamException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
