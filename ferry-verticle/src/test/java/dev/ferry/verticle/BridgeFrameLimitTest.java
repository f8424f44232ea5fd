package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetSocket;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The bridge's frame guard ({@link BridgeFrameLimit.Guard}) over every way TCP may cut a stream:
 * what fits passes to the bridge's parser byte for byte, and a frame announced over the bound stops
 * the stream at its length prefix, whichever reads the prefix and the frames before it come in.
 */
class BridgeFrameLimitTest {

  /**
   * A socket that records what is written and whether it was closed; with {@code writesHang}, no
   * write ever completes, as for a client that reads nothing.
   */
  private static final class FakeSocket {
    final List<Buffer> written = new ArrayList<>();
    boolean writesHang;
    boolean closed;

    FakeSocket() {
    }

    FakeSocket(boolean writesHang) {
      this.writesHang = writesHang;
    }

    final NetSocket socket = (NetSocket) Proxy.newProxyInstance(NetSocket.class.getClassLoader(),
        new Class<?>[] {NetSocket.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "write":
              written.add((Buffer) args[0]);
              return writesHang ? io.vertx.core.Promise.promise().future() : Future.succeededFuture();
            case "close":
              closed = true;
              return Future.succeededFuture();
            case "writeQueueFull":
              return false; // the guard pauses a socket whose replies are not read (ADR 0104)
            default:
              return null;
          }
        });
  }

  /** A frame of {@code length} bytes (at least 2) whose JSON is an object: {@code {"p": "abc..."}}. */
  private static Buffer frame(int length) {
    Buffer b = Buffer.buffer().appendInt(length).appendString("{");
    if (length >= 8) {
      b.appendString("\"p\":\"");
      for (int i = 0; i < length - 8; i++) {
        b.appendByte((byte) ('a' + i % 26));
      }
      b.appendString("\"");
    } else {
      for (int i = 0; i < length - 2; i++) {
        b.appendString(" ");
      }
    }
    return b.appendString("}");
  }

  /** A frame whose bytes are {@code json} as is. */
  private static Buffer raw(String json) {
    byte[] bytes = json.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    return Buffer.buffer().appendInt(bytes.length).appendBytes(bytes);
  }

  private static Vertx vertx;

  @BeforeAll
  static void start() {
    vertx = Vertx.vertx();
  }

  @AfterAll
  static void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /**
   * Feeds {@code stream} to a guard in pieces of {@code piece} bytes, on an event loop as a
   * socket would; returns what the parser got. The parser is the bridge's own ({@code
   * FrameParser}), and what it decodes is counted for the guard as the bridge's hook counts it; a
   * decoded object whose "type" is "boom" throws, as the bridge does for a type it does not know.
   */
  private static Buffer feed(Buffer stream, int piece, int max, FakeSocket socket) {
    CompletableFuture<Buffer> done = new CompletableFuture<>();
    vertx.getOrCreateContext().runOnContext(v -> {
      Buffer parsed = Buffer.buffer();
      BridgeFrameLimit.Guard[] guard = new BridgeFrameLimit.Guard[1];
      io.vertx.ext.eventbus.bridge.tcp.impl.protocol.FrameParser bridge =
          new io.vertx.ext.eventbus.bridge.tcp.impl.protocol.FrameParser(ar -> {
            if (ar.succeeded()) {
              if ("boom".equals(ar.result().getValue("type"))) {
                throw new IllegalArgumentException("Invalid frame type boom");
              }
              guard[0].frameDecoded();
            }
          });
      guard[0] = new BridgeFrameLimit.Guard(socket.socket, b -> {
        parsed.appendBuffer(b);
        bridge.handle(b);
      }, max);
      for (int i = 0; i < stream.length(); i += piece) {
        guard[0].handle(stream.getBuffer(i, Math.min(stream.length(), i + piece)));
      }
      done.complete(parsed);
    });
    try {
      return done.get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void framesWithinTheBoundPassUnchangedHoweverTheStreamIsCut() {
    Buffer stream = Buffer.buffer().appendBuffer(frame(10)).appendBuffer(frame(2)).appendBuffer(frame(100))
        .appendBuffer(frame(3));
    for (int piece = 1; piece <= stream.length(); piece++) {
      FakeSocket socket = new FakeSocket();
      Buffer parsed = feed(stream, piece, 100, socket);
      assertEquals(stream, parsed, "pieces of " + piece);
      assertEquals(List.of(), socket.written, "pieces of " + piece);
      assertTrue(!socket.closed, "pieces of " + piece);
    }
  }

  @Test
  void aFrameOverTheBoundStopsTheStreamAtItsLengthWhereverTheCutsFall() {
    Buffer before = Buffer.buffer().appendBuffer(frame(10)).appendBuffer(frame(100));
    Buffer stream = before.copy().appendInt(101).appendBuffer(Buffer.buffer(new byte[50])).appendBuffer(frame(3));
    for (int piece = 1; piece <= stream.length(); piece++) {
      FakeSocket socket = new FakeSocket();
      Buffer parsed = feed(stream, piece, 100, socket);
      // The frames before it, and at most the part of its prefix read in an earlier piece.
      assertTrue(parsed.length() >= before.length() && parsed.length() < before.length() + 4,
          "pieces of " + piece + ": " + parsed.length());
      assertEquals(before, parsed.getBuffer(0, before.length()), "pieces of " + piece);
      assertEquals(1, socket.written.size(), "pieces of " + piece);
      Buffer err = socket.written.get(0);
      JsonObject json = new JsonObject(err.getBuffer(4, err.length()));
      assertEquals(err.length() - 4, err.getInt(0));
      assertEquals("err", json.getString("type"));
      assertTrue(json.getString("message").contains("a frame of 101 bytes is over the bridge's maxFrameBytes (100)"),
          json.encode());
      assertTrue(socket.closed, "pieces of " + piece);
    }
  }

  @Test
  void aNegativeLengthIsRefusedToo() {
    FakeSocket socket = new FakeSocket();
    Buffer parsed = feed(Buffer.buffer().appendInt(-1).appendBuffer(frame(2)), 64, 100, socket);
    assertEquals(0, parsed.length());
    assertTrue(socket.closed);
    assertTrue(socket.written.get(0).toString().contains("4294967295 bytes"), socket.written.get(0).toString());
  }

  @Test
  void aFrameTheBridgeCannotDecodeOrTakeStopsTheStreamAfterItWhereverTheCutsFall() {
    // The bridge logged a frame it could not decode and answered nothing; one whose type it did not
    // know threw out of its parser, which then read the rest of the stream out of step.
    Buffer before = Buffer.buffer().appendBuffer(frame(10)).appendBuffer(frame(100));
    for (String bad : List.of("{bad", "[1]", "", "{\"type\":\"boom\"}")) {
      Buffer stream = before.copy().appendBuffer(raw(bad)).appendBuffer(frame(20));
      for (int piece = 1; piece <= stream.length(); piece++) {
        FakeSocket socket = new FakeSocket();
        Buffer parsed = feed(stream, piece, 100, socket);
        String at = "\"" + bad + "\" in pieces of " + piece;
        // The frames before it and the bad one itself, never the frame after it.
        assertEquals(before.copy().appendBuffer(raw(bad)), parsed, at);
        assertEquals(1, socket.written.size(), at);
        Buffer err = socket.written.get(0);
        JsonObject json = new JsonObject(err.getBuffer(4, err.length()));
        assertEquals("err", json.getString("type"), at);
        String expected = bad.contains("boom")
            ? "a frame the bridge cannot take (Invalid frame type boom; a frame's \"type\" is send, publish, register,"
                + " unregister or ping); the connection is closed"
            : "a frame that is not a JSON object the bridge can read; the connection is closed";
        assertEquals(expected, json.getString("message"), at);
        assertTrue(socket.closed, at);
      }
    }
  }

  /**
   * A refused connection is closed once its error frame has been written (ADR 0104): for a client
   * that reads nothing that write never completes, and the connection stayed for good, the guard
   * reading and dropping whatever else came. The idle watch closes it all the same, a bound after
   * its last whole frame (ADR 0166).
   */
  @Test
  void aRefusedConnectionWhoseErrorFrameIsNeverWrittenIsClosedAtTheIdleBound() throws Exception {
    FakeSocket socket = new FakeSocket(true);
    io.vertx.core.Context loop = vertx.getOrCreateContext();
    CompletableFuture<Boolean> closedAtOnce = new CompletableFuture<>();
    loop.runOnContext(v -> {
      BridgeFrameLimit.Guard guard = new BridgeFrameLimit.Guard(socket.socket, b -> { }, 100);
      guard.watchIdle(vertx, BridgeFrameLimit.MIN_IDLE_TIMEOUT_MS);
      guard.handle(Buffer.buffer().appendInt(101));
      closedAtOnce.complete(socket.closed);
    });
    assertTrue(!closedAtOnce.get(10, TimeUnit.SECONDS), "the close waits for the error frame's write");
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      CompletableFuture<Boolean> closed = new CompletableFuture<>();
      loop.runOnContext(v -> closed.complete(socket.closed));
      if (closed.get(10, TimeUnit.SECONDS)) {
        break;
      }
      assertTrue(System.nanoTime() < until, "a refused connection whose error frame was never written stayed open");
      Thread.sleep(50);
    }
    CompletableFuture<Integer> written = new CompletableFuture<>();
    loop.runOnContext(v -> written.complete(socket.written.size()));
    assertEquals(1, written.get(10, TimeUnit.SECONDS), "one error frame, not a second at the idle close");
  }
}
