package dev.ferry.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Vertx;
import org.junit.jupiter.api.Test;

/** Review AF: the server's {@code Keep-Alive: timeout} as the HTTP downstream reads and uses it. */
class KeepAliveHintTest {
  @Test
  void theTimeoutIsReadWhereverItStandsAndGarbageIsNoHint() {
    assertEquals(5, HttpDownstream.keepAliveHint("timeout=5"));
    assertEquals(5, HttpDownstream.keepAliveHint("max=100, Timeout=5"));
    assertEquals(9, HttpDownstream.keepAliveHint("timeout=9")); // Vert.x 5.0.7 ignores it
    assertEquals(19, HttpDownstream.keepAliveHint(" timeout=19 , max=3"));
    assertEquals(-1, HttpDownstream.keepAliveHint(null));
    assertEquals(-1, HttpDownstream.keepAliveHint("max=100"));
    assertEquals(-1, HttpDownstream.keepAliveHint("timeout="));
    assertEquals(-1, HttpDownstream.keepAliveHint("timeout=-1"));
    assertEquals(-1, HttpDownstream.keepAliveHint("timeout=5s"));
    assertEquals(-1, HttpDownstream.keepAliveHint("timeout=99999999999999999999"));
  }

  @Test
  void aHintLowersTheLimitToASecondUnderItAndNeverRaisesIt() {
    Vertx vertx = Vertx.vertx();
    try {
      HttpDownstream down = new HttpDownstream(vertx, "http://127.0.0.1:1/batch", 1_000,
          HttpDownstream.DEFAULT_MAX_RESPONSE_BYTES, null, null, 1, 4_000);
      assertEquals(4_000, down.idleLimitMs(-1));
      assertEquals(4_000, down.idleLimitMs(5)); // Node.js: 5 s less a second
      assertEquals(2_000, down.idleLimitMs(3));
      assertEquals(0, down.idleLimitMs(1)); // no idle reuse at all
      assertEquals(0, down.idleLimitMs(0));
      assertEquals(4_000, down.idleLimitMs(600)); // never raised
      assertEquals(4_000, down.idleLimitMs(999_999_999));
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().join();
    }
  }
}
