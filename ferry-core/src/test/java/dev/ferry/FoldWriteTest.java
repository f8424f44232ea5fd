package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** FoldWrite's own rules, on an in-memory store whose futures complete at once. */
class FoldWriteTest {
  /** A counter per key; the state is the running sum. */
  static final class MemoryStore implements VersionedStore<String, Long, Long> {
    final Map<String, Versioned<Long>> rows = new HashMap<>();
    final List<List<? extends Long>> writes = new ArrayList<>();

    @Override
    public Future<Versioned<Long>> read(String key) {
      return Future.succeededFuture(rows.getOrDefault(key, Versioned.absent()));
    }

    @Override
    public Future<Boolean> write(String key, Long state, long expected, List<? extends Long> events) {
      writes.add(List.copyOf(events));
      if (rows.getOrDefault(key, Versioned.absent()).version() != expected) {
        return Future.succeededFuture(false);
      }
      rows.put(key, new Versioned<>(state, expected + 1));
      return Future.succeededFuture(true);
    }
  }

  // Adds positive numbers; refuses the rest; throws on 13 (a buggy apply).
  static FoldDecision<Long, Long> add(Long sum, Long n) {
    if (n == 13) {
      throw new IllegalStateException("unlucky");
    }
    return n > 0 ? FoldDecision.accept(sum + n, sum + n) : FoldDecision.reject("not positive: " + n);
  }

  private final MemoryStore store = new MemoryStore();
  private final FoldWrite<String, Long, Long, Long> fw =
      FoldWrite.<String, Long, Long, Long>builder(store, FoldWriteTest::add).initial(() -> 0L).build();

  @Test
  void aThrowingApplyRejectsOnlyItsInput() {
    Long one = 1L;
    Long unlucky = 13L;
    Long two = 2L;
    FoldOutcomes<Long, Long> out = fw.call("k", List.of(one, unlucky, two)).result();
    assertEquals(1L, fw.extract(one, out));
    FerryException e = assertThrows(FerryException.class, () -> fw.extract(unlucky, out));
    assertEquals(FerryError.INPUT_REJECTED, e.kind());
    assertTrue(e.getMessage().contains("unlucky"), e.getMessage());
    assertEquals(3L, fw.extract(two, out));
    assertEquals(List.of(List.of(1L, 2L)), store.writes);
  }

  @Test
  void theSameInputObjectTwiceGetsEachOutcomeInBatchOrder() {
    Long five = Long.valueOf(5000); // one object, outside the Long cache, submitted twice
    FoldOutcomes<Long, Long> out = fw.call("k", List.of(five, five)).result();
    assertEquals(5000L, fw.extract(five, out));
    assertEquals(10000L, fw.extract(five, out));
  }

  @Test
  void aForeignInputIsAnError() {
    FoldOutcomes<Long, Long> out = fw.call("k", List.of(1L)).result();
    assertThrows(IllegalArgumentException.class, () -> out.of(Long.valueOf(7000)));
  }

  @Test
  void conflictsAreRetriedUpToMaxAttemptsThenFailWithoutWriting() {
    VersionedStore<String, Long, Long> alwaysBehind = new VersionedStore<>() {
      int version;

      @Override
      public Future<Versioned<Long>> read(String key) {
        return Future.succeededFuture(new Versioned<>(0L, ++version));
      }

      @Override
      public Future<Boolean> write(String key, Long state, long expected, List<? extends Long> events) {
        return Future.succeededFuture(false);
      }
    };
    FoldWrite<String, Long, Long, Long> two =
        FoldWrite.<String, Long, Long, Long>builder(alwaysBehind, FoldWriteTest::add).initial(() -> 0L).maxAttempts(2).build();
    Future<FoldOutcomes<Long, Long>> f = two.call("k", List.of(1L));
    WriteConflictException e = assertInstanceOf(WriteConflictException.class, f.cause());
    assertEquals(2, e.attempts());
  }

  @Test
  void anInvalidBuilderNamesEveryViolation() {
    InvalidConfigException e = assertThrows(InvalidConfigException.class,
        () -> FoldWrite.<String, Long, Long, Long>builder(store, FoldWriteTest::add).maxAttempts(0).build());
    assertEquals(2, e.violations().size(), e.getMessage());
    assertTrue(e.getMessage().contains("maxAttempts = 0"), e.getMessage());
    assertTrue(e.getMessage().contains("initial"), e.getMessage());
  }
}
