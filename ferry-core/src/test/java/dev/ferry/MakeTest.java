package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.StreamFerry;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/** {@code Ferry.make} in virtual time: the real engine and driver, driven deterministically. */
class MakeTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final RecordingDownstream<Void, String> down = new RecordingDownstream<>(loop);

  private Ferry<String, String> make(FerryConfig.Builder config) {
    return make(config, null);
  }

  /** Outcome of an input: the input and the size of the batch it travelled in. */
  private Ferry<String, String> make(FerryConfig.Builder config, ToLongFunction<String> weigh) {
    return new StreamFerry<>(loop, config.build(), weigh, inputs -> down.call(null, inputs),
        (in, result) -> result.contains(in) ? in + "/" + result.size() : "missing");
  }

  private static FerryConfig.Builder oneSlot() {
    return FerryConfig.builder().maxInFlightBatches(1);
  }

  private List<List<String>> sent() {
    return down.calls.stream().map(c -> c.inputs).toList();
  }

  static FerryError kind(Future<?> f) {
    assertTrue(f.failed(), "expected a failure, got " + f);
    return ((FerryException) f.cause()).kind();
  }

  private static final ToLongFunction<String> LENGTH = String::length;

  // ------------------------------------------------------------ forming batches

  @Test
  void withNoDelayTheFirstInputLeavesAtOnceAndTheRestLeaveTogetherWhenTheSlotFrees() {
    Ferry<String, String> ferry = make(oneSlot());
    Future<String> a = ferry.submit("a");
    assertEquals(List.of(List.of("a")), sent());
    Future<String> b = ferry.submit("b");
    ferry.submit("c");
    ferry.submit("d");
    assertEquals(1, down.calls.size(), "no batch may form while every slot is busy");
    assertEquals(3, ferry.metrics().queuedInputs());

    down.succeed(0);
    assertEquals("a/1", a.result());
    assertEquals(List.of("b", "c", "d"), sent().get(1));
    down.succeed(1);
    assertEquals("b/3", b.result());
  }

  @Test
  void twoFreeSlotsNeverSplitWhatWaits() {
    Ferry<String, String> ferry = make(FerryConfig.builder().maxInFlightBatches(2));
    ferry.submit("a");
    ferry.submit("b");
    for (String s : List.of("c", "d", "e")) {
      ferry.submit(s);
    }
    down.succeed(0); // frees one slot: everything waiting leaves in it
    down.succeed(1); // frees the other: nothing is left to send
    assertEquals(List.of(List.of("a"), List.of("b"), List.of("c", "d", "e")), sent());
  }

  @Test
  void withADelayFreeSlotsStillFormOneBatch() {
    Ferry<String, String> ferry = make(FerryConfig.builder().maxInFlightBatches(3)
        .maxBatchDelay(Duration.ofMillis(50)));
    ferry.submit("a");
    loop.advanceMillis(10);
    ferry.submit("b");
    loop.advanceMillis(10);
    ferry.submit("c");
    loop.advanceMillis(29);
    assertEquals(0, down.calls.size());
    loop.advanceMillis(1);
    assertEquals(List.of(List.of("a", "b", "c")), sent());
  }

  @Test
  void theDelayCountsFromTheOldestInputsArrival() {
    Ferry<String, String> ferry = make(oneSlot().maxBatchDelay(Duration.ofMillis(100)));
    long t0 = loop.nanoTime();
    ferry.submit("a");
    loop.advanceMillis(60);
    ferry.submit("b"); // must not push the departure back
    loop.advanceMillis(39);
    assertEquals(0, down.calls.size());
    loop.advanceMillis(1);
    assertEquals(List.of(List.of("a", "b")), sent());
    assertEquals(Duration.ofMillis(100).toNanos(), down.calls.get(0).start - t0);
  }

  @Test
  void anInputThatWaitedWhileEverySlotWasBusyLeavesAsSoonAsOneFrees() {
    Ferry<String, String> ferry = make(oneSlot().maxBatchDelay(Duration.ofMillis(100)));
    ferry.submit("a");
    loop.advanceMillis(100); // a leaves at t=100
    loop.advanceMillis(10);
    ferry.submit("b"); // t=110, due at 210, but the slot is busy
    loop.advanceMillis(190);
    down.succeed(0); // t=300: b has waited past its delay
    assertEquals(2, down.calls.size());
    assertEquals(List.of("b"), down.calls.get(1).inputs);
    assertEquals(down.calls.get(0).end, down.calls.get(1).start);
  }

  @Test
  void anInputNotYetDueWhenTheSlotFreesStillWaitsForItsOwnDelay() {
    Ferry<String, String> ferry = make(oneSlot().maxBatchDelay(Duration.ofMillis(100)));
    ferry.submit("a");
    loop.advanceMillis(100);
    loop.advanceMillis(150);
    ferry.submit("b"); // t=250, due at 350
    loop.advanceMillis(50);
    down.succeed(0); // t=300: not due yet
    assertEquals(1, down.calls.size());
    loop.advanceMillis(49);
    assertEquals(1, down.calls.size());
    loop.advanceMillis(1);
    assertEquals(List.of("b"), down.calls.get(1).inputs);
  }

  @Test
  void aFullBatchLeavesWithoutWaitingForTheDelay() {
    Ferry<String, String> ferry = make(FerryConfig.builder().maxBatchSize(3)
        .maxBatchDelay(Duration.ofSeconds(10)));
    ferry.submit("a");
    ferry.submit("b");
    assertEquals(0, down.calls.size());
    ferry.submit("c");
    assertEquals(List.of(List.of("a", "b", "c")), sent());
  }

  @Test
  void aBatchFullByWeightLeavesWithoutWaitingForTheDelay() {
    Ferry<String, String> ferry = make(FerryConfig.builder().maxBatchWeight(5)
        .maxBatchDelay(Duration.ofSeconds(10)), LENGTH);
    ferry.submit("aa");
    assertEquals(0, down.calls.size());
    ferry.submit("bbb");
    assertEquals(List.of(List.of("aa", "bbb")), sent());
  }

  // ------------------------------------------------------------ bounds

  @Test
  void batchesNeverExceedMaxBatchSize() {
    Ferry<String, String> ferry = make(oneSlot().maxBatchSize(2));
    for (String s : List.of("a", "b", "c", "d", "e")) {
      ferry.submit(s);
    }
    down.succeed(0);
    down.succeed(1);
    assertEquals(List.of(List.of("a"), List.of("b", "c"), List.of("d", "e")), sent());
  }

  @Test
  void batchesNeverExceedMaxBatchWeight() {
    Ferry<String, String> ferry = make(oneSlot().maxBatchWeight(5), LENGTH);
    for (String s : List.of("x", "aa", "bbb", "cc")) {
      ferry.submit(s);
    }
    down.succeed(0);
    down.succeed(1);
    assertEquals(List.of(List.of("x"), List.of("aa", "bbb"), List.of("cc")), sent());
  }

  @Test
  void aSingleInputHeavierThanMaxBatchWeightTravelsAlone() {
    Ferry<String, String> ferry = make(oneSlot().maxBatchWeight(3), LENGTH);
    ferry.submit("x");
    Future<String> heavy = ferry.submit("hhhhhh");
    ferry.submit("y");
    down.succeed(0);
    down.succeed(1);
    assertEquals(List.of(List.of("x"), List.of("hhhhhh"), List.of("y")), sent());
    assertEquals("hhhhhh/1", heavy.result());
  }

  @Test
  void aFullQueueByCountRejectsAtOnceAndSendsNothingOfIt() {
    Ferry<String, String> ferry = make(oneSlot().maxQueueing(2));
    ferry.submit("a");
    ferry.submit("b");
    ferry.submit("c");
    Future<String> d = ferry.submit("d");
    assertEquals(FerryError.REJECTED, kind(d));
    assertEquals(1, ferry.metrics().rejected());
    down.succeed(0);
    assertEquals(List.of("b", "c"), sent().get(1));
  }

  @Test
  void aFullQueueByWeightRejectsAtOnce() {
    Ferry<String, String> ferry = make(oneSlot().maxQueuedWeight(5), LENGTH);
    ferry.submit("x");
    ferry.submit("aaa");
    assertEquals(FerryError.REJECTED, kind(ferry.submit("bbb")));
    Future<String> fits = ferry.submit("bb");
    assertFalse(fits.isComplete());
    assertEquals(5, ferry.metrics().queuedWeight());
  }

  // ------------------------------------------------------------ deadlines and call timeout

  @Test
  void anExpiredInputIsDroppedAtItsDeadlineAndNeverSent() {
    Ferry<String, String> ferry = make(oneSlot());
    ferry.submit("a");
    Future<String> b = ferry.submit("b", Duration.ofMillis(50));
    loop.advanceMillis(49);
    assertFalse(b.isComplete());
    loop.advanceMillis(1);
    assertEquals(FerryError.TIMEOUT, kind(b));
    assertEquals(0, ferry.metrics().queuedInputs());
    down.succeed(0);
    assertEquals(1, down.calls.size());
    assertEquals(1, ferry.metrics().timedOut());
  }

  @Test
  void anInputPastItsDeadlineIsNotTakenEvenBeforeItsTimerRuns() {
    Ferry<String, String> ferry = make(oneSlot());
    ferry.submit("a");
    // This timer is set before b's deadline timer, so at t=100 it runs first: the slot frees
    // while b's deadline has passed but b has not been expired yet.
    loop.schedule(Duration.ofMillis(100).toNanos(), () -> down.succeed(0));
    Future<String> b = ferry.submit("b", Duration.ofMillis(100));
    Future<String> c = ferry.submit("c");
    loop.advanceMillis(100);
    assertEquals(FerryError.TIMEOUT, kind(b));
    assertEquals(List.of(List.of("a"), List.of("c")), sent());
    assertFalse(c.isComplete());
  }

  @Test
  void anInputPastItsDeadlineWhenTheBatchFormsDoesNotEndTheBatch() {
    Ferry<String, String> ferry = make(oneSlot().maxBatchWeight(5), LENGTH);
    ferry.submit("a");
    ferry.submit("bb");
    Future<String> late = ferry.submit("ccccc", Duration.ofMillis(50));
    ferry.submit("dd");
    loop.stallMillis(100); // the deadline passes while the loop is busy: its timer has not run
    down.succeed(0);
    assertEquals(FerryError.TIMEOUT, kind(late));
    assertEquals(List.of(List.of("a"), List.of("bb", "dd")), sent());
    assertEquals(0, ferry.metrics().queuedInputs());
  }

  @Test
  void aCallTimeoutFailsItsCallersButHoldsTheSlotUntilTheCallIsOver() {
    Ferry<String, String> ferry = make(oneSlot().callTimeout(Duration.ofMillis(100)));
    Future<String> a = ferry.submit("a");
    Future<String> b = ferry.submit("b");
    loop.advanceMillis(100);
    assertEquals(FerryError.FAILED, kind(a));
    assertInstanceOf(java.util.concurrent.TimeoutException.class, a.cause().getCause(),
        "FAILED carries its cause: a timeout, the outcome unknown");
    assertEquals(1, down.calls.size(), "the slot is still held by the overdue call");
    assertEquals(1, ferry.metrics().inFlightBatches());
    assertEquals(1, ferry.metrics().failedBatches());
    down.succeed(0);
    assertEquals(FerryError.FAILED, kind(a), "a late answer changes nothing");
    assertEquals(List.of("b"), sent().get(1));
    assertFalse(b.isComplete());
  }

  // ------------------------------------------------------------ failures and bad input

  @Test
  void aFailedCallFailsEveryCallerOfItsBatchWithTheCause() {
    Ferry<String, String> ferry = make(oneSlot());
    ferry.submit("a");
    Future<String> b = ferry.submit("b");
    Future<String> c = ferry.submit("c");
    down.succeed(0);
    RuntimeException boom = new RuntimeException("boom");
    down.fail(1, boom);
    assertEquals(FerryError.FAILED, kind(b));
    assertEquals(FerryError.FAILED, kind(c));
    assertSame(boom, b.cause().getCause());
    assertEquals(1, ferry.metrics().failedBatches());
  }

  @Test
  void aCallThatThrowsOrReturnsNullFailsItsBatchAndFreesTheSlot() {
    int[] n = {0};
    Ferry<String, String> ferry = new StreamFerry<String, String, String>(loop, oneSlot().build(), null,
        inputs -> {
          if (n[0]++ == 0) {
            throw new IllegalStateException("thrown");
          }
          return null;
        }, (in, r) -> r);
    assertEquals(FerryError.FAILED, kind(ferry.submit("a")));
    assertEquals(FerryError.FAILED, kind(ferry.submit("b")));
    assertEquals(0, ferry.metrics().inFlightBatches());
  }

  @Test
  void anExtractThatThrowsFailsOnlyThatCaller() {
    Ferry<String, String> ferry = new StreamFerry<String, List<String>, String>(loop, oneSlot().build(), null,
        inputs -> down.call(null, inputs), (in, r) -> {
          if (in.equals("bad")) {
            throw FerryException.inputRejected("no");
          }
          return in;
        });
    ferry.submit("x");
    Future<String> bad = ferry.submit("bad");
    Future<String> good = ferry.submit("good");
    down.succeed(0);
    down.succeed(1);
    assertEquals(FerryError.INPUT_REJECTED, kind(bad));
    assertEquals("good", good.result());
  }

  @Test
  void badInputFailsAtOnceAndDisturbsNothing() {
    Ferry<String, String> ferry = make(oneSlot(), s -> {
      if (s.equals("throw")) {
        throw new IllegalArgumentException("cannot weigh");
      }
      return s.equals("negative") ? -1 : 1;
    });
    assertEquals(FerryError.BAD_INPUT, kind(ferry.submit(null)));
    assertEquals(FerryError.BAD_INPUT, kind(ferry.submit("throw")));
    assertEquals(FerryError.BAD_INPUT, kind(ferry.submit("negative")));
    assertEquals(FerryError.BAD_INPUT, kind(ferry.submit("a", Duration.ZERO)));
    assertEquals(FerryError.BAD_INPUT, kind(ferry.submit("a", Duration.ofMillis(-1))));
    assertEquals(0, down.calls.size());
    assertEquals(0, ferry.metrics().submitted());
    assertEquals("ok/1", sendOne(ferry, "ok"));
  }

  private String sendOne(Ferry<String, String> ferry, String input) {
    Future<String> f = ferry.submit(input);
    down.succeedAll();
    return f.result();
  }

  // ------------------------------------------------------------ close and drain

  @Test
  void closeFailsWhatWaitsLetsCallsInFlightDeliverAndSignalsWhenTheLastIsOver() {
    Ferry<String, String> ferry = make(oneSlot());
    Future<String> a = ferry.submit("a");
    Future<String> b = ferry.submit("b");
    Future<String> c = ferry.submit("c", Duration.ofMillis(10));
    Future<Void> closed = ferry.close();
    assertEquals(FerryError.CLOSED, kind(b));
    assertEquals(FerryError.CLOSED, kind(c));
    assertEquals(FerryError.CLOSED, kind(ferry.submit("d")));
    assertFalse(closed.isComplete(), "a call is still in flight");
    down.succeed(0);
    assertEquals("a/1", a.result());
    assertTrue(closed.succeeded());
    assertEquals(1, down.calls.size());
    assertEquals(0, loop.liveTimers(), "no timer outlives the ferry");
  }

  @Test
  void closeWithNothingInFlightCompletesAtOnce() {
    Ferry<String, String> ferry = make(oneSlot().maxBatchDelay(Duration.ofMillis(100)));
    Future<String> a = ferry.submit("a");
    assertTrue(ferry.close().succeeded());
    assertEquals(FerryError.CLOSED, kind(a));
    assertEquals(0, loop.liveTimers());
  }

  @Test
  void drainSendsWhatWaitsWithoutTheDelayAndRefusesNewInputs() {
    Ferry<String, String> ferry = make(FerryConfig.builder().maxBatchDelay(Duration.ofSeconds(5)));
    Future<String> a = ferry.submit("a");
    Future<String> b = ferry.submit("b");
    Future<Void> closed = ferry.drain(Duration.ofSeconds(1));
    assertEquals(List.of(List.of("a", "b")), sent());
    assertEquals(FerryError.CLOSED, kind(ferry.submit("c")));
    assertFalse(closed.isComplete());
    down.succeed(0);
    assertEquals("a/2", a.result());
    assertEquals("b/2", b.result());
    assertTrue(closed.succeeded());
    assertEquals(0, loop.liveTimers());
  }

  @Test
  void anOwnersDrainThatRanOutWhileTheLoopWasBusySendsNothingMore() {
    Ferry<String, String> ferry = make(oneSlot().maxBatchSize(1).drainTimeout(Duration.ofMillis(10)));
    Future<String> a = ferry.submit("a");
    Future<String> b = ferry.submit("b");
    loop.closeOwner(); // drains for drainTimeout, then gives up on the calls still out
    // The loop is held up elsewhere past the drain's end; a's completion reaches it before the
    // drain's timer does.
    loop.stallMillis(30);
    down.succeed(0);
    loop.advance(0);
    assertEquals("a/1", a.result());
    assertEquals(1, down.calls.size(), "b leaves after the drain ran out: " + sent());
    assertEquals(FerryError.CLOSED, kind(b), "never sent, rather than sent and given up (FAILED)");
  }

  @Test
  void drainClosesAtItsTimeoutAndFailsWhatStillWaits() {
    Ferry<String, String> ferry = make(oneSlot().maxBatchSize(1));
    Future<String> a = ferry.submit("a");
    Future<String> b = ferry.submit("b");
    Future<Void> closed = ferry.drain(Duration.ofMillis(100));
    loop.advanceMillis(99);
    assertFalse(b.isComplete());
    loop.advanceMillis(1);
    assertEquals(FerryError.CLOSED, kind(b));
    assertFalse(closed.isComplete());
    down.succeed(0);
    assertEquals("a/1", a.result());
    assertTrue(closed.succeeded());
  }

  @Test
  void metricsDescribeOneQueueWithNoLanes() {
    Ferry<String, String> ferry = make(oneSlot(), LENGTH);
    ferry.submit("a");
    ferry.submit("bb");
    ferry.submit("ccc");
    FerryMetrics m = ferry.metrics();
    assertEquals(1, m.inFlightBatches());
    assertEquals(2, m.queuedInputs());
    assertEquals(5, m.queuedWeight());
    assertEquals(0, m.activeLanes());
    assertEquals(3, m.submitted());
    assertEquals(1, m.batches());
    assertEquals(0, m.directCalls());
  }
}
