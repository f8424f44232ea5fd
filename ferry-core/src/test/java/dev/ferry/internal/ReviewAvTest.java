package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.Dispatch;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review AV: today's changes attacked. {@link Probe#heldUp} is the first event of a transition
 * (ADR 0171), so it is told inside it: code a probe runs then and that re-enters the ferry waits
 * for the transition to end, as it does from every other probe event (ADR 0178).
 */
class ReviewAvTest {

  private final List<String> heard = new ArrayList<>();

  /**
   * A probe whose heldUp submits on the ferry's loop. Told before the transition was marked as
   * running, that submit ran as a whole transition of its own right there: it began with the same
   * state, so heldUp was told twice for one instant, and the transition it announced came after
   * another's events (a4 joined a3 in the call the late end started). Now heldUp is told once,
   * the submit runs after the transition it interrupted, and a4 waits for a3's call.
   */
  @Test
  void perKey_aProbeThatReentersOnHeldUpWaitsForTheTransitionItBegan() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<String, PerKeyHarness.In> down = new RecordingDownstream<>(loop);
    PerKeyFerry<String, PerKeyHarness.In, List<PerKeyHarness.In>, String> ferry = new PerKeyFerry<>(loop,
        PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).maxInFlightBatches(1)
            .callTimeout(Duration.ofMillis(100)).build(),
        PerKeyHarness.In::key, PerKeyHarness.In::weight, null, down, (in, result) -> in.label());
    boolean[] reentered = {false};
    ferry.observe(new Probe() {
      @Override
      public void batchStarted(boolean direct, int size, long weight, long[] waitsNanos) {
        heard.add("started " + size);
      }

      @Override
      public void batchFinished(long latencyNanos, boolean failed) {
        heard.add("finished");
      }

      @Override
      public void overdueCallEnded() {
        heard.add("overdue ended");
      }

      @Override
      public void heldUp() {
        heard.add("held up");
        if (!reentered[0] && armed[0]) {
          reentered[0] = true;
          ferry.submit(PerKeyHarness.In.of("a", "a4"));
        }
      }
    });
    loop.runPending();
    ferry.submit(PerKeyHarness.In.of("a", "a1"));
    loop.runPending();
    loop.advanceMillis(100); // a1's call is past its timeout, still on the wire
    ferry.submit(PerKeyHarness.In.of("a", "a3")); // waits behind it
    loop.runPending();
    heard.clear();
    armed[0] = true;
    down.succeed(0); // a1's call ends late, a3 waiting
    loop.runPending();
    assertEquals(List.of("held up", "finished", "overdue ended", "started 1"), heard,
        "told once, then the transition it announced; the probe's submit after it");
    assertEquals(2, down.calls.size());
    assertEquals(List.of("a3"), down.calls.get(1).inputs.stream().map(PerKeyHarness.In::label).toList());
    down.succeed(1);
    loop.runPending();
    assertEquals(3, down.calls.size(), "a4's call, after a3's");
    assertEquals(List.of("a4"), down.calls.get(2).inputs.stream().map(PerKeyHarness.In::label).toList());
  }

  private final boolean[] armed = {false};
}
