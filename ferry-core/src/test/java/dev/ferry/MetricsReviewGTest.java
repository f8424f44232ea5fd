package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.internal.StreamFerry;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Review G: what a make ferry's metrics say against what its engine holds. */
class MetricsReviewGTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final RecordingDownstream<Void, String> down = new RecordingDownstream<>(loop);

  private Ferry<String, String> make(FerryConfig.Builder config) {
    return new StreamFerry<>(loop, config.build(), null, inputs -> down.call(null, inputs), (in, result) -> in);
  }

  /**
   * FerryMetrics documents callsWaiting for make as the batches ready to leave but held back by
   * the call limit (maxInFlightBatches); it read 0 while the only slot was busy and a batch waited
   * for it, so {@code ferry.calls.waiting} never showed a make ferry at its limit.
   */
  @Test
  void aMakeFerryCountsTheBatchHeldBackByItsBusySlots() {
    Ferry<String, String> ferry = make(FerryConfig.builder().maxInFlightBatches(1));
    ferry.submit("a"); // takes the slot
    assertEquals(0, ferry.metrics().callsWaiting(), "nothing waits");
    ferry.submit("b");
    ferry.submit("c");
    assertEquals(1, down.calls.size());
    assertEquals(1, ferry.metrics().callsWaiting(), "b and c are ready to leave, held back by the busy slot");
    down.succeed(0);
    loop.runPending();
    assertEquals(2, down.calls.size(), "b and c left together");
    assertEquals(0, ferry.metrics().callsWaiting());
  }

  /** With a batch delay, inputs still waiting for company are not held back by the limit. */
  @Test
  void aMakeFerrysInputsWaitingForTheirDelayAreNotCountedAsHeldBack() {
    Ferry<String, String> ferry = make(FerryConfig.builder().maxInFlightBatches(1).maxBatchDelay(Duration.ofMillis(10)));
    ferry.submit("a");
    loop.advanceMillis(10); // a leaves, the slot is busy
    assertEquals(1, down.calls.size());
    ferry.submit("b");
    assertEquals(0, ferry.metrics().callsWaiting(), "b waits for its delay, not for the slot");
    loop.advanceMillis(10);
    assertEquals(1, ferry.metrics().callsWaiting(), "b's delay is over: only the busy slot holds it back");
    down.succeed(0);
    loop.runPending();
    assertEquals(2, down.calls.size());
    assertEquals(0, ferry.metrics().callsWaiting());
  }
}
