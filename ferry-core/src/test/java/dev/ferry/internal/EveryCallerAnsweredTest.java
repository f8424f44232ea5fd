package dev.ferry.internal;

import static dev.ferry.internal.PerKeyHarness.failure;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyHarness.In;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Hostile uses that once left a caller unanswered or broke a bound (issue 13): each test is the
 * smallest reproduction, in virtual time.
 */
class EveryCallerAnsweredTest {

  /** Throws any throwable, checked ones included, without declaring it (a "sneaky throw"). */
  @SuppressWarnings("unchecked")
  static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }

  static final class Checked extends Exception {
    Checked() {
      super("checked, thrown sneakily");
    }
  }

  @Nested
  class ThrowingUserFunctions {
    private final VirtualLoop loop = new VirtualLoop();
    private final RecordingDownstream<String, In> down = new RecordingDownstream<>(loop);

    @Test
    void aKeyFunctionReturningNullFailsItsCallerWithBadInput() {
      PerKeyFerry<String, In, List<In>, String> ferry = perKey(in -> null, null, null);
      assertEquals(FerryError.BAD_INPUT, failure(submit(ferry, In.of("a", "a1"))).kind());
      assertTrue(down.calls.isEmpty());
    }

    private PerKeyFerry<String, In, List<In>, String> perKey(
        java.util.function.Function<In, String> key, java.util.function.ToLongFunction<In> weigh,
        java.util.Comparator<In> order) {
      return new PerKeyFerry<>(loop, PerKeyConfig.builder().directIdleKeys(false).maxInFlightBatches(1).build(),
          key, weigh, order, down, (in, r) -> in.label());
    }

    private Future<String> submit(PerKeyFerry<String, In, List<In>, String> ferry, In in) {
      Future<String> f = ferry.submit(in);
      loop.runPending();
      return f;
    }

    @Test
    void aKeyFunctionThrowingAnErrorFailsItsCallerWithBadInput() {
      var ferry = perKey(in -> { throw new StackOverflowError("deep"); }, null, null);
      assertEquals(FerryError.BAD_INPUT, failure(submit(ferry, In.of("a", "a1"))).kind());
    }

    @Test
    void aKeyFunctionThrowingACheckedExceptionSneakilyFailsItsCallerWithBadInput() {
      var ferry = perKey(in -> { throw sneaky(new Checked()); }, null, null);
      assertEquals(FerryError.BAD_INPUT, failure(submit(ferry, In.of("a", "a1"))).kind());
    }

    @Test
    void aKeyWhoseHashCodeThrowsFailsItsCallerWithBadInputAndDisturbsNothingElse() {
      record Hostile(String name) {
        @Override
        public int hashCode() {
          throw new AssertionError("no hash for you");
        }
      }
      PerKeyFerry<Object, In, List<In>, String> ferry = new PerKeyFerry<>(loop, PerKeyConfig.defaults(),
          in -> in.key().equals("evil") ? new Hostile("x") : in.key(), null, null,
          (k, inputs) -> Future.succeededFuture(inputs), (in, r) -> in.label());
      Future<String> evil = ferry.submit(In.of("evil", "e1"));
      Future<String> good = ferry.submit(In.of("a", "a1"));
      loop.runPending();
      assertEquals(FerryError.BAD_INPUT, failure(evil).kind());
      assertEquals("a1", good.result());
    }

    @Test
    void aWeighFunctionThrowingAnErrorOrACheckedExceptionFailsItsCallerWithBadInput() {
      var error = perKey(In::key, in -> { throw new NoClassDefFoundError("pretend"); }, null);
      assertEquals(FerryError.BAD_INPUT, failure(submit(error, In.of("a", "a1"))).kind());
      var checked = perKey(In::key, in -> { throw sneaky(new Checked()); }, null);
      assertEquals(FerryError.BAD_INPUT, failure(submit(checked, In.of("a", "a1"))).kind());
    }

    @Test
    void aComparatorThrowingAnErrorCountsAsATieAndEveryCallerIsAnswered() {
      var ferry = perKey(In::key, null, (x, y) -> { throw new LinkageError("broken order"); });
      Future<String> a1 = submit(ferry, In.of("a", "a1"));
      Future<String> a2 = submit(ferry, In.of("a", "a2"));
      Future<String> a3 = submit(ferry, In.of("a", "a3"));
      down.succeedAll();
      loop.runPending();
      down.succeedAll();
      loop.runPending();
      assertEquals(List.of("a1", "a2", "a3"), List.of(a1.result(), a2.result(), a3.result()));
      assertEquals("[a2, a3]", down.calls.get(1).inputs.toString(), "a tie keeps submission order");
    }

    @Test
    void aComparatorThrowingACheckedExceptionSneakilyCountsAsATie() {
      var ferry = perKey(In::key, null, (x, y) -> { throw sneaky(new Checked()); });
      Future<String> a1 = submit(ferry, In.of("a", "a1"));
      Future<String> a2 = submit(ferry, In.of("a", "a2"));
      Future<String> a3 = submit(ferry, In.of("a", "a3"));
      down.succeedAll();
      loop.runPending();
      down.succeedAll();
      loop.runPending();
      assertEquals(List.of("a1", "a2", "a3"), List.of(a1.result(), a2.result(), a3.result()));
    }

    @Test
    void makesWeighFunctionThrowingAnErrorFailsItsCallerWithBadInput() {
      StreamFerry<String, List<String>, String> ferry = new StreamFerry<>(loop, FerryConfig.defaults(),
          in -> { throw new InternalError("weigh"); }, Future::succeededFuture, (in, r) -> in);
      Future<String> f = ferry.submit("x");
      loop.runPending();
      assertEquals(FerryError.BAD_INPUT, failure(f).kind());
    }
  }

  @Nested
  class DeadlinesRunFromSubmit {
    private final PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());

    /** Submits from another thread, so that the submission waits for the (virtual) loop. */
    private Future<String> submitFromElsewhere(In in, Duration timeout) throws InterruptedException {
      List<Future<String>> out = new ArrayList<>();
      Thread t = new Thread(() -> out.add(h.ferry.submit(in, timeout)));
      t.start();
      t.join();
      return out.get(0);
    }

    @Test
    void anInputWhoseDeadlinePassedWhileTheLoopWasBusyIsAnsweredTimeoutAndNeverSent() throws Exception {
      Future<String> f = submitFromElsewhere(In.of("a", "a1"), Duration.ofMillis(50));
      h.loop.stallMillis(300); // the loop was busy elsewhere for 300 ms before it got to the input
      h.loop.runPending();
      assertEquals(FerryError.TIMEOUT, failure(f).kind());
      assertTrue(h.down.calls.isEmpty(), "an input past its deadline must never be sent");
      assertEquals(1, h.ferry.metrics().timedOut());
      assertEquals(1, h.ferry.metrics().submitted());
    }

    @Test
    void anInputAdmittedLateKeepsOnlyWhatIsLeftOfItsDeadline() throws Exception {
      h.submit("a", "a0"); // a call in flight: a's next input waits
      Future<String> f = submitFromElsewhere(In.of("a", "a1"), Duration.ofMillis(100));
      h.loop.stallMillis(60);
      h.loop.runPending();
      assertFalse(f.isComplete());
      h.loop.advanceMillis(40);
      assertEquals(FerryError.TIMEOUT, failure(f).kind(), "the deadline is 100 ms after the submit, not after admission");
    }

    @Test
    void anInputAdmittedExactlyAtItsDeadlineIsAnsweredTimeoutAndNeverSent() throws Exception {
      Future<String> f = submitFromElsewhere(In.of("a", "a1"), Duration.ofMillis(50));
      h.loop.stallMillis(50); // the loop gets to it at the very instant its deadline is reached
      h.loop.runPending();
      assertEquals(FerryError.TIMEOUT, failure(f).kind());
      assertTrue(h.down.calls.isEmpty(), "a deadline reached is a deadline passed, as when a batch forms");
    }

    @Test
    void aKeyedCallersDeadlineRunsFromSubmit() throws Exception {
      VirtualLoop loop = new VirtualLoop();
      List<List<String>> calls = new ArrayList<>();
      KeyedFerry<String, Integer> keyed = new KeyedFerry<>(loop, FerryConfig.defaults(), keys -> {
        calls.add(keys);
        return Promise.<Map<String, Integer>>promise().future();
      });
      List<Future<Optional<Integer>>> out = new ArrayList<>();
      Thread t = new Thread(() -> out.add(keyed.submit("k", Duration.ofMillis(50))));
      t.start();
      t.join();
      loop.stallMillis(300);
      loop.runPending();
      assertEquals(FerryError.TIMEOUT, failure(out.get(0)).kind());
      assertTrue(calls.isEmpty(), "a key nobody waits for any more is never fetched");
    }
  }

  @Nested
  class DurationsBeyondWhatAFerryCanHold {
    private final Duration tooLong = Duration.ofDays(365L * 300);

    @Test
    void submitWithADeadlineBeyond292YearsFailsItsFutureWithBadInput() {
      PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
      assertEquals(FerryError.BAD_INPUT, failure(h.submit(In.of("a", "a1"), tooLong)).kind());
      assertEquals(FerryError.BAD_INPUT, failure(h.submit(In.of("a", "a1"), Duration.ofSeconds(Long.MAX_VALUE))).kind());
    }

    @Test
    void drainWithATimeoutBeyond292YearsFailsItsFutureAndLeavesTheFerryOpen() {
      PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
      assertEquals(FerryError.BAD_INPUT, failure(h.ferry.drain(tooLong)).kind());
      Future<String> f = h.submit("a", "a1");
      h.succeed(0);
      assertEquals("a1", f.result());
    }

    @Test
    void keyedSubmitWithADeadlineBeyond292YearsFailsItsFutureWithBadInput() {
      VirtualLoop loop = new VirtualLoop();
      KeyedFerry<String, Integer> keyed = new KeyedFerry<>(loop, FerryConfig.defaults(),
          keys -> Future.succeededFuture(Map.of()));
      assertEquals(FerryError.BAD_INPUT, failure(keyed.submit("k", tooLong)).kind());
    }
  }

  @Nested
  class ExpiredInputsStayWithinTheWaitingRoom {
    @Test
    void lanesWhoseInputsExpiredWhileEverySlotWasBusyHoldNothingAndDoNotPileUpInTheLines() {
      PerKeyHarness h = new PerKeyHarness(PerKeyConfig.builder()
          .directIdleKeys(false).maxInFlightBatches(1).maxQueueing(10).build());
      h.submit("busy", "b1"); // holds the only slot, and never completes
      List<Future<String>> all = new ArrayList<>();
      for (int i = 0; i < 30_000; i++) {
        all.add(h.submit(In.of("k" + i, "k" + i), Duration.ofMillis(5)));
        if (i % 10 == 9) {
          h.loop.advanceMillis(5);
        }
      }
      h.loop.advanceMillis(5);
      long expired = all.stream().filter(f -> f.failed() && failure(f).kind() == FerryError.TIMEOUT).count();
      assertEquals(null, h.engine().brokenInvariant(), "a retired lane left in a line holds no input");
      assertTrue(h.engine().linedUp() <= 33, "retired lanes are compacted out of the lines: " + h.engine().linedUp());
      assertEquals(1, h.engine().lanesHeld(), "only the busy key's lane is held");
      assertEquals(30_000, expired, "every input expired, none was refused: each left room as it expired");
    }

    @Test
    void anExpiredInputStillHeldCountsTowardMaxQueueingUntilItIsGone() {
      PerKeyHarness h = new PerKeyHarness(PerKeyConfig.builder().directIdleKeys(false).maxQueueing(3).build());
      h.submit("a", "a0"); // in flight: a's next inputs wait
      Future<String> a1 = h.submit("a", "a1");
      Future<String> a2 = h.submit(In.of("a", "a2"), Duration.ofMillis(10));
      Future<String> a3 = h.submit("a", "a3");
      h.loop.advanceMillis(10);
      assertEquals(FerryError.TIMEOUT, failure(a2).kind());
      assertEquals(2, h.ferry.metrics().queuedInputs(), "a2 is no longer waiting");
      assertEquals(FerryError.REJECTED, failure(h.submit("b", "b1")).kind(),
          "a2 is still held in a's lane, so the room is full");
      assertEquals(null, h.engine().brokenInvariant());
      h.succeed(0);
      assertEquals("a[a1, a3]", h.call(1));
      Future<String> b2 = h.submit("b", "b2");
      assertFalse(b2.failed(), "once a2 is gone, its room is free again");
      assertEquals(null, h.engine().brokenInvariant());
      h.down.succeedAll();
      h.loop.runPending();
      assertEquals(List.of("a1", "a3", "b2"), List.of(a1.result(), a3.result(), b2.result()));
    }

    @Test
    void anExpiredInputStillHeldCountsTowardMaxQueuedWeightUntilItIsGone() {
      PerKeyHarness h = new PerKeyHarness(PerKeyConfig.builder().directIdleKeys(false).maxQueuedWeight(10).build());
      h.submit("a", "a0"); // in flight: a's next inputs wait
      h.submit(In.weighing("a", "a1", 1));
      Future<String> a2 = h.submit(In.weighing("a", "a2", 6), Duration.ofMillis(10));
      h.submit(In.weighing("a", "a3", 1));
      h.loop.advanceMillis(10);
      assertEquals(FerryError.TIMEOUT, failure(a2).kind());
      assertEquals(2, h.ferry.metrics().queuedWeight(), "a2 is no longer waiting");
      assertEquals(FerryError.REJECTED, failure(h.submit(In.weighing("b", "b1", 3))).kind(),
          "a2's weight is still held in a's lane: 2 + 6 + 3 > 10");
      h.succeed(0);
      assertFalse(h.submit(In.weighing("b", "b2", 3)).failed(), "once a2 is gone, its weight is free again");
      assertArrayEquals(new long[] {0, 0}, h.ferry.expiredStillHeld());
    }

    @Test
    void anExpiredInputAtTheHeadOfItsLaneOrAloneInItIsGoneAtOnce() {
      PerKeyHarness h = new PerKeyHarness(PerKeyConfig.builder().dispatch(dev.ferry.Dispatch.FIXED_SLOTS)
          .directIdleKeys(false).maxQueueing(2).build());
      h.submit("a", "a0"); // in flight: a's next inputs wait
      h.submit("b", "b0"); // in flight: b's too
      Future<String> a1 = h.submit(In.weighing("a", "a1", 4), Duration.ofMillis(10)); // a's head
      h.submit("a", "a2");
      h.loop.advanceMillis(10);
      assertEquals(FerryError.TIMEOUT, failure(a1).kind());
      assertArrayEquals(new long[] {0, 0}, h.ferry.expiredStillHeld(), "an expired head goes at once");
      Future<String> b1 = h.submit(In.weighing("b", "b1", 3), Duration.ofMillis(10)); // alone in b's lane
      h.loop.advanceMillis(10);
      assertEquals(FerryError.TIMEOUT, failure(b1).kind());
      assertArrayEquals(new long[] {0, 0}, h.ferry.expiredStillHeld(), "so does one with nothing live behind it");
      assertFalse(h.submit("c", "c1").failed(), "the room (2) holds a2 and c1, nothing expired");
      h.down.succeedAll();
      h.loop.runPending();
      h.down.succeedAll();
      h.loop.runPending();
      assertArrayEquals(new long[] {0, 0}, h.ferry.expiredStillHeld());
      assertEquals(null, h.engine().brokenInvariant());
    }

    /** Compacting the lines drops only the retired lanes: a live lane still in line keeps its turn. */
    @Test
    void compactingTheLinesKeepsEveryLaneStillWaitingInThem() {
      for (dev.ferry.Dispatch mode : dev.ferry.Dispatch.values()) {
        PerKeyConfig.Builder b = PerKeyConfig.builder().dispatch(mode).directIdleKeys(false).maxInFlightBatches(1);
        PerKeyHarness h = new PerKeyHarness(mode == dev.ferry.Dispatch.ADAPTIVE ? b.pinnedLimit(1).build() : b.build());
        h.submit("busy", "b1"); // holds the only slot
        Future<String> live = h.submit("live", "l1"); // waits in line, first
        for (int i = 0; i < 40; i++) {
          h.submit(In.of("k" + i, "k" + i), Duration.ofMillis(5));
        }
        h.loop.advanceMillis(5); // 40 lanes expire in line: more stale than live, so the lines are compacted
        assertTrue(h.engine().linedUp() <= 33, mode + ": compacted, " + h.engine().linedUp());
        h.succeed(0);
        assertEquals("live[l1]", h.call(1), mode + ": the live lane kept its place");
        h.succeed(1);
        assertEquals("l1", live.result());
      }
    }

    @Test
    void expiredInputsOfALaneAreCompactedOnceTheyAreAsManyAsTheLiveOnes() {
      PerKeyHarness h = new PerKeyHarness(PerKeyConfig.builder().maxQueueing(100).build());
      h.submit("a", "a0");
      for (int i = 1; i <= 40; i++) {
        // every other input expires; none is at the head when it does
        h.submit(i % 2 == 0 ? In.of("a", "a" + i) : new In("a", "a" + i, 1, 0), i % 2 == 0 ? Duration.ofDays(1) : Duration.ofMillis(10));
      }
      h.loop.advanceMillis(10);
      assertEquals(null, h.engine().brokenInvariant());
      assertEquals(20, h.ferry.metrics().queuedInputs());
      // 80 more fit: expired ones do not hold more than the live ones
      for (int i = 0; i < 60; i++) {
        assertFalse(h.submit("b", "b" + i).failed(), "b" + i);
      }
      assertEquals(null, h.engine().brokenInvariant());
    }

    @Test
    void makeCountsExpiredInputsStillQueuedTowardMaxQueueing() {
      VirtualLoop loop = new VirtualLoop();
      RecordingDownstream<Void, String> down = new RecordingDownstream<>(loop);
      StreamFerry<String, List<String>, String> ferry = new StreamFerry<>(loop,
          FerryConfig.builder().maxInFlightBatches(1).maxQueueing(3).build(), null,
          inputs -> down.call(null, inputs), (in, r) -> in);
      ferry.submit("x0");
      ferry.submit("x1");
      Future<String> x2 = ferry.submit("x2", Duration.ofMillis(10));
      ferry.submit("x3");
      loop.advanceMillis(10);
      assertEquals(FerryError.TIMEOUT, failure(x2).kind());
      Future<String> x4 = ferry.submit("x4");
      loop.runPending();
      assertEquals(FerryError.REJECTED, failure(x4).kind(), "x2 is still queued behind x1");
    }

    @Test
    void makesExpiredHeadIsGoneAtOnceAndFreesItsRoom() {
      VirtualLoop loop = new VirtualLoop();
      RecordingDownstream<Void, String> down = new RecordingDownstream<>(loop);
      StreamFerry<String, List<String>, String> ferry = new StreamFerry<>(loop,
          FerryConfig.builder().maxInFlightBatches(1).maxQueueing(2).build(), null,
          inputs -> down.call(null, inputs), (in, r) -> in);
      ferry.submit("x0"); // in flight: the next inputs wait
      Future<String> x1 = ferry.submit("x1", Duration.ofMillis(10)); // the queue's head
      ferry.submit("x2");
      loop.advanceMillis(10);
      assertEquals(FerryError.TIMEOUT, failure(x1).kind());
      Future<String> x3 = ferry.submit("x3");
      loop.runPending();
      assertFalse(x3.failed(), "x1 is gone: the room (2) holds x2 and x3");
      assertArrayEquals(new long[] {0, 0}, ferry.expiredStillHeld());
    }

    @Test
    void keyedCallersSharingAWaitingKeyCountTowardMaxQueueing() {
      VirtualLoop loop = new VirtualLoop();
      KeyedFerry<String, Integer> keyed = new KeyedFerry<>(loop,
          FerryConfig.builder().maxInFlightBatches(1).maxQueueing(3).build(),
          keys -> Promise.<Map<String, Integer>>promise().future()); // calls never complete
      keyed.submit("busy"); // in flight: later keys wait
      List<Future<Optional<Integer>>> sharers = new ArrayList<>();
      sharers.add(keyed.submit("k"));
      sharers.add(keyed.submit("k", Duration.ofMillis(10)));
      sharers.add(keyed.submit("k", Duration.ofMillis(10)));
      loop.runPending();
      Future<Optional<Integer>> fourth = keyed.submit("k");
      loop.runPending();
      assertEquals(FerryError.REJECTED, failure(fourth).kind(), "one key and two callers sharing it fill a room of 3");
      assertEquals(1, keyed.metrics().rejected());
      loop.advanceMillis(10); // two sharers give up
      Future<Optional<Integer>> fifth = keyed.submit("k");
      loop.runPending();
      assertFalse(fifth.isComplete(), "their room is free again");
      assertFalse(sharers.get(0).isComplete());
    }
  }
}
