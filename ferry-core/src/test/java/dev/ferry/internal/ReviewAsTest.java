package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.Dispatch;
import dev.ferry.Ferry;
import dev.ferry.FerryConfig;
import dev.ferry.FerryMetrics;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Review AS: the calls past their timeout are one count, the engine's, published in the ferry's
 * snapshot ({@link FerryMetrics#callsPastTimeout()}, ADR 0170) for every reader: the gauge, {@code
 * ferry.metrics} and health, on the ferry's loop or off it.
 */
class ReviewAsTest {

  /** The snapshot as a thread other than the loop reads it: the figures published last. */
  private static FerryMetrics offTheLoop(Ferry<?, ?> ferry) throws InterruptedException {
    AtomicReference<FerryMetrics> read = new AtomicReference<>();
    Thread reader = new Thread(() -> read.set(ferry.metrics()));
    reader.start();
    reader.join();
    return read.get();
  }

  private static void pastTimeout(Ferry<?, ?> ferry, int expected, String why) throws InterruptedException {
    assertEquals(expected, ferry.metrics().callsPastTimeout(), why + " (on the loop)");
    assertEquals(expected, offTheLoop(ferry).callsPastTimeout(), why + " (published)");
    assertEquals(expected, ferry.metrics().toJson().getInteger("callsPastTimeout"), why + " (its JSON)");
  }

  @Test
  void perKey_theSnapshotCountsTheCallsPastTheirTimeoutStillOnTheWire() throws InterruptedException {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<String, PerKeyHarness.In> down = new RecordingDownstream<>(loop);
    PerKeyFerry<String, PerKeyHarness.In, List<PerKeyHarness.In>, String> ferry = new PerKeyFerry<>(loop,
        PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).maxInFlightBatches(2)
            .callTimeout(Duration.ofMillis(100)).build(),
        PerKeyHarness.In::key, PerKeyHarness.In::weight, null, down, (in, result) -> in.label());
    loop.runPending();
    ferry.submit(PerKeyHarness.In.of("a", "a1"));
    loop.runPending();
    loop.advanceMillis(50);
    ferry.submit(PerKeyHarness.In.of("b", "b1"));
    loop.runPending();
    pastTimeout(ferry, 0, "two calls on the wire, neither past its timeout");
    loop.advanceMillis(50);
    pastTimeout(ferry, 1, "a's call is past its timeout, still on the wire");
    loop.advanceMillis(50);
    pastTimeout(ferry, 2, "both are");
    down.succeed(0);
    loop.runPending();
    pastTimeout(ferry, 1, "a's late answer ends its call");
    down.fail(1, new IllegalStateException("late failure"));
    loop.runPending();
    pastTimeout(ferry, 0, "and b's late failure its");
    assertEquals(2, ferry.metrics().failedBatches(), "each counted once, at its timeout");
  }

  @Test
  void stream_theSnapshotCountsTheCallsPastTheirTimeoutStillOnTheWire() throws InterruptedException {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<Void, String> down = new RecordingDownstream<>(loop);
    StreamFerry<String, List<String>, String> ferry = new StreamFerry<>(loop,
        FerryConfig.builder().maxInFlightBatches(2).maxBatchSize(1).callTimeout(Duration.ofMillis(100)).build(),
        null, inputs -> down.call(null, inputs), (in, result) -> in);
    loop.runPending();
    ferry.submit("x1");
    loop.runPending();
    loop.advanceMillis(100);
    pastTimeout(ferry, 1, "x1's call is past its timeout");
    down.succeed(0);
    loop.runPending();
    pastTimeout(ferry, 0, "over");
  }

  @Test
  void keyed_theSnapshotCountsTheCallsPastTheirTimeoutStillOnTheWire() throws InterruptedException {
    VirtualLoop loop = new VirtualLoop();
    List<Promise<Map<String, Integer>>> answers = new ArrayList<>();
    KeyedFerry<String, Integer> ferry = new KeyedFerry<String, Integer>(loop,
        FerryConfig.builder().maxInFlightBatches(1).callTimeout(Duration.ofMillis(100)).build(), keys -> {
          Promise<Map<String, Integer>> p = Promise.promise();
          answers.add(p);
          return p.future();
        });
    loop.runPending();
    ferry.submit("k");
    loop.runPending();
    loop.advanceMillis(100);
    pastTimeout(ferry, 1, "the keyed view passes the queue's count through");
    answers.get(0).complete(Map.of("k", 1));
    loop.runPending();
    pastTimeout(ferry, 0, "over");
  }
}
