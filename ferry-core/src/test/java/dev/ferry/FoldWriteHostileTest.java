package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FoldWriteTest.MemoryStore;
import io.vertx.core.Future;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** FoldWrite against careless or hostile apply functions and stores, on an in-memory store. */
class FoldWriteHostileTest {
  private final MemoryStore store = new MemoryStore();

  // Adds positive numbers; 8 recurses without end (as on a hostile, deeply nested input), 10 throws
  // an exception whose own toString fails.
  static FoldDecision<Long, Long> careless(Long sum, Long n) {
    if (n == 8) {
      return careless(sum, n);
    }
    if (n == 10) {
      throw new IllegalStateException() {
        @Override
        public String toString() {
          throw new UnsupportedOperationException("no text either");
        }
      };
    }
    return FoldDecision.accept(sum + n, sum + n);
  }

  @Test
  void anApplyWhoseExceptionCannotEvenBeDescribedRejectsOnlyItsInput() {
    FoldWrite<String, Long, Long, Long> fw =
        FoldWrite.<String, Long, Long, Long>builder(store, FoldWriteHostileTest::careless).initial(() -> 0L).build();
    List<Long> batch = List.of(1L, 8L, 2L, 10L, 3L);

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", batch);

    assertTrue(done.succeeded(), "one bad input failed the whole batch: " + done.cause());
    FoldOutcomes<Long, Long> out = done.result();
    assertEquals(List.of(1L, 3L, 6L), List.of(fw.extract(1L, out), fw.extract(2L, out), fw.extract(3L, out)));
    for (Long bad : List.of(8L, 10L)) {
      FerryException e = assertThrows(FerryException.class, () -> fw.extract(bad, out));
      assertEquals(FerryError.INPUT_REJECTED, e.kind());
    }
    assertTrue(out.list().get(1).toString().contains("StackOverflowError"), out.list().get(1).toString());
    assertTrue(out.list().get(3).toString().contains("FoldWriteHostileTest"), out.list().get(3).toString());
    assertEquals(new Versioned<>(6L, 1), store.rows.get("k"));
    assertEquals(List.of(List.of(1L, 2L, 3L)), store.writes);
  }

  /**
   * No state a batch is folded over is null (FoldDecision.accept refuses one), neither the initial
   * one nor one a store read for an entity that exists (a store that lost a row's state, a custom
   * store's bug): the batch fails naming where it came from, nothing is written, and no input is
   * blamed for it (review Q). Mutation testing: a check of the initial state alone let the null a
   * store read reach apply, and every input of the batch was rejected with INPUT_REJECTED.
   */
  @Test
  void aNullStateTheStoreReadOrTheInitialSupplierGaveFailsTheBatchAndWritesNothing() {
    List<Long> writes = new java.util.ArrayList<>();
    VersionedStore<String, Long, Long> lostState = TestStores.of(key -> Future.succeededFuture(new Versioned<>(null, 3)),
        (key, state, expected, events) -> {
          writes.add(expected);
          return Future.succeededFuture(true);
        });
    FoldWrite<String, Long, Long, Long> fw =
        FoldWrite.<String, Long, Long, Long>builder(lostState, FoldWriteTest::add).initial(() -> 0L).build();

    Future<FoldOutcomes<Long, Long>> read = fw.call("k", List.of(1L, 2L));

    assertTrue(read.failed(), () -> "every input blamed for the store's null state: " + read.result().list());
    assertInstanceOf(IllegalStateException.class, read.cause());
    assertTrue(read.cause().getMessage().contains("version 3"), read.cause().getMessage());

    FoldWrite<String, Long, Long, Long> nullInitial =
        FoldWrite.<String, Long, Long, Long>builder(store, FoldWriteTest::add).initial(() -> null).build();
    Future<FoldOutcomes<Long, Long>> fresh = nullInitial.call("n", List.of(1L, 2L));

    assertTrue(fresh.failed(), () -> "every input blamed for the supplier's null: " + fresh.result().list());
    assertTrue(fresh.cause().getMessage().contains("initial state supplier"), fresh.cause().getMessage());
    assertEquals(List.of(), writes);
    assertEquals(List.of(), store.writes);
  }

  @Test
  void anInputTheStoreCannotRecordIsRejectedAloneAndTheRestIsWritten() {
    // The store records the inputs as events, and says which it cannot hold (100), or throws asking
    // (200). Found at the write, either one failed every input of its batch.
    VersionedStore<String, Long, Long> picky = refusing(
        (state, events) -> events.contains(100L) || events.contains(200L) ? "cannot hold " + events : null,
        event -> {
          if (event == 200L) {
            throw new IllegalStateException("asked about 200");
          }
          return event == 100L ? "100 does not fit" : null;
        },
        state -> null);
    FoldWrite<String, Long, Long, Long> fw =
        FoldWrite.<String, Long, Long, Long>builder(picky, FoldWriteTest::add).initial(() -> 0L).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(1L, 100L, 2L, 200L, -1L));

    assertTrue(done.succeeded(), "one input the store cannot hold failed the whole batch: " + done.cause());
    List<FoldOutcome<Long>> out = done.result().list();
    assertEquals(new FoldOutcome.Applied<>(1L), out.get(0));
    assertEquals(new FoldOutcome.Rejected<>("100 does not fit"), out.get(1));
    assertEquals(new FoldOutcome.Applied<>(3L), out.get(2), "the state went on from a refused input's");
    assertTrue(out.get(3).toString().contains("asked about 200"), out.get(3).toString());
    assertEquals(new FoldOutcome.Rejected<>("not positive: -1"), out.get(4), "apply's own reason comes first");
    assertEquals(new Versioned<>(3L, 1), store.rows.get("k"));
    assertEquals(List.of(List.of(1L, 2L)), store.writes);
  }

  @Test
  void anInputAfterWhichTheStoreCannotHoldTheStateIsRejectedAloneAndTheRestIsWritten() {
    // The store holds no state above 100; it says so when asked, and its write throws, sending
    // nothing. Without the question, the input that took the state there failed every input of
    // its batch, and its retries failed the batches they joined.
    VersionedStore<String, Long, Long> bounded = refusing(
        (state, events) -> state > 100 ? "cannot hold " + state : null,
        event -> null,
        state -> {
          if (state == 99L) {
            throw new IllegalStateException("asked about 99");
          }
          return state > 100 ? state + " is over 100" : null;
        });
    FoldWrite<String, Long, Long, Long> fw =
        FoldWrite.<String, Long, Long, Long>builder(bounded, FoldWriteTest::add).initial(() -> 0L).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(1L, 150L, 2L, 96L, 3L));

    assertTrue(done.succeeded(), "one input the store cannot hold the state of failed the batch: " + done.cause());
    List<FoldOutcome<Long>> out = done.result().list();
    assertEquals(new FoldOutcome.Applied<>(1L), out.get(0));
    assertEquals(new FoldOutcome.Rejected<>("the store cannot hold the state it leads to: 151 is over 100"), out.get(1));
    assertEquals(new FoldOutcome.Applied<>(3L), out.get(2), "the state went on from before the refused input");
    assertTrue(out.get(3).toString().contains("asked about 99"), out.get(3).toString());
    assertEquals(new FoldOutcome.Applied<>(6L), out.get(4));
    assertEquals(new Versioned<>(6L, 1), store.rows.get("k"));
    assertEquals(List.of(List.of(1L, 2L, 3L)), store.writes, "written once, without the refused inputs");

    // A refusal the state does not explain (the store holds the state) stands: the batch fails as
    // before, nothing written.
    VersionedStore<String, Long, Long> keyless = TestStores.of(store::read, (key, state, expected, events) -> {
      throw new IllegalArgumentException("no such key: " + key);
    });
    FoldWrite<String, Long, Long, Long> plain =
        FoldWrite.<String, Long, Long, Long>builder(keyless, FoldWriteTest::add).initial(() -> 0L).build();
    IllegalArgumentException refused = assertInstanceOf(IllegalArgumentException.class,
        plain.call("x", List.of(1L)).cause());
    assertEquals("no such key: x", refused.getMessage());
  }

  @Test
  void findingTheInputWhoseStateTheStoreCannotHoldAsksAboutAFewStatesNotEveryOne() {
    // Each question may encode the whole state (PgStore, JdbcStore): asked after every input, one
    // refused input cost a batch of 256 some 256 encodings of it, on the event loop, in every
    // batch that input joined (found by review). Asked by bisection, about log2(256) + 2.
    int[] asked = {0};
    VersionedStore<String, Long, Long> bounded = refusing(
        (state, events) -> state >= 1_000_000 ? "cannot hold " + state : null,
        event -> null,
        state -> {
          asked[0]++;
          return state >= 1_000_000 ? "too big" : null;
        });
    FoldWrite<String, Long, Long, Long> fw =
        FoldWrite.<String, Long, Long, Long>builder(bounded, FoldWriteTest::add).initial(() -> 0L).build();
    List<Long> batch = new java.util.ArrayList<>();
    for (int i = 0; i < 256; i++) {
      batch.add(i == 100 ? 1_000_000L : 1L);
    }

    FoldOutcomes<Long, Long> out = fw.call("k", batch).result();

    assertEquals(new FoldOutcome.Rejected<>("the store cannot hold the state it leads to: too big"), out.list().get(100));
    assertEquals(new Versioned<>(255L, 1), store.rows.get("k"));
    assertTrue(asked[0] <= 12, "asked about " + asked[0] + " states");
  }

  @Test
  void aStartingStateTheStoreCannotHoldFailsTheBatchInsteadOfBlamingEachInput() {
    // An initial state the store refuses (a configuration mistake): no input is to blame. The
    // refold rejected them one by one, telling each caller INPUT_REJECTED, a final answer.
    VersionedStore<String, Long, Long> bounded = refusing(
        (state, events) -> state >= 1_000 ? "cannot hold " + state : null,
        event -> null,
        state -> state >= 1_000 ? "too big" : null);
    FoldWrite<String, Long, Long, Long> fw =
        FoldWrite.<String, Long, Long, Long>builder(bounded, FoldWriteTest::add).initial(() -> 5_000L).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(1L, 2L, 3L));

    IllegalArgumentException e = assertInstanceOf(IllegalArgumentException.class, done.cause(), "" + done.result());
    assertEquals("cannot hold 5006", e.getMessage());
    assertEquals(List.of(), store.writes);
  }

  /**
   * The memory store, but its write throws, sending nothing, when {@code refuses} gives a reason
   * for the state and events, and it answers FoldWrite's questions with {@code refusal} (an event)
   * and {@code stateRefusal} (a state).
   */
  private VersionedStore<String, Long, Long> refusing(
      java.util.function.BiFunction<Long, List<? extends Long>, String> refuses,
      java.util.function.Function<Long, String> refusal, java.util.function.Function<Long, String> stateRefusal) {
    return new VersionedStore<>() {
      @Override
      public Future<Versioned<Long>> read(String key) {
        return store.read(key);
      }

      @Override
      public Future<Boolean> write(String key, Long state, long expected, List<? extends Long> events) {
        String why = refuses.apply(state, events);
        if (why != null) {
          throw new IllegalArgumentException(why);
        }
        return store.write(key, state, expected, events);
      }

      @Override
      public String refusal(Long event) {
        return refusal.apply(event);
      }

      @Override
      public String stateRefusal(Long state) {
        return stateRefusal.apply(state);
      }
    };
  }

  /** The memory store, but each write is applied and then answered by {@code answer}. */
  private VersionedStore<String, Long, Long> answering(java.util.function.Supplier<Future<Boolean>> answer) {
    return TestStores.of(store::read, (key, state, expected, events) -> {
      store.write(key, state, expected, events);
      return answer.get();
    });
  }

  @Test
  void aWriteThatFailsAfterTheStoreAppliedItIsReportedAsUnknownAndNotRetried() {
    // The connection broke while the write was committing: the row is written, the answer lost.
    IOException reset = new IOException("connection reset");
    FoldWrite<String, Long, Long, Long> fw = FoldWrite
        .<String, Long, Long, Long>builder(answering(() -> Future.failedFuture(reset)), FoldWriteTest::add)
        .initial(() -> 0L).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(5L));

    WriteOutcomeUnknownException e = assertInstanceOf(WriteOutcomeUnknownException.class, done.cause());
    assertSame(reset, e.getCause());
    assertEquals(1, e.attempt());
    assertEquals(List.of(List.of(5L)), store.writes, "written once, never retried");
    assertEquals(new Versioned<>(5L, 1), store.rows.get("k"));
  }

  @Test
  void aWriteTheStoreSaysWasRefusedIsReportedAsSuchNotAsUnknown() {
    // The database answered the write with an error: nothing written, and the store says so.
    WriteRefusedException refused = new WriteRefusedException("k", new IllegalStateException("check constraint"));
    FoldWrite<String, Long, Long, Long> fw = FoldWrite
        .<String, Long, Long, Long>builder(TestStores.of(store::read, (key, state, expected, events) ->
            Future.failedFuture(refused)), FoldWriteTest::add)
        .initial(() -> 0L).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(5L));

    assertSame(refused, done.cause(), "reported as unknown: " + done.cause());
    assertEquals(List.of(), store.writes);
  }

  @Test
  void aReadThatFailsKeepsItsOwnCauseSinceNothingWasWritten() {
    IllegalStateException down = new IllegalStateException("database down");
    VersionedStore<String, Long, Long> unreadable = TestStores.of(key -> Future.failedFuture(down),
        (key, state, expected, events) -> {
          throw new AssertionError("no write without a read");
        });
    FoldWrite<String, Long, Long, Long> fw =
        FoldWrite.<String, Long, Long, Long>builder(unreadable, FoldWriteTest::add).initial(() -> 0L).build();

    assertSame(down, fw.call("k", List.of(5L)).cause());
  }

  @Test
  void aWriteThatThrowsRefusedBeforeSendingAndKeepsItsOwnException() {
    IllegalArgumentException refused = new IllegalArgumentException("a state this store cannot hold");
    VersionedStore<String, Long, Long> refusing = TestStores.of(store::read, (key, state, expected, events) -> {
      throw refused;
    });
    FoldWrite<String, Long, Long, Long> fw =
        FoldWrite.<String, Long, Long, Long>builder(refusing, FoldWriteTest::add).initial(() -> 0L).build();

    assertSame(refused, fw.call("k", List.of(5L)).cause(), "nothing was written: not an unknown outcome");
  }

  @Test
  void anApplyRunningOutOfMemoryFailsTheBatchInsteadOfRejectingItsInputForGood() {
    OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
    FoldWrite<String, Long, Long, Long> fw = FoldWrite.<String, Long, Long, Long>builder(store, (sum, n) -> {
      if (n == 2) {
        throw oom;
      }
      return FoldDecision.accept(sum + n, sum + n);
    }).initial(() -> 0L).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(1L, 2L, 3L));

    // Not INPUT_REJECTED for 2 (a final answer, about the input) with 1 and 3 written: the batch
    // fails as a whole, FAILED for every caller, and a retry may well succeed.
    assertSame(oom, done.cause(), "out of memory is not the input's fault: " + done);
    assertEquals(List.of(), store.writes, "nothing written from a heap that just failed");
  }

  @Test
  void aWriteFailureWhoseTextCannotBeBuiltIsStillReportedAsUnknown() {
    // The write was applied, then failed with an exception whose own toString throws.
    IllegalStateException unprintable = new IllegalStateException("connection reset") {
      @Override
      public String toString() {
        throw new UnsupportedOperationException("no text");
      }
    };
    FoldWrite<String, Long, Long, Long> fw = FoldWrite
        .<String, Long, Long, Long>builder(answering(() -> Future.failedFuture(unprintable)), FoldWriteTest::add)
        .initial(() -> 0L).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(5L));

    WriteOutcomeUnknownException e = assertInstanceOf(WriteOutcomeUnknownException.class, done.cause(),
        "the write may have been applied; anything else reads as nothing written");
    assertSame(unprintable, e.getCause());
  }

  @Test
  void aWriteThatReturnsNoFutureIsReportedAsUnknownNotAsNothingWritten() {
    // A careless store: it writes, then returns null instead of a Future.
    FoldWrite<String, Long, Long, Long> fw = FoldWrite
        .<String, Long, Long, Long>builder(answering(() -> null), FoldWriteTest::add)
        .initial(() -> 0L).build();

    Future<FoldOutcomes<Long, Long>> done = fw.call("k", List.of(5L));

    assertInstanceOf(WriteOutcomeUnknownException.class, done.cause(), "it was written: " + done.cause());
    assertEquals(List.of(List.of(5L)), store.writes, "written once, never retried");
  }

  @Test
  void aConflictOnAKeyThatCannotDescribeItselfIsStillReportedAsAConflict() {
    // A key whose toString throws: building the conflict's message threw instead, and the callers
    // got that throw as the cause, not "version conflict ... nothing written".
    Object key = new Object() {
      @Override
      public String toString() {
        throw new UnsupportedOperationException("no text");
      }
    };

    WriteConflictException e = new WriteConflictException(key, 3);

    assertSame(key, e.key());
    assertTrue(e.getMessage().contains("in each of 3 attempts; nothing written"), e.getMessage());
  }
}
