package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Review D: FoldWrite against stores and inputs a hostile user can really produce. */
class FoldReviewDTest {

  /**
   * A row at the largest version a long holds (set by a writer outside the store, or a store that
   * counts its versions from a large number): no write can make it version + 1. FoldWrite sent the
   * write anyway, with a next version that wraps to a negative number: a store adding one in Java
   * reported the batch written at version Long.MIN_VALUE, and H2 refused the statement, which
   * JdbcStore reports as "may or may not have been written".
   */
  @Test
  void aRowAtTheLargestVersionFailsTheBatchAsAFailedReadWithoutSendingAWrite() {
    List<Long> expectedVersions = new ArrayList<>();
    VersionedStore<String, Long, Long> atTheTop = TestStores.of(
        key -> Future.succeededFuture(new Versioned<>(7L, Long.MAX_VALUE)),
        (key, state, expected, events) -> {
          expectedVersions.add(expected);
          return Future.succeededFuture(true); // what a store that wraps its counter answers
        });
    FoldWrite<String, Long, Long, Long> fw =
        FoldWrite.<String, Long, Long, Long>builder(atTheTop, FoldWriteTest::add).initial(() -> 0L).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(5L));

    assertTrue(done.failed(), "written at version " + (done.succeeded() ? done.result().version() : 0));
    assertFalse(done.cause() instanceof WriteOutcomeUnknownException, "nothing was sent: " + done.cause());
    IllegalStateException e = assertInstanceOf(IllegalStateException.class, done.cause());
    assertTrue(e.getMessage().contains(Long.toString(Long.MAX_VALUE)), e.getMessage());
    assertEquals(List.of(), expectedVersions, "a write was sent that no store can make");
  }

  /**
   * A store that answers at once (in memory, a cache, a test double) and conflicts every time, with
   * a large {@code maxAttempts}: each attempt ran inside the last one's completion, so the stack grew
   * by one attempt per conflict and the batch failed with a StackOverflowError, which says nothing
   * of conflicts, instead of a WriteConflictException after its last attempt.
   */
  @Test
  void endlessConflictsAnsweredAtOnceRunOutOfAttemptsNotOfStack() {
    int attempts = 200_000;
    int[] reads = {0};
    VersionedStore<String, Long, Long> alwaysRaced = TestStores.of(
        key -> Future.succeededFuture(new Versioned<>(7L, ++reads[0])),
        (key, state, expected, events) -> Future.succeededFuture(false));
    FoldWrite<String, Long, Long, Long> fw = FoldWrite.<String, Long, Long, Long>builder(alwaysRaced, FoldWriteTest::add)
        .initial(() -> 0L).maxAttempts(attempts).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(5L));

    assertTrue(done.failed(), "written after a conflict on every attempt");
    WriteConflictException e = assertInstanceOf(WriteConflictException.class, done.cause());
    assertEquals(attempts, e.attempts());
    assertEquals(attempts, reads[0], "one read per attempt");
  }

  /** A read that throws on the attempt after a conflict fails the batch with it; the batch never hangs. */
  @Test
  void aReadThatThrowsAfterAConflictFailsTheBatch() {
    int[] reads = {0};
    IllegalStateException broken = new IllegalStateException("the store's client is closed");
    VersionedStore<String, Long, Long> racedThenBroken = TestStores.of(
        key -> {
          if (++reads[0] > 1) {
            throw broken;
          }
          return Future.succeededFuture(new Versioned<>(7L, 1));
        },
        (key, state, expected, events) -> Future.succeededFuture(false));
    FoldWrite<String, Long, Long, Long> fw =
        FoldWrite.<String, Long, Long, Long>builder(racedThenBroken, FoldWriteTest::add).initial(() -> 0L).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(5L));

    assertTrue(done.failed(), "no answer after the second read threw");
    assertEquals(broken, done.cause());
  }

  /**
   * Review J: the same endless conflicts from a store that answers each write later (a database
   * client, answering on the event loop): each attempt's Future waited on the next one's, so the
   * last attempt's answer ran back through one completion per attempt, and at some thousands of
   * attempts overflowed the stack of the thread that completed it. On an event loop the context
   * caught the StackOverflowError and the batch's callers were never answered.
   */
  @Test
  void endlessConflictsAnsweredLaterRunOutOfAttemptsNotOfStack() {
    int attempts = 100_000;
    int[] reads = {0};
    ArrayDeque<Promise<Boolean>> unanswered = new ArrayDeque<>();
    VersionedStore<String, Long, Long> alwaysRacedLater = TestStores.of(
        key -> Future.succeededFuture(new Versioned<>(7L, ++reads[0])),
        (key, state, expected, events) -> {
          Promise<Boolean> write = Promise.promise();
          unanswered.add(write);
          return write.future();
        });
    FoldWrite<String, Long, Long, Long> fw = FoldWrite.<String, Long, Long, Long>builder(alwaysRacedLater, FoldWriteTest::add)
        .initial(() -> 0L).maxAttempts(attempts).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(5L));
    // The store answers each write from a task of its own, as an event loop runs them.
    Throwable thrown = null;
    while (!unanswered.isEmpty() && thrown == null) {
      try {
        unanswered.poll().complete(false);
      } catch (Throwable e) {
        thrown = e;
      }
    }

    assertEquals(null, thrown, "the store's answer threw");
    assertTrue(done.failed(), "no answer, or written after a conflict on every attempt");
    WriteConflictException e = assertInstanceOf(WriteConflictException.class, done.cause());
    assertEquals(attempts, e.attempts());
    assertEquals(attempts, reads[0], "one read per attempt");
  }
}
