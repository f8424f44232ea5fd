package dev.ferry;

import java.util.List;

/**
 * A configuration that cannot be built. The message names every violated field, with its value
 * and the rule it broke, so one attempt shows everything to fix.
 */
public final class InvalidConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final List<String> violations;

  public InvalidConfigException(String what, List<String> violations) {
    super("invalid " + what + ": " + String.join("; ", violations));
    this.violations = List.copyOf(violations);
  }

  /** One line per violated field: {@code field = value: rule}. */
  public List<String> violations() {
    return violations;
  }
}
