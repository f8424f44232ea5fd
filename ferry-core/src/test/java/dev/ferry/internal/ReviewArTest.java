package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.FerryConfig;
import dev.ferry.FerryException;
import dev.ferry.FerryMetrics;
import dev.ferry.Dispatch;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Completable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review AR: the owner's close (undeploy, Vert.x close) gives up the calls still in flight, one of
 * them already past its call timeout (its callers failed then, the call still on the wire). Each
 * caller is answered exactly once, the counts move once, and a probe hears no end of a call it
 * heard time out, only the close; the calls' late completions change nothing. Both engines share
 * this path ({@link EngineCore#maybeFinish}), so both are pinned. Review AS: the call given up with
 * its callers waiting is a failed batch, counted at the close (it was not counted at all); the
 * close's one log line is pinned in {@link ReviewAsTest} (ADR 0171).
 */
class ReviewArTest {

  /** Every answer a caller got, in order, as "label KIND Cause" or "label ok". */
  private final List<String> answers = new ArrayList<>();
  /** What the probe heard, in order. */
  private final List<String> heard = new ArrayList<>();

  private <O> Completable<O> answer(String label) {
    return (result, failure) -> answers.add(failure == null ? label + " ok"
        : label + " " + ((FerryException) failure).kind() + " " + failure.getCause().getClass().getSimpleName());
  }

  private Probe recorder() {
    return new Probe() {
      @Override
      public void batchStarted(boolean direct, int size, long weight, long[] waitsNanos) {
        heard.add("started");
      }

      @Override
      public void batchFinished(long latencyNanos, boolean failed) {
        heard.add("finished");
      }

      @Override
      public void batchFailed(Object key, List<?> inputs, Throwable cause) {
        heard.add("failed " + inputs);
      }

      @Override
      public void callOverdue() {
        heard.add("overdue");
      }

      @Override
      public void overdueCallEnded() {
        heard.add("overdue ended");
      }

      @Override
      public void closed() {
        heard.add("closed");
      }
    };
  }

  @Test
  void perKey_theOwnersCloseAnswersACallPastItsTimeoutOnceAndTellsNoEndOfIt() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<String, PerKeyHarness.In> down = new RecordingDownstream<>(loop);
    PerKeyFerry<String, PerKeyHarness.In, List<PerKeyHarness.In>, String> ferry = new PerKeyFerry<>(loop,
        PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).maxInFlightBatches(2)
            .callTimeout(Duration.ofMillis(100)).drainTimeout(Duration.ofMillis(10)).build(),
        PerKeyHarness.In::key, PerKeyHarness.In::weight, null, down, (in, result) -> in.label());
    ferry.observe(recorder());
    loop.runPending();
    ferry.submit(PerKeyHarness.In.of("a", "a1"), 0, answer("a1"));
    loop.runPending();
    loop.advanceMillis(100); // a1's call is past its timeout, still on the wire
    ferry.submit(PerKeyHarness.In.of("b", "b1"), 0, answer("b1"));
    loop.runPending();
    assertEquals(List.of("a1 FAILED TimeoutException"), answers);

    int[] closed = loop.closeOwner();
    loop.runPending();
    loop.advanceMillis(10); // the owner's drain runs out: both calls are given up
    assertEquals(1, closed[0], "the ferry closed");
    // Both calls complete late: they were given up, nothing more is answered, counted or told.
    down.succeed(0);
    down.succeed(1);
    loop.runPending();

    assertEquals(List.of("a1 FAILED TimeoutException", "b1 FAILED CancellationException"), answers,
        "each caller answered once: a1 at its timeout only, b1 when the owner gave its call up");
    assertEquals(List.of("started", "overdue", "failed [a1]", "started", "closed"), heard,
        "no end told of a given-up call, and no second timeout of a1");
    FerryMetrics m = ferry.metrics();
    assertEquals(2, m.failedBatches(), "a1's call counted once, at its timeout; b1's once, at the close");
    assertEquals(0, m.inFlightBatches());
    assertEquals(0, m.activeLanes());
    assertEquals(0, ferry.engine().callsPastTimeout(), "no call of a closed ferry is past its timeout");
    assertEquals(0, loop.liveTimers());

    // A probe added now hears the close only: no overdue call is replayed to it.
    List<String> late = new ArrayList<>();
    ferry.observe(new Probe() {
      @Override
      public void callOverdue() {
        late.add("overdue");
      }

      @Override
      public void closed() {
        late.add("closed");
      }
    });
    loop.runPending();
    assertEquals(List.of("closed"), late);
  }

  @Test
  void stream_theOwnersCloseAnswersACallPastItsTimeoutOnceAndTellsNoEndOfIt() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<Void, String> down = new RecordingDownstream<>(loop);
    StreamFerry<String, List<String>, String> ferry = new StreamFerry<>(loop,
        FerryConfig.builder().maxInFlightBatches(2).maxBatchSize(1)
            .callTimeout(Duration.ofMillis(100)).drainTimeout(Duration.ofMillis(10)).build(),
        null, inputs -> down.call(null, inputs), (in, result) -> in);
    ferry.observe(recorder());
    loop.runPending();
    ferry.submit("x1", 0, answer("x1"));
    loop.runPending();
    loop.advanceMillis(100);
    ferry.submit("y1", 0, answer("y1"));
    loop.runPending();
    assertEquals(List.of("x1 FAILED TimeoutException"), answers);

    loop.closeOwner();
    loop.runPending();
    loop.advanceMillis(10);
    down.succeed(0);
    down.succeed(1);
    loop.runPending();

    assertEquals(List.of("x1 FAILED TimeoutException", "y1 FAILED CancellationException"), answers);
    assertEquals(List.of("started", "overdue", "failed [x1]", "started", "closed"), heard);
    FerryMetrics m = ferry.metrics();
    assertEquals(2, m.failedBatches());
    assertEquals(0, m.inFlightBatches());
    assertEquals(0, ferry.engine().callsPastTimeout());
    assertEquals(0, loop.liveTimers());
  }
}
