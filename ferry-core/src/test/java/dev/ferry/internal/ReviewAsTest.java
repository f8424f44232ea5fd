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

  // ------------------------------------------------------------- the owner's close (ADR 0171)

  private final List<String> heard = new ArrayList<>();

  private Probe recorder() {
    return new Probe() {
      @Override
      public void batchStarted(boolean direct, int size, long weight, long[] waitsNanos) {
        heard.add("started " + size);
      }

      @Override
      public void batchFinished(long latencyNanos, boolean failed) {
        heard.add("finished");
      }

      @Override
      public void batchFailed(Object key, List<?> inputs, Throwable cause) {
        heard.add("failed " + key);
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
      public void timedOut() {
        heard.add("timed out");
      }

      @Override
      public void heldUp() {
        heard.add("held up");
      }

      @Override
      public void closed() {
        heard.add("closed");
      }
    };
  }

  /** WARNING lines of the ferry's own loggers, as the log shows them. */
  private static List<String> warnings(Runnable act) {
    List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.logging.Logger ferryLogs = java.util.logging.Logger.getLogger("dev.ferry");
    java.util.logging.Handler capture = new java.util.logging.Handler() {
      @Override
      public void publish(java.util.logging.LogRecord r) {
        if (r.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue()) {
          lines.add(new java.util.logging.SimpleFormatter().formatMessage(r));
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    ferryLogs.addHandler(capture);
    try {
      act.run();
    } finally {
      ferryLogs.removeHandler(capture);
    }
    return lines;
  }

  /**
   * The owner closes with two calls on the wire (keys a and b), neither past its timeout, and one
   * past it (key c): the two are failed batches now (they counted nowhere: their callers got 502
   * and failedBatches said nothing), c's was counted at its timeout and is not counted again. One
   * WARNING line names them all, and no batchFailed is told per call; the late answers, good and
   * failed, count and log nothing more.
   */
  @Test
  void perKey_theOwnersCloseCountsEachCallItGivesUpOnceAndLogsThemInOneLine() throws InterruptedException {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<String, PerKeyHarness.In> down = new RecordingDownstream<>(loop);
    PerKeyFerry<String, PerKeyHarness.In, List<PerKeyHarness.In>, String> ferry = new PerKeyFerry<>(loop,
        PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).maxInFlightBatches(3).maxBatchDelay(Duration.ofMillis(1))
            .callTimeout(Duration.ofMillis(100)).drainTimeout(Duration.ofMillis(10)).build(),
        PerKeyHarness.In::key, PerKeyHarness.In::weight, null, down, (in, result) -> in.label());
    ferry.observe(recorder());
    loop.runPending();
    ferry.submit(PerKeyHarness.In.of("c", "c1"));
    loop.advanceMillis(1); // c's call leaves
    loop.advanceMillis(100); // and is past its timeout: failed and counted now, still on the wire
    assertEquals(1, ferry.metrics().failedBatches());
    ferry.submit(PerKeyHarness.In.of("a", "a1"));
    ferry.submit(PerKeyHarness.In.of("a", "a2"));
    ferry.submit(PerKeyHarness.In.of("b", "b1"));
    loop.advanceMillis(1); // a's two inputs leave in one call, b's in another
    assertEquals(3, down.calls.size());

    List<String> logged = warnings(() -> {
      loop.closeOwner();
      loop.runPending();
      loop.advanceMillis(10); // the owner's drain runs out: the three calls are given up
    });
    assertEquals(List.of("ferry: its owner closed with the calls of 2 key(s) still on the wire: given up, their 3"
        + " input(s) answered FAILED, which may have been applied; 1 call past its timeout, answered then, given"
        + " up too"), logged);
    heard.removeIf("held up"::equals); // c's call past its timeout while a's and b's waited their delay
    assertEquals(List.of("started 1", "overdue", "failed c", "started 2", "started 1", "closed"), heard,
        "no batchFailed told per call given up, no end of any");
    assertEquals(3, ferry.metrics().failedBatches(), "c's counted at its timeout, a's and b's at the close");
    assertEquals(3, offTheLoop(ferry).failedBatches(), "and published so");

    List<String> late = warnings(() -> {
      down.succeed(0);
      down.succeed(1);
      down.fail(2, new IllegalStateException("late failure"));
      loop.runPending();
    });
    assertEquals(List.of(), late);
    assertEquals(3, ferry.metrics().failedBatches(), "late answers after the close count nothing more");
    assertEquals(List.of("started 1", "overdue", "failed c", "started 2", "started 1", "closed"), heard);
  }

  /** A stream ferry's close gives up its call (no key to name), and with nothing on the wire logs nothing. */
  @Test
  void stream_anOwnersCloseLogsTheCallsItGivesUpAndNothingWhenThereAreNone() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<Void, String> down = new RecordingDownstream<>(loop);
    StreamFerry<String, List<String>, String> ferry = new StreamFerry<>(loop,
        FerryConfig.builder().maxInFlightBatches(2).drainTimeout(Duration.ofMillis(10)).build(),
        null, inputs -> down.call(null, inputs), (in, result) -> in);
    ferry.observe(recorder());
    loop.runPending();
    ferry.submit("x1");
    loop.runPending();
    down.succeed(0);
    loop.runPending();
    List<String> logged = warnings(() -> {
      loop.closeOwner();
      loop.runPending();
      loop.advanceMillis(10);
    });
    assertEquals(List.of(), logged, "nothing was on the wire");
    assertEquals(List.of("started 1", "finished", "closed"), heard);
    assertEquals(0, ferry.metrics().failedBatches());

    VirtualLoop loop2 = new VirtualLoop();
    RecordingDownstream<Void, String> down2 = new RecordingDownstream<>(loop2);
    StreamFerry<String, List<String>, String> ferry2 = new StreamFerry<>(loop2,
        FerryConfig.builder().maxInFlightBatches(1).drainTimeout(Duration.ofMillis(10)).build(),
        null, inputs -> down2.call(null, inputs), (in, result) -> in);
    loop2.runPending();
    ferry2.submit("y1");
    ferry2.submit("y2");
    loop2.runPending();
    assertEquals(1, down2.calls.size(), "y1's call; y2 waits for the one slot");
    List<String> logged2 = warnings(() -> {
      loop2.closeOwner();
      loop2.runPending();
      loop2.advanceMillis(10);
    });
    assertEquals(List.of("ferry: its owner closed with 1 call(s) still on the wire: given up, their 1 input(s)"
        + " answered FAILED, which may have been applied"),
        logged2);
    assertEquals(1, ferry2.metrics().failedBatches());
  }

  /** The close's line names only what it holds: no "0 call(s)" part, in any of its forms. */
  @Test
  void theClosesLineNamesOnlyWhatItHolds() {
    assertEquals("ferry: its owner closed with 2 calls past their timeout still on the wire: given up; their"
        + " inputs were answered FAILED at the timeout, and may have been applied", Driver.gaveUpText(0, 0, 0, 2));
    assertEquals("ferry: its owner closed with 1 call past its timeout still on the wire: given up; their"
        + " inputs were answered FAILED at the timeout, and may have been applied", Driver.gaveUpText(0, 0, 0, 1));
    assertEquals("ferry: its owner closed with the calls of 3 key(s) still on the wire: given up, their 7"
        + " input(s) answered FAILED, which may have been applied", Driver.gaveUpText(3, 3, 7, 0));
    assertEquals("ferry: its owner closed with 2 call(s) still on the wire: given up, their 4 input(s) answered"
        + " FAILED, which may have been applied; 2 calls past their timeout, answered then, given up too",
        Driver.gaveUpText(2, 0, 4, 2));
  }

  // ------------------------------------------------ held up, told without asking (ADR 0171)

  /**
   * A call past its timeout holds its key; an input with a short deadline waits behind it and
   * expires. The transition that expires it begins with the state "a call past its timeout holds
   * the wire while an input waits", and the probes hear so first, before the input's timeout: a
   * health check latches on it though nobody asked while the input waited. The hung call's late end
   * with another input waiting is told so too; a transition that begins with nothing waiting is not.
   */
  @Test
  void perKey_aTransitionThatBeginsWithACallPastItsTimeoutAndInputsWaitingIsToldFirst() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<String, PerKeyHarness.In> down = new RecordingDownstream<>(loop);
    PerKeyFerry<String, PerKeyHarness.In, List<PerKeyHarness.In>, String> ferry = new PerKeyFerry<>(loop,
        PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).maxInFlightBatches(1)
            .callTimeout(Duration.ofMillis(100)).build(),
        PerKeyHarness.In::key, PerKeyHarness.In::weight, null, down, (in, result) -> in.label());
    ferry.observe(recorder());
    loop.runPending();
    ferry.submit(PerKeyHarness.In.of("a", "a1"));
    loop.runPending();
    loop.advanceMillis(100);
    ferry.submit(PerKeyHarness.In.of("a", "a2"), Duration.ofMillis(50)); // waits for its key
    loop.runPending();
    assertEquals(List.of("started 1", "overdue", "failed a"), heard, "nothing waited before a2's own submit");
    loop.advanceMillis(50);
    assertEquals(List.of("started 1", "overdue", "failed a", "held up", "timed out"), heard,
        "a2's expiry began with a1's call past its timeout and a2 waiting: told before a2's timeout");
    ferry.submit(PerKeyHarness.In.of("a", "a3"));
    loop.runPending();
    heard.clear();
    down.succeed(0); // a1's call answers late, a3 waiting behind it
    loop.runPending();
    assertEquals(List.of("held up", "finished", "overdue ended", "started 1"), heard);
    heard.clear();
    down.succeed(1);
    loop.runPending();
    assertEquals(List.of("finished"), heard, "nothing past its timeout any more");
  }
}
