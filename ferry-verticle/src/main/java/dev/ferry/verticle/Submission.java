package dev.ferry.verticle;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.downstream.JsonWalk;
import io.vertx.core.Completable;
import io.vertx.core.MultiMap;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Comparator;

/**
 * One input submitted over the event bus, checked on arrival. Everything here runs on the
 * verticle's event loop.
 *
 * <p>{@link #slot} is the input's position in the request its batch was sent with: set once when
 * that request is sealed (an input is sent at most once), it lets each caller find its own outcome
 * in O(1); it stays -1 for an input left out because its deadline passed first.
 *
 * <p>A Submission is also its caller's one answer ({@link #complete}): the ferry's outcome, or an
 * earlier 504 when its deadline passes after it left its lane but before its request was written
 * ({@link #expire}), or an earlier 400 when its body cannot be encoded as the request is written
 * ({@link #reject}); whichever comes first is delivered, the other dropped.
 */
public final class Submission implements Completable<Object> {
  public static final String KEY = FerryClient.KEY_HEADER;
  public static final String ID = FerryClient.ID_HEADER;
  public static final String TIMEOUT_MS = FerryClient.TIMEOUT_MS_HEADER;
  public static final String ORDER = FerryClient.ORDER_HEADER;
  public static final int MAX_KEY_LENGTH = FerryClient.MAX_KEY_LENGTH;
  public static final int MAX_ID_LENGTH = FerryClient.MAX_ID_LENGTH;
  /**
   * A request's sender and place in that sender's order, "sender#n" (ADR 0098): the one header
   * of the reserved {@link #RESERVED_PREFIX} a client may send (a routing client stamps it).
   */
  public static final String ORIGIN = "ferry-origin";
  /**
   * Header names that start with it are the nodes' own (hop count, nodes passed, hand-off class,
   * releases): honoured only on the node-internal address, refused from clients (ADR 0103).
   */
  public static final String RESERVED_PREFIX = "ferry-";

  public final String key;
  public final String id;
  public final Object body;
  /** The {@code order} header, or {@link Long#MAX_VALUE} without one (sorts after ordered inputs). */
  public final long order;
  /** Whether the request carried an {@code order} header ({@link #order} alone cannot say: it may be Long.MAX_VALUE). */
  public final boolean ordered;
  /** The caller's deadline in ms, or 0 for none. */
  public final long timeoutMs;
  /** The caller's deadline as a {@link System#nanoTime()} instant, or {@link Long#MAX_VALUE} for none. */
  public final long deadline;
  int slot = -1;
  private Completable<Object> answer;
  private boolean answered;
  private boolean expired;

  private Submission(String key, String id, Object body, boolean ordered, long order, long timeoutMs, long deadline) {
    this.key = key;
    this.id = id;
    this.body = body;
    this.ordered = ordered;
    this.order = order;
    this.timeoutMs = timeoutMs;
    this.deadline = deadline;
  }

  /**
   * Where the caller's one answer goes; set once, before the input is submitted, for an input
   * submitted once (the cluster layer, which may submit an input again after a hand-off, answers
   * through its own promise instead).
   */
  public Submission answerTo(Completable<Object> answer) {
    if (this.answer != null) {
      throw new IllegalStateException("a Submission has one answer");
    }
    this.answer = answer;
    return this;
  }

  /**
   * The sending order of {@code "order": "header"}: ascending {@code order} header, and inputs
   * without one after every input with one. Compared by the value alone, an input ordered
   * Long.MAX_VALUE (a value the header accepts) tied with those without it and, arriving later,
   * left after them. Ties are the engine's: arrival order.
   */
  public static final Comparator<Submission> HEADER_ORDER =
      (a, b) -> a.ordered != b.ordered ? (a.ordered ? -1 : 1) : Long.compare(a.order, b.order);

  /** Delivers the caller's answer, unless it was answered already. */
  @Override
  public void complete(Object outcome, Throwable failure) {
    if (!answered && answer != null) {
      answered = true;
      answer.complete(outcome, failure);
    }
  }

  /** Whether the deadline has passed at {@code now} ({@link System#nanoTime()}). */
  boolean expiredAt(long now) {
    return deadline != Long.MAX_VALUE && now - deadline >= 0;
  }

  /**
   * Answers 504 now: the deadline passed before the input's request was written. Returns true the
   * first time only, so that the caller counts each such input once.
   */
  boolean expire() {
    if (expired) {
      return false;
    }
    expired = true;
    fail(new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent"));
    return true;
  }

  /**
   * Whether it was left out of its batch because its caller's deadline passed before the request
   * was written ({@link #expire}): never sent, whatever that batch's call then did. The cluster
   * layer, which answers through the ferry's Future rather than through {@link #answerTo}, reads
   * it to answer 504 rather than the call's failure.
   */
  public boolean leftOutAtDeadline() {
    return expired;
  }

  /** Answers 400 now: the body turned out to be bad input when its request was written. */
  void reject(String why) {
    fail(new FerryException(FerryError.BAD_INPUT, why));
  }

  /** Thrown for bad input; the message says what is wrong (never quoting the body). */
  public static final class BadInput extends Exception {
    private static final long serialVersionUID = 1L;

    BadInput(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Checks one client's request (at the submit address or a node address): as {@link #parse}, and
   * a header of the nodes' own ({@link #RESERVED_PREFIX}, except {@link #ORIGIN}) is bad input. A
   * client that could set them would claim to be a node: skip the held bound as a hand-off, stretch
   * the hop limit, pose as a key's previous owner (ADR 0103). So is a header Ferry reads given
   * twice with different values (ADR 0186): which one counts would be a guess, and a caller whose
   * key or deadline was guessed wrong could not tell.
   */
  public static Submission parseFromClient(MultiMap headers, Object body) throws BadInput {
    HeaderWalk walk = new HeaderWalk(headers);
    headers.forEach(walk);
    if (walk.reserved != null) {
      throw new BadInput("the header \"" + shortened(walk.reserved)
          + "\" is reserved for traffic between ferry nodes: of the " + RESERVED_PREFIX + "* headers a client may send "
          + ORIGIN + " only");
    }
    if (walk.longOrigin >= 0) {
      // Clustered, the router keeps it with the input until it is answered: a caller could make a
      // node hold any amount with small bodies, as with the id before ADR 0189 (ADR 0191).
      throw new BadInput("the \"" + ORIGIN + "\" header is " + walk.longOrigin + " characters long: at most "
          + MAX_ID_LENGTH + " are accepted (a routing client's is under 64)");
    }
    if (walk.twice != null) {
      throw new BadInput("the \"" + walk.twice + "\" header is given more than once, with different values"
          + " (\"" + shortened(headers.get(walk.twice)) + "\" and \"" + shortened(walk.other) + "\"): give it once");
    }
    return parse(headers, body);
  }

  /** Text from a header for a 400: escaped and cut at 64 characters, so that no answer quotes a huge value. */
  private static String shortened(String text) {
    String escaped = dev.ferry.internal.LogText.escape(text);
    return escaped.length() > 64 ? escaped.substring(0, 64) + "..." : escaped;
  }

  /**
   * One walk over a client's headers with {@code forEach}, which Vert.x's header map runs over its
   * entries in place, where its iterator allocates an iterator and an entry per header: it finds
   * the first reserved header, and the first header Ferry reads ({@link #READ}) whose value
   * differs from the first one given ({@code get}). One small object per request.
   */
  private static final class HeaderWalk implements java.util.function.BiConsumer<String, String> {
    /** The headers Ferry reads one value of: each may be given once, or again with the same value. */
    private static final String[] READ = {KEY, ID, TIMEOUT_MS, ORDER, ORIGIN};
    private final MultiMap headers;
    String reserved;
    /** The length of the first {@link #ORIGIN} over the id's bound, or -1. */
    int longOrigin = -1;
    String twice;
    String other;

    HeaderWalk(MultiMap headers) {
      this.headers = headers;
    }

    @Override
    public void accept(String name, String value) {
      if (reserved == null && name.regionMatches(true, 0, RESERVED_PREFIX, 0, RESERVED_PREFIX.length())
          && !name.equalsIgnoreCase(ORIGIN)) {
        reserved = name;
      }
      if (longOrigin < 0 && value.length() > MAX_ID_LENGTH && name.equalsIgnoreCase(ORIGIN)) {
        longOrigin = value.length();
      }
      if (twice != null) {
        return;
      }
      for (String read : READ) {
        if (read.equalsIgnoreCase(name)) {
          // The map is case-insensitive: get() answers the first value under any spelling.
          if (!value.equals(headers.get(read))) {
            twice = read;
            other = value;
          }
          return;
        }
      }
    }
  }

  /**
   * Why {@code key} cannot cross a clustered event bus unchanged, or null: a surrogate that is not
   * half of a pair is not well-formed UTF-16, and on the wire (UTF-8) it becomes {@code "?"}, so
   * one key would get two lanes, in no shared order, and share the other key's batches (a hostile
   * review; ADR 0154). Refused where it enters, like an empty key.
   */
  public static String notWellFormed(String key) {
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return "holds a lone surrogate at index " + i + " (not well-formed UTF-16): it would reach other"
            + " nodes as another key";
      }
    }
    return null;
  }

  /**
   * Why a client refuses {@code key} before sending anything (BAD_INPUT), or null: missing, empty,
   * too long, or not well-formed. {@link FerryClient} and the routing client check it alike, so an
   * obviously bad key costs no round trip and never reaches a router.
   */
  public static String clientKeyRefusal(String key) {
    if (key == null || key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
      return "the key must be a non-empty string of at most " + MAX_KEY_LENGTH + " characters";
    }
    String illFormed = notWellFormed(key);
    return illFormed == null ? null : "the key " + illFormed;
  }

  /** The refusal of an {@code id} longer than {@link #MAX_ID_LENGTH}, for a client and a node alike. */
  public static String idTooLong(String id) {
    return "the \"id\" header is " + id.length() + " characters long: at most " + MAX_ID_LENGTH + " are accepted";
  }

  /** Checks one request's headers and body (a client's: {@link #parseFromClient}). */
  public static Submission parse(MultiMap headers, Object body) throws BadInput {
    String key = headers.get(KEY);
    if (key == null || key.isEmpty()) {
      throw new BadInput("the \"key\" header is missing or empty");
    }
    if (key.length() > MAX_KEY_LENGTH) {
      throw new BadInput("the \"key\" header is longer than " + MAX_KEY_LENGTH + " characters");
    }
    String illFormed = notWellFormed(key);
    if (illFormed != null) {
      throw new BadInput("the \"key\" header " + illFormed);
    }
    String id = headers.get(ID);
    if (id != null && id.length() > MAX_ID_LENGTH) {
      throw new BadInput(idTooLong(id));
    }
    String notJson = notJson(body);
    if (notJson != null) {
      throw new BadInput(notJson);
    }
    long timeoutMs = 0;
    String t = headers.get(TIMEOUT_MS);
    if (t != null) {
      timeoutMs = wholeHeader(t, TIMEOUT_MS, 1, VerticleConfig.MAX_MS, "a whole number of ms");
    }
    String o = headers.get(ORDER);
    long order = o == null ? Long.MAX_VALUE : wholeHeader(o, ORDER, Long.MIN_VALUE, Long.MAX_VALUE, "a whole number");
    // Beyond about 146 years a deadline is none: nanoTime differences stay free of overflow.
    long deadline = timeoutMs > 0 && timeoutMs <= Long.MAX_VALUE / 2_000_000
        ? System.nanoTime() + timeoutMs * 1_000_000 : Long.MAX_VALUE;
    return new Submission(key, id, body, o != null, order, timeoutMs, deadline);
  }

  /** The {@code {"id", "input"}} object sent downstream for this input. */
  public JsonObject toRequestInput() {
    // Sized for its two fields: a default JsonObject allocates a 16-slot table on its first put.
    // A map class of its own (two fields, no hashing) was tried and measured no faster, and a third
    // Map class behind JsonObject risks making its map calls megamorphic JVM-wide (ADR 0072).
    return new JsonObject(new java.util.LinkedHashMap<>(4)).put("id", id).put("input", body);
  }

  /**
   * The contract's weight of this input: the byte length of its body encoded as JSON. It costs
   * one encoding, so the verticle asks for it only when a weight bound is set (ADR 0024).
   */
  public long weight() {
    return weigh(body);
  }

  static long weigh(Object body) {
    if (body instanceof JsonObject o) {
      return o.toBuffer().length();
    }
    if (body instanceof JsonArray a) {
      return a.toBuffer().length();
    }
    if (body == null) {
      return 4; // null
    }
    return Json.encodeToBuffer(body).length();
  }

  /**
   * A JSON value the event bus can carry and a downstream request can encode ({@link #notJson});
   * {@code null} is JSON null.
   */
  public static boolean isJson(Object body) {
    return notJson(body) == null;
  }

  /**
   * Why {@code body} is no input a downstream request can carry, as the caller's 400 text, or null
   * when it is one: checked in full on arrival, whatever the downstream (ADR 0128). At the top, the
   * contract's JSON values. Inside a JsonObject or JsonArray, what Vert.x's JSON encoding writes,
   * but no NaN or infinity: Jackson writes them as the strings "NaN" and "Infinity", so an HTTP
   * downstream would get a string where the caller sent a number (and a local event-bus one the
   * number); no value of a type the encoding refuses; and no nesting deeper than a request can
   * be written with. Never quotes the body.
   */
  public static String notJson(Object body) {
    if (body == null || body instanceof String || body instanceof Boolean || body instanceof Integer
        || body instanceof Long || body instanceof Short || body instanceof Byte) {
      return null;
    }
    if (body instanceof JsonObject || body instanceof JsonArray) {
      String why;
      try {
        why = JsonWalk.whyNotWritable(body);
      } catch (java.util.ConcurrentModificationException changing) {
        // Another thread changes it as it is walked (a caller's mistake): no input to send.
        return CHANGING;
      }
      return why == null ? null : UNENCODABLE + why;
    }
    if (body instanceof Double d ? Double.isFinite(d) : body instanceof Float f && Float.isFinite(f)) {
      return null;
    }
    return "the body must be a JSON value (JsonObject, JsonArray, String, number, Boolean), got "
        + (body instanceof Double || body instanceof Float ? body : JsonWalk.typeName(body));
  }

  /** The 400 for a body another thread changed while it was checked or copied to be sent. */
  public static final String CHANGING = "the body changed while it was being sent (another thread changes it?)";

  /** How a 400 for a body JSON cannot encode begins, at arrival or when its request is written. */
  static final String UNENCODABLE = "the body cannot be encoded as JSON: ";

  /**
   * A number header, read as {@link Long#toString} writes one: ASCII digits, a minus sign before
   * them for a negative number, nothing else (no blank, no plus sign, no other script's digits, no
   * exponent or hex: ADR 0186). Anything else, or a number outside {@code min} to {@code max},
   * is 400 naming the header, the value given and the rule, as a config error names its field.
   */
  static long wholeHeader(String text, String header, long min, long max, String what) throws BadInput {
    long value = 0;
    boolean digits = text.length() > (text.startsWith("-") ? 1 : 0);
    for (int i = text.startsWith("-") ? 1 : 0; i < text.length() && digits; i++) {
      char c = text.charAt(i);
      digits = c >= '0' && c <= '9';
    }
    boolean fits = false;
    if (digits) {
      try {
        value = Long.parseLong(text);
        fits = value >= min && value <= max;
      } catch (NumberFormatException pastLong) {
        fits = false; // digits alone, but beyond a long: outside the range like any other
      }
    }
    if (!fits) {
      throw new BadInput("the \"" + header + "\" header is \"" + shortened(text) + "\": must be " + what
          + " in ASCII digits, >= " + min + " and <= " + max);
    }
    return value;
  }
}
