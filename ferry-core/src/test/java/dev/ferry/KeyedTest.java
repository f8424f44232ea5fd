package dev.ferry;

import static dev.ferry.MakeTest.kind;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.KeyedFerry;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code Ferry.keyed} in virtual time: dedupe, not-found versus failure, per-caller deadlines. */
class KeyedTest {
  private final VirtualLoop loop = new VirtualLoop();
  /** Each call's keys, and its promise for the test to complete. */
  private final List<List<String>> calls = new ArrayList<>();
  private final List<Promise<Map<String, Integer>>> answers = new ArrayList<>();

  private Ferry<String, Optional<Integer>> keyed(FerryConfig.Builder config) {
    return new KeyedFerry<String, Integer>(loop, config.build(), keys -> {
      calls.add(List.copyOf(keys));
      Promise<Map<String, Integer>> p = Promise.promise();
      answers.add(p);
      return p.future();
    });
  }

  private static FerryConfig.Builder oneSlot() {
    return FerryConfig.builder().maxInFlightBatches(1);
  }

  /** Answers call {@code i} with each key's length, except the keys in {@code missing}. */
  private void answer(int i, String... missing) {
    Map<String, Integer> values = new HashMap<>();
    for (String k : calls.get(i)) {
      values.put(k, k.length());
    }
    for (String m : missing) {
      values.remove(m);
    }
    answers.get(i).complete(values);
  }

  @Test
  void callersOfAWaitingKeyShareOneEntryAndTheCallGetsDistinctKeysInFirstSeenOrder() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot());
    ferry.submit("x");
    List<Future<Optional<Integer>>> fs = new ArrayList<>();
    for (String k : List.of("bb", "a", "bb", "ccc", "a", "bb")) {
      fs.add(ferry.submit(k));
    }
    assertEquals(3, ferry.metrics().queuedInputs(), "one entry per waiting key");
    assertEquals(7, ferry.metrics().submitted(), "every caller is a submission");
    assertEquals(1, ferry.metrics().callLimit(), "the limit in force, as make reports it (ferry.call.limit)");
    answer(0);
    assertEquals(List.of("bb", "a", "ccc"), calls.get(1));
    answer(1);
    List<Optional<Integer>> values = fs.stream().map(Future::result).toList();
    assertEquals(List.of(Optional.of(2), Optional.of(1), Optional.of(2), Optional.of(3),
        Optional.of(1), Optional.of(2)), values);
  }

  @Test
  void sharingKeepsAKeyInOneBatchEvenWhenBatchesAreSmall() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot().maxBatchSize(2));
    ferry.submit("x");
    for (String k : List.of("a", "b", "a", "c", "b")) {
      ferry.submit(k);
    }
    answer(0);
    answer(1);
    assertEquals(List.of(List.of("x"), List.of("a", "b"), List.of("c")), calls);
  }

  @Test
  void aMissingKeyIsEmptyWhileAFailedCallFailsEveryCaller() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot());
    ferry.submit("x");
    Future<Optional<Integer>> found = ferry.submit("aa");
    Future<Optional<Integer>> missing = ferry.submit("zz");
    answer(0);
    answer(1, "zz");
    assertEquals(Optional.of(2), found.result());
    assertTrue(missing.succeeded(), "not found is not a failure");
    assertEquals(Optional.empty(), missing.result());

    ferry.submit("y"); // takes the free slot, so the next keys wait and leave together
    Future<Optional<Integer>> p = ferry.submit("p");
    Future<Optional<Integer>> q = ferry.submit("q");
    Future<Optional<Integer>> q2 = ferry.submit("q");
    answer(2);
    assertEquals(List.of("p", "q"), calls.get(3));
    RuntimeException boom = new RuntimeException("down");
    answers.get(3).fail(boom);
    for (Future<Optional<Integer>> f : List.of(p, q, q2)) {
      assertEquals(FerryError.FAILED, kind(f));
      assertSame(boom, f.cause().getCause());
    }
  }

  @Test
  void aNullMapFailsTheBatch() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot());
    Future<Optional<Integer>> a = ferry.submit("a");
    answers.get(0).complete(null);
    assertEquals(FerryError.FAILED, kind(a));
  }

  @Test
  void nothingIsCachedAcrossBatchesAndAKeyInFlightIsNotJoined() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot());
    Future<Optional<Integer>> first = ferry.submit("a"); // leaves at once
    Future<Optional<Integer>> second = ferry.submit("a"); // in flight already: waits for the next
    answer(0);
    answer(1);
    Future<Optional<Integer>> third = ferry.submit("a");
    answer(2);
    assertEquals(List.of(List.of("a"), List.of("a"), List.of("a")), calls);
    for (Future<Optional<Integer>> f : List.of(first, second, third)) {
      assertEquals(Optional.of(1), f.result());
    }
  }

  @Test
  void aCallersDeadlineIsItsOwnAndAKeyNobodyWantsIsNeverSent() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot());
    ferry.submit("x");
    Future<Optional<Integer>> impatient = ferry.submit("a", Duration.ofMillis(10));
    Future<Optional<Integer>> patient = ferry.submit("a");
    Future<Optional<Integer>> gone1 = ferry.submit("b", Duration.ofMillis(10));
    Future<Optional<Integer>> gone2 = ferry.submit("b", Duration.ofMillis(20));
    loop.advanceMillis(10);
    assertEquals(FerryError.TIMEOUT, kind(impatient));
    assertEquals(FerryError.TIMEOUT, kind(gone1));
    assertFalse(patient.isComplete());
    assertFalse(gone2.isComplete());
    assertEquals(2, ferry.metrics().queuedInputs());
    loop.advanceMillis(10);
    assertEquals(FerryError.TIMEOUT, kind(gone2));
    assertEquals(1, ferry.metrics().queuedInputs(), "b had no caller left, so it was dropped");
    answer(0);
    assertEquals(List.of("a"), calls.get(1), "b is never sent");
    answer(1);
    assertEquals(Optional.of(1), patient.result());
    assertEquals(3, ferry.metrics().timedOut());
  }

  @Test
  void callersWhoseDeadlinesPassedWhileTheLoopWasBusyTimeOutAndAKeyNobodyStillWantsIsNotSent() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot());
    ferry.submit("x"); // in flight
    Future<Optional<Integer>> gone = ferry.submit("a", Duration.ofMillis(10));
    Future<Optional<Integer>> late = ferry.submit("b", Duration.ofMillis(10));
    Future<Optional<Integer>> patient = ferry.submit("b", Duration.ofMillis(50));
    // The loop is held up elsewhere: the deadlines pass while their timers wait, and the call's
    // completion reaches the loop first, freeing the slot.
    loop.stallMillis(30);
    answer(0);
    loop.advance(0);
    assertEquals(List.of("b"), calls.get(1), "a had no caller left by its deadline: never sent");
    assertEquals(FerryError.TIMEOUT, kind(gone));
    assertEquals(FerryError.TIMEOUT, kind(late), "b left after this caller's deadline");
    answer(1);
    assertEquals(Optional.of(1), patient.result());
    assertEquals(2, ferry.metrics().timedOut());
    assertEquals(0, loop.liveTimers());
  }

  @Test
  void aDeadlineDoesNotTouchAKeyAlreadyInFlight() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot());
    Future<Optional<Integer>> a = ferry.submit("a", Duration.ofMillis(10));
    loop.advanceMillis(50);
    answer(0);
    assertEquals(Optional.of(1), a.result());
    assertEquals(0, loop.liveTimers());
  }

  @Test
  void rejectedWhenTheQueueIsFullAndACallerSharingAWaitingKeyTakesRoomToo() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot().maxQueueing(2));
    ferry.submit("x");
    Future<Optional<Integer>> a = ferry.submit("a");
    Future<Optional<Integer>> a2 = ferry.submit("a");
    Future<Optional<Integer>> b = ferry.submit("b");
    Future<Optional<Integer>> a3 = ferry.submit("a");
    assertFalse(a2.isComplete(), "a2 shares a's place, and takes the second room");
    assertEquals(FerryError.REJECTED, kind(b));
    assertEquals(FerryError.REJECTED, kind(a3), "a caller sharing a key is held in memory too");
    answer(0);
    answer(1);
    assertEquals(Optional.of(1), a.result());
    assertEquals(Optional.of(1), a2.result());
  }

  /**
   * Callers that shared a key leave the room with it: a hot key whose callers filled the room
   * refuses no other key once it is in flight (a hostile review found them still counted, with
   * nothing waiting and REJECTED saying "keys and callers sharing them are waiting").
   */
  @Test
  void callersSharingAKeyLeaveTheRoomWhenItLeavesInABatch() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot().maxQueueing(4));
    Future<Optional<Integer>> x = ferry.submit("x"); // in flight at once
    List<Future<Optional<Integer>>> as = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      as.add(ferry.submit("a")); // the key and three sharing it: the room of 4 is full
    }
    assertEquals(FerryError.REJECTED, kind(ferry.submit("full")));
    answer(0); // "a" leaves in the next call, with its four callers
    assertEquals(Optional.of(1), x.result());
    assertEquals(0, ferry.metrics().queuedInputs());
    List<Future<Optional<Integer>>> others = new ArrayList<>();
    for (String k : List.of("b", "c", "d", "e")) {
      others.add(ferry.submit(k));
    }
    Future<Optional<Integer>> late = ferry.submit("a"); // a new entry for "a": the room is full again
    for (Future<Optional<Integer>> f : others) {
      assertFalse(f.isComplete(), "refused while only what it joined waits: " + f.cause());
    }
    assertEquals(FerryError.REJECTED, kind(late));
    answer(1);
    for (Future<Optional<Integer>> a : as) {
      assertEquals(Optional.of(1), a.result(), "every caller of the key gets its value");
    }
    answer(2);
    for (Future<Optional<Integer>> f : others) {
      assertEquals(Optional.of(1), f.result());
    }
  }

  /** A caller of a key in flight answered later does not give back room it no longer holds. */
  @Test
  void theRoomCountsRightAfterSharedKeysLeaveAndAreAnswered() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot().maxQueueing(2));
    ferry.submit("x");
    ferry.submit("a");
    ferry.submit("a", Duration.ofMillis(10)); // shares; leaves with "a" before its deadline
    answer(0); // "a" and its sharer leave
    loop.advanceMillis(20); // the sharer's deadline passes with its key in flight: nothing given back
    answer(1);
    ferry.submit("y"); // in flight
    Future<Optional<Integer>> b = ferry.submit("b");
    Future<Optional<Integer>> b2 = ferry.submit("b");
    Future<Optional<Integer>> c = ferry.submit("c");
    assertFalse(b2.isComplete(), "b and its sharer fill the room of 2");
    assertEquals(FerryError.REJECTED, kind(c), "the room is 2, not more: nothing was given back twice");
    answer(2);
    answer(3);
    assertEquals(Optional.of(1), b.result());
    assertEquals(Optional.of(1), b2.result());
  }

  /**
   * A batch's call runs a step after the batch was taken: a caller answered in between (by the
   * batch before) may ask for the key again, making a new entry under it. The room of the entry
   * that left is given back, and the new one's is kept (a review found them swapped).
   */
  @Test
  void aKeyAskedForAgainBeforeItsCallStartsKeepsTheRoomCountRight() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot().maxQueueing(4));
    Future<Optional<Integer>> x = ferry.submit("x");
    for (int i = 0; i < 4; i++) {
      ferry.submit("a"); // the key and three sharing it
    }
    x.onComplete(ar -> {
      ferry.submit("a"); // a new entry, and one sharing it: 2 of the room of 4
      ferry.submit("a");
    });
    answer(0);
    assertEquals(List.of("a"), calls.get(1));
    assertEquals(1, ferry.metrics().queuedInputs());
    Future<Optional<Integer>> b = ferry.submit("b");
    Future<Optional<Integer>> c = ferry.submit("c");
    assertFalse(b.isComplete(), "b refused: " + b.cause());
    assertFalse(c.isComplete(), "c refused: " + c.cause());
    assertEquals(FerryError.REJECTED, kind(ferry.submit("d")), "and the room is full");
  }

  @Test
  void closeFailsEveryWaitingCallerAndLetsTheCallInFlightDeliver() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot());
    Future<Optional<Integer>> x = ferry.submit("x");
    Future<Optional<Integer>> a = ferry.submit("a", Duration.ofMillis(100));
    Future<Optional<Integer>> a2 = ferry.submit("a");
    Future<Void> closed = ferry.close();
    assertEquals(FerryError.CLOSED, kind(a));
    assertEquals(FerryError.CLOSED, kind(a2));
    assertEquals(FerryError.CLOSED, kind(ferry.submit("a")));
    assertFalse(closed.isComplete());
    answer(0);
    assertEquals(Optional.of(1), x.result());
    assertTrue(closed.succeeded());
    assertEquals(0, loop.liveTimers());
  }

  @Test
  void drainRefusesNewCallersEvenForAWaitingKey() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot());
    ferry.submit("x");
    Future<Optional<Integer>> a = ferry.submit("a");
    Future<Void> closed = ferry.drain(Duration.ofSeconds(1));
    assertEquals(FerryError.CLOSED, kind(ferry.submit("a")));
    answer(0);
    answer(1);
    assertEquals(Optional.of(1), a.result());
    assertTrue(closed.succeeded());
  }

  @Test
  void aNullKeyOrBadDeadlineIsBadInput() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot());
    assertEquals(FerryError.BAD_INPUT, kind(ferry.submit(null)));
    assertEquals(FerryError.BAD_INPUT, kind(ferry.submit("a", Duration.ZERO)));
    assertTrue(calls.isEmpty());
  }

  /** Reads the ferry's metrics from another thread, as a scrape does: the published snapshot. */
  private static FerryMetrics readElsewhere(Ferry<?, ?> ferry) {
    FerryMetrics[] read = new FerryMetrics[1];
    Thread reader = new Thread(() -> read[0] = ferry.metrics());
    reader.start();
    try {
      reader.join();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    return read[0];
  }

  @Test
  void aCallerAnsweredSeesItsOwnOutcomeInTheMetricsReadFromAnotherThreadAndNoMixOfTwoMoments() {
    Ferry<String, Optional<Integer>> ferry = keyed(oneSlot().maxQueueing(2));
    ferry.submit("x"); // in flight
    List<FerryMetrics> seen = new ArrayList<>();
    // Submitted off Vert.x threads: the callbacks run where the ferry answers.
    ferry.submit("k", Duration.ofMillis(10)).onComplete(ar -> seen.add(readElsewhere(ferry)));
    ferry.submit("a");
    ferry.submit("b").onComplete(ar -> seen.add(readElsewhere(ferry))); // refused: the room is full
    loop.runPending();
    loop.advanceMillis(10);
    assertEquals(2, seen.size());
    FerryMetrics refused = seen.get(0);
    assertEquals(1, refused.rejected(), "the refused caller sees its refusal: " + refused);
    assertEquals(4, refused.submitted(), refused.toString());
    FerryMetrics timedOut = seen.get(1);
    assertEquals(1, timedOut.timedOut(), "the caller given up sees itself counted: " + timedOut);
    assertEquals(1, timedOut.queuedInputs(), "and its key gone from the waiting keys, at the same moment: " + timedOut);
  }
}
