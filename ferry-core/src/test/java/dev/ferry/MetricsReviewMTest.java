package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review M: the guides say {@code callLimit} is the limit in force, starting at 1 with adaptive
 * dispatch (or the pinned limit) and {@code maxInFlightBatches} with fixed slots, make and keyed.
 * Read off the ferry's loop (a registry scraped on another thread) before the ferry's first
 * transition, it read 0: nothing had been published yet, so {@code ferry.call.limit} showed 0
 * after a deploy instead of the slow start from 1.
 */
class MetricsReviewMTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private Ferry<String, String> perKey(PerKeyConfig config) {
    return Ferry.perKey(vertx, config, s -> s, (String k, List<String> b) -> Future.succeededFuture(b), (i, r) -> i);
  }

  @Test
  void aNewFerrysMetricsReadOffItsLoopShowItsCallLimit() {
    assertEquals(1, perKey(PerKeyConfig.defaults()).metrics().callLimit(), "adaptive: starts at 1");
    assertEquals(7, perKey(PerKeyConfig.builder().pinnedLimit(7).build()).metrics().callLimit(), "pinned");
    assertEquals(16, perKey(PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).build()).metrics().callLimit(),
        "fixed slots: maxInFlightBatches");
    assertEquals(16, Ferry.make(vertx, FerryConfig.defaults(), (List<String> in) -> Future.succeededFuture(in), (i, r) -> i)
        .metrics().callLimit(), "make: maxInFlightBatches");
    assertEquals(3, Ferry.keyed(vertx, FerryConfig.builder().maxInFlightBatches(3).build(),
        (List<String> keys) -> Future.succeededFuture(Map.<String, String>of())).metrics().callLimit(), "keyed: maxInFlightBatches");
  }
}
