package dev.ferry.internal;

/**
 * Text from outside (keys, payloads, a downstream's failure message, a header) made safe for one
 * log line: every character that could end the line or forge another record is escaped, so a log
 * reader always sees exactly the records Ferry wrote. Stateless; any thread.
 *
 * <p>Escaped: C0 controls (line breaks, tabs, ESC of terminal colour codes), DEL, C1 controls, the
 * Unicode line and paragraph separators, and backslash and double quote (keys are logged between
 * quotes, so a quote could fake the end of one). Everything else passes unchanged. Text from a
 * value's own {@code toString} or {@code getMessage} is taken through {@link #describe} and {@link
 * #message}, which never throw.
 */
public final class LogText {
  private LogText() {}

  /** {@code value}'s {@code String.valueOf}, escaped; {@code null} stays {@code "null"}. */
  public static String escape(Object value) {
    String s = describe(value);
    int i = 0;
    while (i < s.length() && !special(s.charAt(i))) {
      i++;
    }
    if (i == s.length()) {
      return s; // the common case: nothing to escape, no copy
    }
    StringBuilder out = new StringBuilder(s.length() + 16).append(s, 0, i);
    for (; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!special(c)) {
        out.append(c);
        continue;
      }
      switch (c) {
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\\' -> out.append("\\\\");
        case '"' -> out.append("\\\"");
        default -> out.append(String.format("\\u%04x", (int) c));
      }
    }
    return out.toString();
  }

  /**
   * {@code String.valueOf(value)}, or its class's name where its {@code toString} throws: text made
   * while answering callers or reporting a failure must not throw in turn, or the step making it
   * ends with its callers unanswered (a hostile review's exception whose toString threw).
   */
  public static String describe(Object value) {
    try {
      return String.valueOf(value);
    } catch (Throwable broken) {
      return value.getClass().getName();
    }
  }

  /** {@code failure.getMessage()}, or its class's name where that throws (see {@link #describe}). */
  public static String message(Throwable failure) {
    try {
      return failure.getMessage();
    } catch (Throwable broken) {
      return failure.getClass().getName();
    }
  }

  private static boolean special(char c) {
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029' || c == '\\' || c == '"';
  }
}
