package dev.ferry.downstream;

import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * One {@code POST url} per batch through a pooled, keep-alive Vert.x HTTP client. Any 2xx answer is
 * validated as outcomes; any other status fails the batch.
 *
 * <p>One exchange, three bounds:
 * <ul>
 *   <li>{@code timeoutMs} is a total deadline for the whole exchange, from the call to the last
 *       byte of the answer: waiting for a pooled connection, writing, and reading. A server that
 *       trickles bytes cannot hold the key: at the deadline the request is reset (its connection
 *       closed) and the call fails, so the key and its slot are released (ADR 0005, ADR 0062).
 *   <li>The batch is sealed ({@link OutgoingBatch#seal()}) only once a connection is ready: an input
 *       whose caller's deadline passed while the batch waited in the pool is never sent.
 *   <li>An answer longer than {@code maxResponseBytes} fails the batch as soon as that many bytes
 *       arrived (or at once, from its {@code Content-Length}); it is never held whole.
 * </ul>
 *
 * <p>HTTP/1.1 pairs answers with requests by order alone, so a connection that may hold an answer
 * nobody read, or one still to come, is never pooled again: one whose answer was cut short, a 1xx,
 * a 304, a 5xx, or a 2xx that is not the batch's outcomes is closed (ADR 0163), and a batch is
 * written only once what its connection had already received is read (ADR 0162).
 *
 * <p>A connection idle for {@code keepAliveTimeoutMs} (or for a second less than a server's
 * advertised {@code Keep-Alive: timeout}, if shorter) is closed rather than written on: a server
 * closes idle connections on its own timer, and a batch written as that close crossed it failed
 * after it was written, 502 "may have been applied", though the server never read it (ADR 0165).
 *
 * <p>Calls are made on the ferry's event loop; the client answers on the context that made the
 * call, so every exchange's state below is touched from that one thread.
 */
public final class HttpDownstream implements Downstream {
  /** The default bound on one answer's body: 4 MiB. */
  public static final long DEFAULT_MAX_RESPONSE_BYTES = 4L << 20;
  /**
   * The default {@code keepAliveTimeoutMs}: 4 s, under the shortest idle timeout common servers
   * apply by default without always saying so (Node.js and uvicorn 5 s; Tomcat 20 s, Jetty 30 s,
   * AWS ALB 60 s, nginx 75 s), as undici, Node's own client, does (ADR 0165).
   */
  public static final long DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 4_000;
  /**
   * Taken off a server's advertised {@code Keep-Alive: timeout=N}: its timer started when it wrote
   * its answer, before the client read it, and a batch written at N - 1 s still has to reach it.
   * Whole seconds both, so a hint of 1 s leaves no idle reuse at all: such a connection is closed
   * once answered (see the exchange's {@code settled()}).
   */
  static final long HINT_MARGIN_MS = 1_000;
  /** Connections a batch may ask for again, each after one closed before it was written. */
  private static final int MAX_ASKS = 3;

  private final Vertx vertx;
  private final String url;
  private final long timeoutMs;
  private final long maxResponseBytes;
  /** The longest a pooled HTTP/1.x connection may have been idle and still be written on. */
  private final long keepAliveTimeoutMs;
  private final MultiMap headers;
  private final HttpClientAgent client;
  /** Exchanges not yet complete; touched on the ferry's event loop only. */
  private final Set<Exchange> open = new HashSet<>();
  /**
   * Each HTTP/1.x connection's exchange that wrote on it and is not settled yet; on the ferry's
   * event loop only. Vert.x gives a connection back to the pool when its answer's last byte is parsed,
   * which may be before that answer's handlers ran (head and end in one read): the next batch must
   * not be written before then, as that answer may still close the connection (review AC).
   */
  private final Map<HttpConnection, Exchange> holder = new HashMap<>();
  /**
   * Connections {@code failAndClose} closed: Vert.x may still hand one to a batch waiting for the
   * pool (its close takes effect later), which must then ask for another rather than be written
   * on it and fail (review AC). Weak: a closed connection leaves it with its last reference.
   */
  private final Set<HttpConnection> closedHere = java.util.Collections.newSetFromMap(new java.util.WeakHashMap<>());
  /**
   * Each HTTP/1.x connection's last exchange end, or its opening ({@link System#nanoTime()}), and how long it may
   * then stay idle and be reused (ms); on the ferry's event loop only. Kept here rather than left
   * to Vert.x, whose keep-alive timeout is in whole seconds and adopts a server's advertised one
   * as it is, with no margin for the close crossing the next request (review AF). Weak, as above.
   */
  private final Map<HttpConnection, Idle> idle = new java.util.WeakHashMap<>();

  /**
   * @param options the client's options (TLS, say); keep-alive is always on, pipelining always off
   * @param headers sent with every request, besides {@code Content-Type: application/json}
   * @param poolSize most connections to the downstream; batches beyond it wait for a connection
   * @see #DEFAULT_KEEP_ALIVE_TIMEOUT_MS the longest a pooled connection idles and is still reused
   */
  public HttpDownstream(Vertx vertx, String url, long timeoutMs, long maxResponseBytes,
      HttpClientOptions options, Map<String, String> headers, int poolSize) {
    this(vertx, url, timeoutMs, maxResponseBytes, options, headers, poolSize, DEFAULT_KEEP_ALIVE_TIMEOUT_MS);
  }

  /**
   * @param options the client's options (TLS, say); keep-alive is always on, pipelining always off,
   *     and the keep-alive timeout is {@code keepAliveTimeoutMs}'s
   * @param headers sent with every request, besides {@code Content-Type: application/json}
   * @param poolSize most connections to the downstream; batches beyond it wait for a connection
   * @param keepAliveTimeoutMs the longest a pooled connection may have been idle and still carry a
   *     batch; one idle longer is closed and another used (a server's advertised {@code Keep-Alive:
   *     timeout}, less a second, lowers it)
   */
  public HttpDownstream(Vertx vertx, String url, long timeoutMs, long maxResponseBytes,
      HttpClientOptions options, Map<String, String> headers, int poolSize, long keepAliveTimeoutMs) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.url = Objects.requireNonNull(url, "url");
    if (timeoutMs < 1 || poolSize < 1 || maxResponseBytes < 1 || keepAliveTimeoutMs < 1) {
      throw new IllegalArgumentException("timeoutMs, maxResponseBytes, poolSize and keepAliveTimeoutMs must be >= 1, got "
          + timeoutMs + ", " + maxResponseBytes + ", " + poolSize + ", " + keepAliveTimeoutMs);
    }
    this.timeoutMs = timeoutMs;
    this.keepAliveTimeoutMs = keepAliveTimeoutMs;
    this.maxResponseBytes = maxResponseBytes;
    this.headers = MultiMap.caseInsensitiveMultiMap();
    if (headers != null) {
      headers.forEach(this.headers::add);
    }
    this.headers.set(HttpHeaders.CONTENT_TYPE, "application/json");
    // Never pipelined: a batch written behind another before that one's answer came would read any
    // extra answer the server sent as its own (ADR 0162 needs the connection idle between batches).
    // Vert.x's keep-alive timeout is whole seconds (0: never): rounded up, it only lets the pool
    // close idle connections about when this downstream stops using them. The bound itself is
    // write()'s, in ms (a server's advertised timeout replaces Vert.x's, longer or not).
    int seconds = (int) Math.min(Integer.MAX_VALUE, (keepAliveTimeoutMs + 999) / 1000);
    HttpClientOptions o = new HttpClientOptions(options == null ? new HttpClientOptions() : options)
        .setKeepAlive(true).setPipelining(false).setKeepAliveTimeout(seconds);
    // Each new connection is idle from its opening: the server's idle timer starts at its accept.
    // Unmarked, a connection whose first batch sent nothing (its inputs' deadlines passed while it
    // connected) went back to the pool looking fresh, and the next batch was written on it however
    // long it had idled since. Vert.x calls this on the context that asked for the connection, the
    // ferry's event loop, where every mark is kept.
    this.client = vertx.httpClientBuilder().with(o).with(new PoolOptions().setHttp1MaxSize(poolSize))
        .withConnectHandler(c -> idle.putIfAbsent(c, new Idle(System.nanoTime(), keepAliveTimeoutMs)))
        .build();
  }

  /** A client with default options and no extra headers. */
  public HttpDownstream(Vertx vertx, String url, long timeoutMs, int poolSize) {
    this(vertx, url, timeoutMs, DEFAULT_MAX_RESPONSE_BYTES, null, null, poolSize);
  }

  @Override
  public Future<JsonArray> call(OutgoingBatch batch) {
    return new Exchange(batch).start();
  }

  @Override
  public Future<Void> close() {
    // Fails every exchange still open (resetting its request), so each call completes now.
    for (Exchange x : new ArrayList<>(open)) {
      x.fail(new DownstreamException("the downstream was closed before it answered"));
    }
    return client.close();
  }

  @Override
  public String toString() {
    return "http:" + url;
  }

  /** An exchange given a connection, with the request it got on it, until the last one on it settled. */
  private record Waiting(Exchange exchange, HttpClientRequest request) {}

  /** A connection idle since {@code since} (nanoTime), reusable while idle less than {@code limitMs}. */
  private record Idle(long since, long limitMs) {
    boolean expired(long now) {
      return now - since >= java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(limitMs);
    }
  }

  /**
   * The seconds of a {@code Keep-Alive: timeout=N} header, or -1 if it names none (or one past any
   * use). Read here too: Vert.x keeps its reading to itself (and its parser, in 5.0.7, refuses
   * the digit 9: {@code timeout=9} is ignored there).
   */
  static long keepAliveHint(String header) {
    if (header == null) {
      return -1;
    }
    for (String part : header.split(",")) {
      String p = part.trim();
      if (p.regionMatches(true, 0, "timeout=", 0, 8)) {
        String n = p.substring(8).trim();
        if (!n.isEmpty() && n.length() <= 9 && n.chars().allMatch(c -> c >= '0' && c <= '9')) {
          return Long.parseLong(n);
        }
        return -1;
      }
    }
    return -1;
  }

  /** How long a connection whose last answer advertised {@code hint} seconds (-1: none) may idle. */
  long idleLimitMs(long hint) {
    return hint < 0 ? keepAliveTimeoutMs : Math.min(keepAliveTimeoutMs, Math.max(0, hint * 1000 - HINT_MARGIN_MS));
  }

  /** One batch's exchange: connection, request, answer, each bounded by the one deadline. */
  private final class Exchange {
    private final OutgoingBatch batch;
    private final Promise<JsonArray> result = Promise.promise();
    private final long timer;
    private HttpClientRequest request;
    /** Exchanges given this one's HTTP/1.x connection before this one settled, each with its request then. */
    private final java.util.List<Waiting> waiting = new ArrayList<>(1);
    /** The HTTP/1.x connection this exchange wrote on, while it is {@link #holder}'s entry. */
    private HttpConnection held;
    /** Whether {@link #write} began sending: from then on a failure may follow a batch applied. */
    private boolean written;
    /** Connections asked for after the first, each because one closed before the batch was written. */
    private int asked;
    /** The seconds of the answer's {@code Keep-Alive: timeout}, -1 if none: see {@link #settled}. */
    private long hint = -1;
    /** Whether a byte of the batch may have gone out on {@link #held}: it is idle from the settle on. */
    private boolean sent;
    /** {@link #held}'s idle mark when this exchange took it: kept if nothing was sent on it. */
    private Idle idleBefore;
    private Buffer body;
    private long received;

    Exchange(OutgoingBatch batch) {
      this.batch = batch;
      this.timer = vertx.setTimer(timeoutMs, t -> fail(new DownstreamException(
          "the downstream gave no complete answer within " + timeoutMs + " ms (downstream.timeoutMs)")));
    }

    Future<JsonArray> start() {
      open.add(this);
      ask();
      return result.future();
    }

    /** Asks the pool for a connection (again after one closed before this batch was written). */
    private void ask() {
      // The pool wait is part of the deadline, which the exchange's own timer keeps: past it, the
      // call has failed, and the pool's answer, when it comes, is reset unwritten (connected()).
      // No connect timeout is handed to Vert.x: in 5.0.7 its timer for the pool wait, fired while
      // the connection opened for this request was still opening, left the request to be failed
      // a second time by the pool's close, which threw out of that close: the client's close, and
      // so the verticle's undeploy, never completed (ADR 0180).
      RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setAbsoluteURI(url)
          .setHeaders(headers);
      client.request(options).onComplete(ar -> {
        if (ar.failed()) {
          fail(new DownstreamException("no connection to the downstream: " + ar.cause().getMessage(), ar.cause()));
        } else {
          connected(ar.result());
        }
      });
    }

    private void connected(HttpClientRequest req) {
      request = req;
      // Every failure of the request fails the exchange (at once, not at the deadline). Also,
      // without a handler, Vert.x logged a reset of a request never written (nothing left to send,
      // or the deadline passed in the pool) at SEVERE, "Stream reset: 0", for a path that is no
      // failure (review N).
      req.exceptionHandler(e -> {
        if (req != request) {
          return; // a connection given up for another: its late news is not this batch's
        }
        DownstreamException failed = new DownstreamException("the downstream call failed: " + e.getMessage(), e);
        if (!written && !result.future().isComplete()) {
          // Closed before a byte of this batch was written: most often the connection of another
          // batch's wrong answer (a 5xx, a 2xx that is not its outcomes), closed by that batch in
          // the very task the pool handed it to this one.
          askAgain(req, failed);
        } else {
          fail(failed);
        }
      });
      if (result.future().isComplete()) {
        req.reset(); // timed out while waiting: nothing was written, nothing will be
        return;
      }
      // Written on the event loop's next turn, not now: a connection handed over as the previous
      // exchange on it ended (to a batch waiting for the pool, or to one the ferry sent from that
      // exchange's completion) may hold more bytes than that answer in the same read: a second
      // answer from a server that sent two. Read before this batch is written, such bytes find no
      // request waiting and Vert.x closes the connection (this batch then asks for another,
      // unsent: askAgain); read
      // after, they were this batch's answer: its callers got the other batch's outcomes (review AA).
      Exchange before = holder.get(req.connection()); // never an HTTP/2 connection's
      if (before == null) {
        Vertx.currentContext().runOnContext(v -> write(req));
      } else {
        before.waiting.add(new Waiting(this, req)); // written once that one settled
      }
    }

    /**
     * Gives up {@code req}, whose connection closed before this batch was written, for another;
     * fails the batch with {@code otherwise} once it asked {@link #MAX_ASKS} times after
     * connections it did not close itself. Nothing was
     * sent, so asking again keeps at most once, where failing would have failed a batch that never
     * reached the server (review AC). Bounded, so a server that closes every connection at once is
     * not dialled until the deadline.
     */
    private void askAgain(HttpClientRequest req, DownstreamException otherwise) {
      boolean ours = closedHere.contains(req.connection());
      // A connection this downstream closed after a wrong answer is no sign the server closes
      // every connection: each one stands for an answer received, so asking again after it is
      // bounded by the answers that come before the deadline, not by MAX_ASKS. Counted, a batch
      // waiting through a 5xx storm on a small pool was handed four closing connections in a row
      // often enough to fail unsent (5 runs in 30 of ReviewAcHttpDownstreamTest's storm).
      if (!ours && asked >= MAX_ASKS) {
        fail(otherwise);
        return;
      }
      if (!ours) {
        asked++;
      }
      giveUp(req);
    }

    /** Gives up {@code req}, not yet written on, for a connection the pool gives next. */
    private void giveUp(HttpClientRequest req) {
      request = null; // req's news (its reset's among them) is no longer this batch's
      if (!closedHere.contains(req.connection())) {
        // Not left allocated on its connection: were that one still open, its pool slot would
        // stay taken by a request nobody writes. One this downstream is closing keeps req until
        // it is gone: freed now, the pool handed the closing connection straight back, to this
        // batch or another, each then asking again, until one ran out of asks (a CI run).
        req.reset();
      }
      ask();
    }

    private void write(HttpClientRequest req) {
      if (result.future().isComplete()) {
        return; // failed meanwhile (the connection closed, the deadline): fail() reset the request
      }
      if (req != request) {
        return; // its connection closed before this turn: the batch asked for another
      }
      if (closedHere.contains(req.connection())) {
        askAgain(req, new DownstreamException("the downstream call failed: its connection was closed before the batch was written"));
        return;
      }
      if (req.version() != HttpVersion.HTTP_2) {
        Idle since = idle.remove(req.connection());
        idleBefore = since;
        if (since != null && since.expired(System.nanoTime())) {
          // Idle long enough for the server to be closing it now: written, the batch could meet
          // its FIN, fail after the write and be answered 502 (may have been applied) though no
          // server read it (review AF). Closed unwritten instead, and another connection asked
          // for, not counted against MAX_ASKS: the server refused nothing, and the pool holds at
          // most poolSize such connections, each closed here once.
          HttpConnection stale = req.connection();
          closedHere.add(stale);
          stale.close();
          giveUp(req);
          return;
        }
      }
      written = true;
      if (req.version() != HttpVersion.HTTP_2) {
        held = req.connection(); // HTTP/2 streams have their own answers: nobody waits for them
        holder.put(held, this);
      }
      Buffer sealed;
      try {
        sealed = batch.sealEncoded();
      } catch (RuntimeException unencodable) {
        // Thrown here it would escape into the client's callback: the exchange would stay open,
        // holding its key, until the deadline. Nothing was written: fail the batch now.
        fail(new DownstreamException("the batch cannot be encoded as JSON: " + unencodable.getMessage(), unencodable));
        return;
      }
      if (sealed == null) {
        // Every input's deadline passed while the batch waited (or none could be encoded): send
        // nothing. Settled before the reset, whose exception would otherwise fail it.
        succeed(new JsonArray());
        request.reset();
        return;
      }
      int expected = batch.sealedSize();
      sent = true;
      request.send(sealed).onComplete(ar -> {
        if (ar.failed()) {
          fail(new DownstreamException("the downstream call failed: " + ar.cause().getMessage(), ar.cause()));
        } else {
          read(ar.result(), expected);
        }
      });
    }

    private void read(HttpClientResponse response, int expected) {
      int status = response.statusCode();
      // First, so that a reset of this answer (too long, the deadline) is this exchange's failure,
      // not a SEVERE "Stream reset" Vert.x logs for an answer with no handler.
      response.exceptionHandler(e -> fail(new DownstreamException("the answer broke off: " + e.getMessage(), e)));
      if (status < 200) {
        // An interim answer (102 Processing, say; Vert.x keeps only 100 and 103 to itself), handed
        // over as if final: the final answer, this batch's outcomes, is still to come on this
        // connection. Pooled again, the connection gave that answer to the next batch sent on it,
        // another key's callers then got this batch's outcomes (review Y). The batch fails as any
        // non-2xx answer does (it may have been applied).
        failAndClose(response, new DownstreamException("the downstream answered HTTP " + status + " as its answer"));
        return;
      }
      boolean ok = status >= 200 && status <= 299;
      hint = keepAliveHint(response.getHeader("Keep-Alive"));
      String length = response.getHeader(HttpHeaders.CONTENT_LENGTH);
      if (length != null && declaredTooLong(length)) {
        tooLong(status);
        return;
      }
      body = ok ? Buffer.buffer() : null; // a failure's body is read and dropped, never quoted
      response.handler(chunk -> {
        received += chunk.length();
        if (received > maxResponseBytes) {
          tooLong(status);
        } else if (body != null) {
          body.appendBuffer(chunk);
        }
      });
      response.endHandler(v -> {
        if (!ok) {
          // Status only: a body may quote payloads back.
          DownstreamException answered = new DownstreamException("the downstream answered HTTP " + status);
          if (status == 304 || status >= 500) {
            // A 304 is bodyless by HTTP's rule, whatever its Content-Length says: a body sent
            // anyway is still on the connection. A 5xx may be a gateway's that gave up on its
            // backend, whose late answer, this batch's outcomes, a broken gateway still forwards
            // on the connection. Pooled, either was the next batch's answer (review AA). A 4xx
            // (or 3xx) is the server's own last word on the request: the connection is kept.
            failAndClose(response, answered);
          } else {
            fail(answered);
          }
          return;
        }
        try {
          succeed(Outcomes.validate(body, expected));
        } catch (DownstreamException e) {
          // A 2xx that is not this batch's outcomes (204 and its ignored body among them) says the
          // server and the client may disagree on which answer is which: one sent twice, read by
          // this batch, leaves this batch's own answer to come. Pooled, the connection gave it to
          // the next batch: its callers got this batch's outcomes (review AA).
          failAndClose(response, e);
        }
      });
    }

    /**
     * Fails the batch and closes its connection, for an answer after which the connection cannot
     * be trusted to begin the next answer where the next request's does (ADR 0163). The reset in
     * {@link #fail} closes it only while the answer is still being read.
     */
    private void failAndClose(HttpClientResponse response, DownstreamException cause) {
      HttpConnection connection = request.connection();
      fail(cause);
      // Only HTTP/1.x pairs answers by order. An HTTP/2 answer has its own stream, which the reset
      // in fail() ends; closing the shared connection failed every other batch in flight on it.
      // The version the answer came in, not the one configured: a server may refuse the upgrade.
      if (response.version() != HttpVersion.HTTP_2) {
        closedHere.add(connection);
        connection.close();
      }
    }

    private boolean declaredTooLong(String length) {
      try {
        return Long.parseLong(length.trim()) > maxResponseBytes;
      } catch (NumberFormatException e) {
        return false; // the client rejects a malformed length itself
      }
    }

    /** Fails an answer over the bound; a non-2xx one by its status, which says what went wrong. */
    private void tooLong(int status) {
      fail(new DownstreamException(status >= 200 && status <= 299
          ? "the downstream's answer is longer than maxResponseBytes (" + maxResponseBytes + " bytes)"
          : "the downstream answered HTTP " + status));
    }

    private void succeed(JsonArray outcomes) {
      if (result.tryComplete(outcomes)) {
        vertx.cancelTimer(timer);
        open.remove(this);
        settled();
      }
    }

    /** Lets go of the connection: the exchange given it meanwhile may write, or ask again. */
    private void settled() {
      if (held == null) {
        return;
      }
      holder.remove(held, this);
      if (!closedHere.contains(held)) {
        if (sent) {
          // Idle from now: the server's timer started when it wrote the answer, a little earlier.
          // An answer without Keep-Alive keeps the limit an earlier one advertised, as Vert.x does.
          long limit = hint >= 0 || idleBefore == null ? idleLimitMs(hint) : idleBefore.limitMs();
          if (limit == 0) {
            // A server that advertised 1 s or less leaves no idle reuse: closed now, as undici
            // does, not pooled. Pooled, the pool handed it to the next batch waiting, which could
            // only close it and queue again, behind every batch that came after it: against such
            // a server under load every other batch went to the back of the queue (review AG).
            // Closed here, the pool opens the next connection for the batch first in line; one
            // already handed it asks again (write() sees it closed here), after this answer.
            closedHere.add(held);
            held.close();
          } else {
            idle.put(held, new Idle(System.nanoTime(), limit));
          }
        } else if (idleBefore != null) {
          // Nothing went out (no input left, or none encodable): the server's idle timer kept
          // running from the last answer, and so does this mark.
          idle.put(held, idleBefore);
        }
      }
      held = null;
      // The next turn: failAndClose closes the connection after fail() returned. A waiter that
      // settled or asked for another connection meanwhile ignores it (its request differs); one
      // whose connection this exchange closed asks for another (write() sees it closed here).
      for (Waiting w : waiting) {
        vertx.runOnContext(v -> w.exchange().write(w.request()));
      }
      waiting.clear();
    }

    /** Completes the call failed once; an exchange still open is reset, which frees its connection. */
    private void fail(Throwable cause) {
      if (!result.tryFail(cause)) {
        return;
      }
      vertx.cancelTimer(timer);
      open.remove(this);
      settled();
      body = null;
      if (request != null) {
        request.reset();
      }
    }
  }
}
