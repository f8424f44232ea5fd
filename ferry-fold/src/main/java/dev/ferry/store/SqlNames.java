package dev.ferry.store;

import java.util.regex.Pattern;

/** Table names are spliced into SQL text (they cannot be parameters), so only plain names pass. */
final class SqlNames {
  private static final Pattern PLAIN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  private SqlNames() {}

  static String check(String what, String name) {
    if (name == null || !PLAIN.matcher(name).matches()) {
      throw new IllegalArgumentException(what + " must be a plain SQL name ([A-Za-z_][A-Za-z0-9_]*), got " + name);
    }
    return name;
  }
}
