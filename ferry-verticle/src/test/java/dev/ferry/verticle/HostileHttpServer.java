package dev.ferry.verticle;

import dev.ferry.downstream.OutgoingBatch;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * An HTTP/1.1 server made of a raw {@link NetServer}, for attacks a well-behaved server cannot
 * make: it reads each request (head and Content-Length body, pipelined ones too) and lets the test
 * write whatever bytes it likes, at once or later, on that request's connection. It records which
 * connection carried each request and which connections the client closed, so that a test can
 * prove a connection was or was not reused. Its state lives on the server's event loop; the test
 * thread reads it through {@link #request(int)} and {@link #closed(int)}, whose futures complete
 * there.
 */
final class HostileHttpServer {
  /** One request as received: its connection (numbered from 0 in accept order) and its batch. */
  record Request(int index, int connection, NetSocket socket, String head, JsonObject batch) {
    /** The input of the batch's {@code i}-th entry. */
    Object input(int i) {
      return batch.getJsonArray("inputs").getJsonObject(i).getValue("input");
    }
  }

  private final Vertx vertx;
  private final Consumer<Request> script;
  private final List<Request> requests = new ArrayList<>();
  private final List<Promise<Request>> awaited = new ArrayList<>();
  private final List<Promise<Void>> closes = new ArrayList<>();
  /** The one context the server runs on: its connections' handlers and every record above. */
  private final io.vertx.core.Context context;
  private int connections;
  /** When each connection was accepted (nanoTime), by its number: the server's loop only. */
  private final List<Long> acceptedAt = new ArrayList<>();
  private NetServer server;

  private HostileHttpServer(Vertx vertx, Consumer<Request> script) {
    this.vertx = vertx;
    this.script = script;
    this.context = vertx.getOrCreateContext();
  }

  /** A server on 127.0.0.1, port 0, that hands every request to {@code script} (on its event loop). */
  static HostileHttpServer start(Vertx vertx, Consumer<Request> script) {
    HostileHttpServer s = new HostileHttpServer(vertx, script);
    Promise<NetServer> listening = Promise.promise();
    // Listened from its context, the server calls its handlers there.
    s.context.runOnContext(v -> vertx.createNetServer().connectHandler(s::accept).listen(0, "127.0.0.1")
        .onComplete(listening));
    s.server = VerticleTestBase.await(listening.future());
    return s;
  }

  int port() {
    return server.actualPort();
  }

  String url() {
    return "http://127.0.0.1:" + port() + "/batch";
  }

  /** Completes with the {@code n}-th request (from 0) once it has arrived. */
  Future<Request> request(int n) {
    Promise<Request> p = Promise.promise();
    onServer(() -> slot(awaited, n).future().onComplete(p));
    return p.future();
  }

  /** Completes once the client has closed connection {@code c} (from 0). */
  Future<Void> closed(int c) {
    Promise<Void> p = Promise.promise();
    onServer(() -> slot(closes, c).future().onComplete(p));
    return p.future();
  }

  /** The first input of each request that has arrived so far, in arrival order. */
  Future<List<Object>> firstInputs() {
    Promise<List<Object>> p = Promise.promise();
    onServer(() -> p.complete(requests.stream().map(r -> r.input(0)).toList()));
    return p.future();
  }

  /** When connection {@code c} was accepted (nanoTime); on the server's event loop only (a script). */
  long acceptedAt(int c) {
    return acceptedAt.get(c);
  }

  private void onServer(Runnable r) {
    context.runOnContext(v -> r.run());
  }

  private void accept(NetSocket so) {
    int connection = connections++;
    acceptedAt.add(System.nanoTime());
    Buffer[] pending = {Buffer.buffer()};
    so.closeHandler(v -> slot(closes, connection).tryComplete());
    so.handler(bytes -> {
      pending[0].appendBuffer(bytes);
      while (true) {
        String text = pending[0].toString(StandardCharsets.ISO_8859_1);
        int head = text.indexOf("\r\n\r\n");
        if (head < 0) {
          return;
        }
        String h = text.substring(0, head);
        int length = contentLength(h);
        if (pending[0].length() < head + 4 + length) {
          return;
        }
        Buffer body = pending[0].getBuffer(head + 4, head + 4 + length);
        pending[0] = pending[0].getBuffer(head + 4 + length, pending[0].length());
        Request r = new Request(requests.size(), connection, so, h, body.toJsonObject());
        requests.add(r);
        script.accept(r);
        slot(awaited, r.index()).tryComplete(r);
      }
    });
  }

  private static int contentLength(String head) {
    for (String line : head.split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        return Integer.parseInt(line.substring("content-length:".length()).trim());
      }
    }
    return 0;
  }

  private static <T> Promise<T> slot(List<Promise<T>> list, int n) {
    while (list.size() <= n) {
      list.add(Promise.promise());
    }
    return list.get(n);
  }

  /** {@code {"outcomes": [{"ok": v}, ...]}}. */
  static String outcomes(Object... oks) {
    JsonArray a = new JsonArray();
    for (Object ok : oks) {
      a.add(new JsonObject().put("ok", ok));
    }
    return new JsonObject().put("outcomes", a).encode();
  }

  /** A whole response: status line, {@code headers} (each ending in CRLF), Content-Length, body. */
  static String response(int status, String headers, String body) {
    return "HTTP/1.1 " + status + " X\r\n" + headers + "Content-Length: "
        + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
  }

  /** A 200 whose body holds one {@code ok} outcome per value. */
  static String ok(Object... oks) {
    return response(200, "Content-Type: application/json\r\n", outcomes(oks));
  }

  /** A batch of {@code inputs} (ids null, no deadline), for a test that calls the downstream alone. */
  static OutgoingBatch batch(String key, Object... inputs) {
    return batchUntil(key, Long.MAX_VALUE, inputs);
  }

  /**
   * A batch of {@code inputs} (ids null) that all expire at {@code deadline} (System.nanoTime()):
   * sealed after it, nothing is left to send.
   */
  static OutgoingBatch batchUntil(String key, long deadline, Object... inputs) {
    return new OutgoingBatch() {
      private int size;

      @Override
      public String key() {
        return key;
      }

      @Override
      public long earliestDeadline() {
        return deadline;
      }

      @Override
      public JsonObject seal() {
        if (deadline != Long.MAX_VALUE && System.nanoTime() >= deadline) {
          return null;
        }
        JsonArray a = new JsonArray();
        for (Object input : inputs) {
          a.add(new JsonObject().put("id", null).put("input", input));
        }
        size = inputs.length;
        return new JsonObject().put("key", key).put("inputs", a);
      }

      @Override
      public int sealedSize() {
        return size;
      }
    };
  }
}
