package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A TCP bridge client that keeps sending and never reads its replies: the node stops reading its
 * socket while the replies it owes it fill the write queue, so the client's sends wait in TCP
 * instead of the node buffering replies without bound; once the client reads, everything goes on
 * and every input still gets its reply.
 */
class BridgeBackPressureTest extends VerticleTestBase {
  private static final int SENDS = 300_000;

  @Test
  void aClientThatNeverReadsIsNotReadEitherUntilItReadsItsReplies() throws Exception {
    int port = TestPorts.free();
    AtomicLong taken = new AtomicLong();
    downstream.auto(call -> {
      taken.addAndGet(call.inputs.size());
      call.echo();
    });
    deploy(config(new JsonObject().put("maxQueueing", 1_000_000)
        .put("bridge", new JsonObject().put("port", port))));
    try (Socket socket = new Socket()) {
      socket.setReceiveBufferSize(4096);
      socket.connect(new InetSocketAddress("127.0.0.1", port));
      socket.setSoTimeout(30_000);
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), 1 << 16));
      AtomicInteger written = new AtomicInteger();
      Thread writer = new Thread(() -> {
        try {
          for (int i = 0; i < SENDS; i++) {
            byte[] frame = ReviewCBridgeTest.send(new JsonObject().put("key", "k" + (i % 64)), "input " + i + " ".repeat(40), "r")
                .encode().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            out.writeInt(frame.length);
            out.write(frame);
            written.incrementAndGet();
          }
          out.flush();
        } catch (java.io.IOException closed) {
          // the test closed the socket
        }
      }, "never-reads");
      writer.setDaemon(true);
      writer.start();
      // Until the inputs taken stop growing: the node stopped reading (or took every send, which
      // it did before, buffering a reply for each).
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(120);
      long last = -1;
      while (taken.get() != last && taken.get() < SENDS && System.nanoTime() < deadline) {
        last = taken.get();
        Thread.sleep(1_000);
      }
      long stalledAt = taken.get();
      assertTrue(stalledAt < SENDS / 2, "the node took " + stalledAt + " of " + SENDS
          + " inputs from a client that read none of its replies: it buffered a reply for each");
      assertTrue(writer.isAlive(), "the client wrote everything: nothing held its sends back");
      // The client reads now: the node reads again, and every input gets its reply.
      DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(socket.getInputStream(), 1 << 16));
      for (int i = 0; i < SENDS; i++) {
        JsonObject reply = ReviewCBridgeTest.read(in);
        assertEquals("message", reply.getString("type"), reply::encode);
      }
      writer.join(30_000);
      assertFalse(writer.isAlive());
      assertEquals(SENDS, taken.get());
    }
  }
}
