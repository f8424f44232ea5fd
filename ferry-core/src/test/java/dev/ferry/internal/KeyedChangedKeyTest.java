package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.FerryConfig;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code Ferry.keyed} with a key its caller changes while it waits (ADR 0121: nothing is held once its work is over). */
class KeyedChangedKeyTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Promise<Map<List<String>, String>>> answers = new ArrayList<>();

  @Test
  void aKeyChangedWhileItWaitsIsAnsweredAndNotHeldOnceItsWorkIsOver() throws Exception {
    KeyedFerry<List<String>, String> ferry = new KeyedFerry<>(loop, FerryConfig.builder().maxInFlightBatches(1).build(),
        keys -> {
          Promise<Map<List<String>, String>> p = Promise.promise();
          answers.add(p);
          return p.future();
        });
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
}
