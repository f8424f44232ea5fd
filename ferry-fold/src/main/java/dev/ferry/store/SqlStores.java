package dev.ferry.store;

import dev.ferry.Versioned;
import dev.ferry.internal.LogText;
import io.vertx.core.Future;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.jackson.JacksonCodec;
import java.io.IOException;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link PgStore} and {@link JdbcStore} share apart from their SQL dialect: the order in which
 * the tables are created and how a selected row becomes a state or an event. Each store keeps its
 * own SQL text; the columns these read are the same in both (state and events as JSON text).
 * Stateless; the futures complete wherever the client completes them.
 */
final class SqlStores {
  private SqlStores() {}

  /**
   * Refuses a null key before anything is sent. Sent, the database refused it (H2) and the failed
   * write read as "may have been written"; read, it was an absent entity.
   */
  static void requireKey(String key) {
    if (key == null) {
      throw nullKey();
    }
  }

  static NullPointerException nullKey() {
    return new NullPointerException("key must not be null: a store's entity has a key");
  }

  /**
   * Why {@code value} (an event or a state, {@code what}) cannot be stored as JSON text: it cannot
   * be encoded, it holds a number the store would alter or refuse ({@link #unstorableNumber}), or
   * {@code illFormed} says why its text cannot travel; null when it can.
   *
   * @param jsonbNumbers the store keeps JSON as PostgreSQL {@code jsonb}, whose numbers have a range
   */
  static String unencodable(Object value, String what, boolean jsonbNumbers,
      java.util.function.Function<String, String> illFormed) {
    String text;
    try {
      text = io.vertx.core.json.Json.encode(value);
    } catch (RuntimeException e) {
      return "the " + what + " cannot be encoded as JSON: " + LogText.message(e);
    }
    // Walked only once it encoded: the encoder bounds the nesting, so the walk's depth is bounded.
    String number = unstorableNumber(value, jsonbNumbers);
    if (number != null) {
      return "the " + what + " holds " + number + ", so nothing was sent";
    }
    return illFormed.apply(text);
  }

  /** Throws, nothing sent, where {@code value} holds a number {@link #unstorableNumber} describes. */
  static void requireStorableNumbers(String what, Object value, boolean jsonbNumbers) {
    String bad = unstorableNumber(value, jsonbNumbers);
    if (bad != null) {
      throw new IllegalArgumentException("the " + what + " holds " + bad + ", so nothing was sent");
    }
  }

  /** jsonb keeps a number as {@code numeric}: at most this many digits before the decimal point... */
  static final int JSONB_INTEGER_DIGITS = 131_072;
  /** ... and this many after it. */
  static final int JSONB_FRACTION_DIGITS = 16_383;

  /**
   * The first number in {@code value} (a JSON object or array, a map or list, or a number) that
   * would not come back as written, described; null when none. A double or float that is NaN or
   * infinite has no JSON form: the encoder writes it as a string ("NaN"), and the state read back
   * holds a string where the fold put a number, failing every later batch of its key (a hostile
   * review). With {@code jsonbNumbers}, also a number beyond what PostgreSQL's numeric holds: the
   * server refuses the whole write, every input of the batch with it, where only the input that
   * brought the number should fail. Other objects (a POJO a databind codec encodes) are not
   * looked into. A number with a fraction or an exponent comes back as a double, so one beyond a
   * double's range is refused too.
   */
  static String unstorableNumber(Object value, boolean jsonbNumbers) {
    if (value instanceof io.vertx.core.json.JsonObject o) {
      return unstorableIn(o.getMap().values(), jsonbNumbers);
    }
    if (value instanceof io.vertx.core.json.JsonArray a) {
      return unstorableIn(a.getList(), jsonbNumbers);
    }
    if (value instanceof java.util.Map<?, ?> m) {
      return unstorableIn(m.values(), jsonbNumbers);
    }
    if (value instanceof java.util.Collection<?> c) {
      return unstorableIn(c, jsonbNumbers);
    }
    if (value instanceof Double d && !Double.isFinite(d) || value instanceof Float f && !Float.isFinite(f)) {
      return "the number " + value + ", which JSON cannot hold (it would be stored as the string \"" + value + "\")";
    }
    if (value instanceof java.math.BigDecimal d) {
      // Read back, a number with a fraction or an exponent is a double: one beyond a double's
      // range comes back infinite (and then refused: the key could never be written again), one
      // below it as 0 (a review).
      double back = d.doubleValue();
      if (d.signum() != 0 && (Double.isInfinite(back) || back == 0)) {
        return "a number beyond a double's range (" + (back == 0 ? "smaller than " + Double.MIN_VALUE
            : "larger than " + Double.MAX_VALUE) + " in size), which it would be read back as: " + back;
      }
      if (!jsonbNumbers) {
        return null;
      }
      long integerDigits = (long) d.precision() - d.scale();
      if (integerDigits > JSONB_INTEGER_DIGITS || d.scale() > JSONB_FRACTION_DIGITS) {
        return "a number of " + Math.max(0, integerDigits) + " digits before the decimal point and "
            + Math.max(0, d.scale()) + " after, beyond the " + JSONB_INTEGER_DIGITS + " and " + JSONB_FRACTION_DIGITS
            + " PostgreSQL's jsonb holds";
      }
    }
    if (jsonbNumbers && value instanceof java.math.BigInteger i && i.bitLength() > 435_000) {
      // 131,072 digits are about 435,411 bits: counted exactly only near the bound.
      int digits = i.abs().toString().length();
      if (digits > JSONB_INTEGER_DIGITS) {
        return "an integer of " + digits + " digits, over the " + JSONB_INTEGER_DIGITS + " PostgreSQL's jsonb holds";
      }
    }
    return null;
  }

  private static String unstorableIn(java.util.Collection<?> values, boolean jsonbNumbers) {
    for (Object v : values) {
      String bad = unstorableNumber(v, jsonbNumbers);
      if (bad != null) {
        return bad;
      }
    }
    return null;
  }

  /** Creates the entity table, then the events table when there is one ({@code eventsDdl} null: none). */
  static Future<Void> createTables(SqlClient client, String tableDdl, String eventsDdl) {
    Future<?> done = client.query(tableDdl).execute();
    if (eventsDdl != null) {
      done = done.compose(v -> client.query(eventsDdl).execute());
    }
    return done.mapEmpty();
  }

  // Jackson's default read limits (a string of 20,000,000 characters, a name of 50,000, a number of
  // 1,000 digits) have no counterpart on the write side: a state or event over one was written,
  // acknowledged, and then could never be read again, failing every later batch of its key. What a
  // store wrote it must read back, so its own rows are decoded without those limits. Nesting depth
  // keeps its default: writing is held to the same depth.
  private static final JsonFactory OWN_ROWS = JsonFactory.builder()
      .streamReadConstraints(StreamReadConstraints.builder()
          .maxStringLength(Integer.MAX_VALUE).maxNameLength(Integer.MAX_VALUE).maxNumberLength(Integer.MAX_VALUE)
          .build())
      .build();

  /** The rows of {@code SELECT version, state}: the entity, or absent when no row. */
  static Versioned<JsonObject> versioned(RowSet<Row> rows) {
    if (rows.size() == 0) {
      return Versioned.absent();
    }
    Row row = rows.iterator().next();
    long version = row.getLong(0);
    if (version < 1) {
      // Written outside the store: version 0 is "no entity" to a conditional write, so it would
      // insert against the row, lose every time and call it a conflict, ignoring the stored state.
      throw new IllegalStateException("the stored row is at version " + version
          + " (written outside the store), which a conditional write cannot tell from no row: give it a version of 1 or more");
    }
    Object state = decode(row.getString(1));
    if (!(state instanceof JsonObject object)) {
      throw new DecodeException("a stored state is not a JSON object");
    }
    return new Versioned<>(object, version);
  }

  /** The rows of {@code SELECT event}, in their order, each decoded from its JSON text. */
  static List<Object> events(RowSet<Row> rows) {
    List<Object> out = new ArrayList<>(rows.size());
    rows.forEach(r -> out.add(decode(r.getString(0))));
    return out;
  }

  /** Like {@code Json.decodeValue}: objects and arrays come back as JsonObject and JsonArray. */
  private static Object decode(String text) {
    try {
      return JacksonCodec.fromParser(OWN_ROWS.createParser(text), Object.class);
    } catch (IOException e) {
      throw new DecodeException("Failed to decode: " + e.getMessage(), e);
    }
  }
}
