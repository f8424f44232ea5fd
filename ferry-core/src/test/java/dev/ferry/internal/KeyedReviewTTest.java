package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Review T: {@code Ferry.keyed} against hostile callers and keys. */
class KeyedReviewTTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Promise<Map<Object, String>>> answers = new ArrayList<>();

  /** One call slot; each lookup's answer is completed by the test ({@link #answers}). */
  private KeyedFerry<Object, String> oneSlot() {
    return new KeyedFerry<>(loop, FerryConfig.builder().maxInFlightBatches(1).maxQueueing(16).build(), keys -> {
      Promise<Map<Object, String>> p = Promise.promise();
      answers.add(p);
      return p.future();
    });
  }

  /**
   * A key kept waiting by one patient caller (its slot held by a call that does not end), asked
   * for again and again by callers who give up: each one leaves the room as it gives up, so the
   * room admits the next, and none of them may stay held. They did, every one: each caller's
   * listener on the key's shared outcome held its promise until the key left.
   */
  @Test
  void callersWhoGaveUpOnAWaitingKeyAreNotHeldWhileItWaits() {
    KeyedFerry<Object, String> ferry = oneSlot();
    ferry.submit("busy"); // in flight, never answered
    Future<Optional<String>> patient = ferry.submit("k"); // waits, with no deadline
    int impatient = 2_000;
    List<WeakReference<Future<Optional<String>>>> gaveUp = new ArrayList<>();
    for (int i = 0; i < impatient; i++) {
      Future<Optional<String>> f = ferry.submit("k", Duration.ofMillis(1));
      loop.advanceMillis(1);
      assertTrue(f.failed(), "caller " + i + " was not given up: " + f);
      assertEquals(FerryError.TIMEOUT, ((FerryException) f.cause()).kind());
      gaveUp.add(new WeakReference<>(f));
    }
    assertEquals(impatient, ferry.metrics().timedOut());
    assertTrue(!patient.isComplete());
    long held = stillReachable(gaveUp);
    // A handful may legitimately stay (the list of timed callers is compacted in amortized O(1)).
    assertTrue(held < 100, held + " of " + impatient + " callers who gave up are still held by the waiting key");
  }

  private static long stillReachable(List<? extends WeakReference<?>> refs) {
    long held = refs.size();
    for (int i = 0; i < 20 && held > 0; i++) {
      System.gc();
      held = refs.stream().filter(r -> r.get() != null).count();
    }
    return held;
  }
}
