package dev.ferry.store;

import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Table names are spliced into SQL text (they cannot be parameters), so only plain names pass: no
 * quoting, no schema, and no reserved word of the store's dialect. A reserved word is a plain name
 * the parser refuses as a table name ({@code order}, {@code user}), so it would only fail later, at
 * every statement; refused here, the mistake shows when the store is made. So is, on PostgreSQL, a
 * name starting with {@code pg_}: every system catalog has one, and {@code pg_catalog} is searched
 * before any other schema, so {@code pg_class} named the catalog, not the store's table.
 */
final class SqlNames {
  private static final Pattern PLAIN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  /** PostgreSQL's words that cannot name a table: {@code pg_get_keywords()} categories R and T. */
  static final Set<String> POSTGRESQL_RESERVED = Set.of(
      "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "authorization",
      "binary", "both", "case", "cast", "check", "collate", "collation", "column", "concurrently",
      "constraint", "create", "cross", "current_catalog", "current_date", "current_role",
      "current_schema", "current_time", "current_timestamp", "current_user", "default", "deferrable",
      "desc", "distinct", "do", "else", "end", "except", "false", "fetch", "for", "foreign", "freeze",
      "from", "full", "grant", "group", "having", "ilike", "in", "initially", "inner", "intersect",
      "into", "is", "isnull", "join", "lateral", "leading", "left", "like", "limit", "localtime",
      "localtimestamp", "natural", "not", "notnull", "null", "offset", "on", "only", "or", "order",
      "outer", "overlaps", "placing", "primary", "references", "returning", "right", "select",
      "session_user", "similar", "some", "symmetric", "table", "tablesample", "then", "to",
      "trailing", "true", "union", "unique", "user", "using", "variadic", "verbose", "when", "where",
      "window", "with");

  /** H2's (2.3) words that cannot name a table in its default mode. */
  static final Set<String> H2_RESERVED = Set.of(
      "_rowid_", "all", "and", "any", "array", "as", "asymmetric", "authorization", "between", "case",
      "cast", "check", "constraint", "cross", "current_catalog", "current_date", "current_path",
      "current_role", "current_schema", "current_time", "current_timestamp", "current_user", "day",
      "default", "distinct", "else", "end", "except", "exists", "false", "fetch", "for", "foreign",
      "from", "full", "group", "having", "hour", "if", "in", "inner", "intersect", "interval", "is",
      "join", "key", "left", "like", "limit", "localtime", "localtimestamp", "minus", "minute",
      "month", "natural", "not", "null", "offset", "on", "or", "order", "primary", "qualify", "right",
      "row", "rownum", "second", "select", "session_user", "set", "some", "symmetric", "system_user",
      "table", "to", "true", "uescape", "union", "unique", "unknown", "user", "using", "value",
      "values", "when", "where", "window", "with", "year");

  private SqlNames() {}

  static String check(String what, String name, Set<String> reserved) {
    if (name == null || !PLAIN.matcher(name).matches()) {
      // The length said too: a longer name matches the pattern the message gives, and read as a
      // refusal of its characters it sent the user looking for the wrong mistake (review Q).
      throw new IllegalArgumentException(what + " must be a plain SQL name ([A-Za-z_][A-Za-z0-9_]*)"
          + " of at most 63 characters (PostgreSQL's limit), got " + (name == null ? null
          : name.length() > 63 ? name.length() + " characters: " + name : name));
    }
    String folded = name.toLowerCase(Locale.ROOT);
    if (reserved.contains(folded)) {
      throw new IllegalArgumentException(what + " must not be a reserved SQL word, got " + name);
    }
    if (reserved == POSTGRESQL_RESERVED && folded.startsWith("pg_")) {
      throw new IllegalArgumentException(what + " must not start with pg_, PostgreSQL's prefix for its"
          + " system catalogs (searched before any other schema), got " + name);
    }
    return name;
  }

  /** The events table must be another table: unquoted names are the same table in any case. */
  static String checkEvents(String table, String events, Set<String> reserved) {
    check("events table", events, reserved);
    if (events.equalsIgnoreCase(table)) {
      throw new IllegalArgumentException("events table must differ from the table, got " + events + " for both");
    }
    return events;
  }
}
