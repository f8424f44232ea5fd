package dev.ferry.verticle;

import dev.ferry.downstream.HttpDownstream;
import dev.ferry.internal.ConfigCheck;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.JksOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.PfxOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The HTTP downstream's settings beyond its url and timeout, read strictly from the {@code
 * downstream} object: headers sent with every batch, TLS (trust, client certificate, host
 * verification), and the bound on an answer's size. They become Vert.x {@link HttpClientOptions}
 * ({@link #clientOptions()}), the options the Web Client takes too.
 *
 * @param headers sent with every request, in order; never Content-Type and friends, which the ferry sets
 * @param tls the TLS settings, or null for the JVM's defaults (an https url still works against a
 *     certificate the JVM trusts)
 * @param maxResponseBytes the longest answer body accepted; a longer one fails its batch (502)
 * @param keepAliveTimeoutMs the longest a pooled connection may have been idle and still carry a
 *     batch (ADR 0165)
 */
public record HttpSettings(Map<String, String> headers, Tls tls, long maxResponseBytes, long keepAliveTimeoutMs) {

  /** The field names the http downstream object accepts. */
  static final Set<String> FIELDS = Set.of("type", "url", "timeoutMs", "headers", "tls", "maxResponseBytes",
      "keepAliveTimeoutMs");
  static final Set<String> TLS_FIELDS = Set.of("trustAll", "verifyHost", "trustPem", "trustStore", "keyStore", "certPem", "keyPem");
  static final Set<String> STORE_FIELDS = Set.of("path", "password", "type");
  /** Set by the ferry or by the HTTP client: a configured value would contradict the protocol. */
  static final Set<String> RESERVED_HEADERS = Set.of("content-type", "content-length", "transfer-encoding", "host", "connection");
  /**
   * The ferry writes and reads plain JSON: a Content-Encoding would misdescribe every request, and
   * an Accept-Encoding invites a compressed answer the client does not decode (every batch 502).
   */
  static final Set<String> ENCODING_HEADERS = Set.of("content-encoding", "accept-encoding");

  /**
   * TLS for an https url.
   *
   * @param trustPem PEM files of the certificates (CAs) to trust, instead of the JVM's
   * @param trustStore a trust store (PKCS#12 or JKS) instead of the JVM's
   * @param keyStore a client certificate and key for mutual TLS, in a key store
   * @param certPem with {@code keyPem}: a client certificate and key for mutual TLS, as PEM files
   */
  public record Tls(boolean trustAll, boolean verifyHost, List<String> trustPem, Store trustStore,
      Store keyStore, String certPem, String keyPem) {}

  /** A key or trust store file: {@code type} is {@code "pkcs12"} (the default) or {@code "jks"}. */
  public record Store(String path, String password, String type) {}

  /** These settings with the default {@code keepAliveTimeoutMs}, as before it was one. */
  public HttpSettings(Map<String, String> headers, Tls tls, long maxResponseBytes) {
    this(headers, tls, maxResponseBytes, HttpDownstream.DEFAULT_KEEP_ALIVE_TIMEOUT_MS);
  }

  /** The defaults: no extra header, the JVM's TLS defaults, answers up to 4 MiB, idle reuse up to 4 s. */
  public static HttpSettings defaults() {
    return new HttpSettings(Map.of(), null, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES,
        HttpDownstream.DEFAULT_KEEP_ALIVE_TIMEOUT_MS);
  }

  /** The client options these settings stand for. */
  public HttpClientOptions clientOptions() {
    HttpClientOptions o = new HttpClientOptions();
    if (tls == null) {
      return o;
    }
    o.setTrustAll(tls.trustAll()).setVerifyHost(tls.verifyHost());
    if (!tls.trustPem().isEmpty()) {
      PemTrustOptions pem = new PemTrustOptions();
      tls.trustPem().forEach(pem::addCertPath);
      o.setTrustOptions(pem);
    } else if (tls.trustStore() != null) {
      o.setTrustOptions(store(tls.trustStore()));
    }
    if (tls.keyStore() != null) {
      o.setKeyCertOptions(store(tls.keyStore()));
    } else if (tls.certPem() != null) {
      o.setKeyCertOptions(new PemKeyCertOptions().addCertPath(tls.certPem()).addKeyPath(tls.keyPem()));
    }
    return o;
  }

  /**
   * Loads the configured TLS files (trust, client certificate and key) once, on a worker thread:
   * completes with a violation for each that cannot be read (missing, malformed, wrong password),
   * naming its field. The Vert.x client reads them only at its first connection, so a bad file
   * otherwise surfaced as a 502 on every batch of a deployment that had succeeded.
   */
  io.vertx.core.Future<List<String>> unreadableTlsFiles(io.vertx.core.Vertx vertx) {
    if (tls == null) {
      return io.vertx.core.Future.succeededFuture(List.of());
    }
    HttpClientOptions o = clientOptions();
    String trustField = !tls.trustPem().isEmpty() ? "downstream.tls.trustPem"
        : tls.trustStore() != null ? "downstream.tls.trustStore" : null;
    String keyField = tls.keyStore() != null ? "downstream.tls.keyStore"
        : tls.certPem() != null ? "downstream.tls.certPem/keyPem" : null;
    return vertx.executeBlocking(() -> {
      List<String> bad = new ArrayList<>();
      if (trustField != null) {
        try {
          o.getTrustOptions().getTrustManagerFactory(vertx);
        } catch (Exception e) {
          bad.add(trustField + ": cannot be loaded: " + e.getMessage());
        }
      }
      if (keyField != null) {
        try {
          o.getKeyCertOptions().getKeyManagerFactory(vertx);
        } catch (Exception e) {
          bad.add(keyField + ": cannot be loaded: " + e.getMessage());
        }
      }
      return bad;
    }, false);
  }

  private static io.vertx.core.net.KeyStoreOptionsBase store(Store s) {
    return "jks".equals(s.type())
        ? new JksOptions().setPath(s.path()).setPassword(s.password())
        : new PfxOptions().setPath(s.path()).setPassword(s.password());
  }

  /** Reads the http-only fields of {@code d} (the downstream object); violations go to {@code check}. */
  static HttpSettings read(JsonObject d, ConfigCheck check, boolean https) {
    Map<String, String> headers = readHeaders(d.getValue("headers"), check);
    Tls tls = null;
    Object t = d.getValue("tls");
    if (t != null) {
      if (!(t instanceof JsonObject tj)) {
        check.violation("downstream.tls = " + describe(t) + ": must be an object");
      } else {
        check.require(https, "downstream.tls", "{...}", "only with an https:// url");
        tls = readTls(tj, check);
      }
    }
    long max = readWholeUpTo(d, "maxResponseBytes", Integer.MAX_VALUE, HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, check);
    // Milliseconds, whatever Vert.x's whole seconds: HttpDownstream bounds idle reuse itself.
    long keepAlive = readWholeUpTo(d, "keepAliveTimeoutMs", VerticleConfig.MAX_MS,
        HttpDownstream.DEFAULT_KEEP_ALIVE_TIMEOUT_MS, check);
    return new HttpSettings(headers, tls, max, keepAlive);
  }

  /**
   * The whole number {@code field} of {@code d}, 1 to {@code top} (4000.0 too, as elsewhere), or
   * {@code otherwise} when absent or refused; a refused value is named with the value as given.
   */
  private static long readWholeUpTo(JsonObject d, String field, long top, long otherwise, ConfigCheck check) {
    Object given = d.getValue(field);
    if (given == null) {
      return otherwise;
    }
    Long read = new ConfigCheck().readLong(d, field);
    boolean ok = read != null && read >= 1 && read <= top;
    check.require(ok, "downstream." + field, describe(given), "must be a whole number >= 1 and <= " + top);
    return ok ? read : otherwise;
  }

  private static Map<String, String> readHeaders(Object h, ConfigCheck check) {
    if (h == null) {
      return Map.of();
    }
    if (!(h instanceof JsonObject json)) {
      check.violation("downstream.headers = " + describe(h) + ": must be an object of header names to string values");
      return Map.of();
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (String name : json.fieldNames()) {
      String field = "downstream.headers." + name;
      Object value = json.getValue(name);
      boolean token = !name.isEmpty() && name.chars().allMatch(HttpSettings::tokenChar);
      String shown = value instanceof String ? "\"...\"" : describe(value); // values may be secrets
      check.require(token, field, shown, "a header name must be an HTTP token (letters, digits, !#$%&'*+-.^_`|~)");
      check.require(!RESERVED_HEADERS.contains(name.toLowerCase(Locale.ROOT)), field, shown,
          "is set by the ferry or the HTTP client, not configurable");
      check.require(!ENCODING_HEADERS.contains(name.toLowerCase(Locale.ROOT)), field, shown,
          "not configurable: the ferry sends and reads uncompressed JSON");
      boolean text = value instanceof String s && s.chars().noneMatch(c -> c == '\r' || c == '\n' || c == 0);
      check.require(text, field, shown, "must be a string without line breaks");
      // Netty refuses any other control character when the request is made, so every batch failed
      // with 502 (quoting the value, which may be a secret); a character past U+00FF went out as '?'.
      boolean sendable = !text || ((String) value).chars().allMatch(HttpSettings::headerValueChar);
      check.require(sendable, field, shown,
          "must hold no control character (tab excepted) and no character past U+00FF (Latin-1)");
      if (token && text && sendable) {
        headers.put(name, (String) value);
      }
    }
    return Map.copyOf(headers);
  }

  private static Tls readTls(JsonObject t, ConfigCheck check) {
    unknown(check, t, "downstream.tls", TLS_FIELDS);
    boolean trustAll = bool(t, "trustAll", false, check);
    boolean verifyHost = bool(t, "verifyHost", true, check);
    List<String> trustPem = new ArrayList<>();
    Object p = t.getValue("trustPem");
    if (p != null) {
      JsonArray paths = p instanceof String s ? new JsonArray().add(s) : p instanceof JsonArray a ? a : null;
      boolean ok = paths != null && !paths.isEmpty();
      if (ok) {
        for (Object path : paths) {
          ok &= path instanceof String s && !s.isEmpty();
        }
      }
      check.require(ok, "downstream.tls.trustPem", describe(p), "must be a file path or a non-empty array of file paths");
      if (ok) {
        paths.forEach(path -> trustPem.add((String) path));
      }
    }
    Store trustStore = store(t, "trustStore", check);
    Store keyStore = store(t, "keyStore", check);
    String certPem = path(t, "certPem", check);
    String keyPem = path(t, "keyPem", check);
    check.require(p == null || t.getValue("trustStore") == null, "downstream.tls.trustStore", "{...}",
        "give trustPem or trustStore, not both");
    check.require((certPem == null) == (keyPem == null), "downstream.tls.certPem/keyPem",
        describe(certPem) + "/" + describe(keyPem), "give both (a client certificate and its key) or neither");
    check.require(keyStore == null || certPem == null, "downstream.tls.keyStore", "{...}",
        "give keyStore or certPem/keyPem, not both");
    return new Tls(trustAll, verifyHost, List.copyOf(trustPem), trustStore, keyStore, certPem, keyPem);
  }

  private static Store store(JsonObject t, String field, ConfigCheck check) {
    Object v = t.getValue(field);
    if (v == null) {
      return null;
    }
    String name = "downstream.tls." + field;
    if (!(v instanceof JsonObject s)) {
      check.violation(name + " = " + describe(v) + ": must be an object {\"path\", \"password\", \"type\"}");
      return null;
    }
    unknown(check, s, name, STORE_FIELDS);
    Object path = s.getValue("path");
    Object password = s.getValue("password");
    Object type = s.getValue("type");
    boolean ok = path instanceof String ps && !ps.isEmpty();
    check.require(ok, name + ".path", describe(path), "must be a non-empty file path");
    check.require(password == null || password instanceof String, name + ".password", "(hidden)", "must be a string");
    check.require(type == null || "pkcs12".equals(type) || "jks".equals(type), name + ".type", describe(type),
        "must be \"pkcs12\" or \"jks\"");
    return ok ? new Store((String) path, password instanceof String pw ? pw : null,
        type == null ? "pkcs12" : String.valueOf(type)) : null;
  }

  private static String path(JsonObject t, String field, ConfigCheck check) {
    Object v = t.getValue(field);
    if (v == null) {
      return null;
    }
    boolean ok = v instanceof String s && !s.isEmpty();
    check.require(ok, "downstream.tls." + field, describe(v), "must be a non-empty file path");
    return ok ? (String) v : null;
  }

  private static boolean bool(JsonObject t, String field, boolean dflt, ConfigCheck check) {
    Object v = t.getValue(field);
    if (v == null) {
      return dflt;
    }
    check.require(v instanceof Boolean, "downstream.tls." + field, describe(v), "must be true or false");
    return v instanceof Boolean b ? b : dflt;
  }

  static void unknown(ConfigCheck check, JsonObject json, String prefix, Set<String> known) {
    for (String f : json.fieldNames()) {
      if (!known.contains(f)) {
        check.violation(prefix + "." + f + ": unknown field (known: " + String.join(", ", new TreeSet<>(known)) + ")");
      }
    }
  }

  /** A character an HTTP/1.1 header value carries as it is: tab, space, visible ASCII, obs-text. */
  private static boolean headerValueChar(int c) {
    return c == '\t' || (c >= 0x20 && c != 0x7F && c <= 0xFF);
  }

  private static boolean tokenChar(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
  }

  private static String describe(Object value) {
    return value instanceof String s ? "\"" + s + "\"" : String.valueOf(value);
  }
}
