package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code Ferry.keyed} with a key its caller changes while it waits (ADR 0121: nothing is held once its work is over). */
class KeyedChangedKeyTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Promise<Map<List<String>, String>>> answers = new ArrayList<>();

  /** One call slot; each lookup's answer is completed by the test ({@link #answers}). */
  private KeyedFerry<List<String>, String> oneSlot() {
    return new KeyedFerry<>(loop, FerryConfig.builder().maxInFlightBatches(1).build(), keys -> {
      Promise<Map<List<String>, String>> p = Promise.promise();
      answers.add(p);
      return p.future();
    });
  }

  @Test
  void aKeyChangedWhileItWaitsIsAnsweredAndNotHeldOnceItsWorkIsOver() throws Exception {
    KeyedFerry<List<String>, String> ferry = oneSlot();
    ferry.submit(List.of("x")); // in flight
    List<String> key = new ArrayList<>(List.of("a"));
    Future<Optional<String>> first = ferry.submit(key);
    Future<Optional<String>> second = ferry.submit(key); // shares the waiting key
    key.add("b"); // the caller reuses its list while the key waits
    answers.get(0).complete(Map.of());
    answers.get(1).complete(Map.of(List.of("a", "b"), "v"));
    loop.advance(0);
    assertEquals(Optional.of("v"), first.result());
    assertEquals(Optional.of("v"), second.result());
    java.lang.reflect.Field waiting = KeyedFerry.class.getDeclaredField("waiting");
    waiting.setAccessible(true);
    assertEquals(0, ((Map<?, ?>) waiting.get(ferry)).size(), "the answered key's entry is still held");
  }

  /**
   * The late-caller check (a caller whose deadline passed before its key left fails with TIMEOUT)
   * holds for a key changed while it waited: it looked the key up again as it left, missed its
   * entry, and the late caller got the value (a hostile review).
   */
  @Test
  void aCallerWhoseDeadlinePassedBeforeItsChangedKeyLeftTimesOut() {
    KeyedFerry<List<String>, String> ferry = oneSlot();
    ferry.submit(List.of("x")); // in flight
    List<String> key = new ArrayList<>(List.of("a"));
    Future<Optional<String>> late = ferry.submit(key, Duration.ofMillis(10));
    Future<Optional<String>> patient = ferry.submit(key, Duration.ofMillis(50)); // shares the waiting key
    key.add("b"); // the caller reuses its list while the key waits
    // The loop is held up elsewhere: the first deadline passes while its timer waits, and the
    // call's completion reaches the loop first, freeing the slot for the changed key.
    loop.stallMillis(30);
    answers.get(0).complete(Map.of());
    loop.advance(0);
    assertEquals(2, answers.size(), "the changed key left in the second call");
    assertTrue(late.failed(), "the late caller waits for the value: " + late);
    assertEquals(FerryError.TIMEOUT, ((FerryException) late.cause()).kind());
    answers.get(1).complete(Map.of(List.of("a", "b"), "v"));
    loop.advance(0);
    assertEquals(Optional.of("v"), patient.result());
    assertEquals(1, ferry.metrics().timedOut());
    assertEquals(0, loop.liveTimers());
  }
}
