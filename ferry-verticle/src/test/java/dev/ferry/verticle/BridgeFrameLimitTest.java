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

  /** A socket that records what is written and whether it was closed. */
  private static final class FakeSocket {
    final List<Buffer> written = new ArrayList<>();
    boolean closed;
    final NetSocket socket = (NetSocket) Proxy.newProxyInstance(NetSocket.class.getClassLoader(),
        new Class<?>[] {NetSocket.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "write":
              written.add((Buffer) args[0]);
              return Future.succeededFuture();
            case "close":
              closed = true;
              return Future.succeededFuture();
            default:
              return null;
          }
        });
  }

  private static Buffer frame(int length) {
    Buffer b = Buffer.buffer().appendInt(length);
    for (int i = 0; i < length; i++) {
      b.appendByte((byte) ('a' + i % 26));
    }
    return b;
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
   * socket would; returns what the parser got.
   */
  private static Buffer feed(Buffer stream, int piece, int max, FakeSocket socket) {
    CompletableFuture<Buffer> done = new CompletableFuture<>();
    vertx.getOrCreateContext().runOnContext(v -> {
      Buffer parsed = Buffer.buffer();
      BridgeFrameLimit.Guard guard = new BridgeFrameLimit.Guard(socket.socket, parsed::appendBuffer, max);
      for (int i = 0; i < stream.length(); i += piece) {
        guard.handle(stream.getBuffer(i, Math.min(stream.length(), i + piece)));
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
    Buffer stream = Buffer.buffer().appendBuffer(frame(10)).appendBuffer(frame(0)).appendBuffer(frame(100))
        .appendBuffer(frame(1));
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
}
