package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
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

  /**
   * A key whose hashCode throws once, on its third call: hashed at submit, looked up among the
   * waiting keys, then placed there.
   */
  private static final class FlakyKey {
    private final String name;
    private int hashes;

    FlakyKey(String name) {
      this.name = name;
    }

    @Override
    public int hashCode() {
      if (++hashes == 3) {
        throw new IllegalStateException("flaky hashCode of " + name);
      }
      return name.hashCode();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof FlakyKey k && k.name.equals(name);
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /**
   * A key whose hashCode throws as its waiting entry is placed for sharing (after the engine took
   * it): the throw escaped {@code submit} and its caller was never answered, though its key was
   * fetched. Every accepted caller gets exactly one answer, and submit returns a Future.
   */
  @Test
  void aKeyWhoseHashCodeThrowsAsItsEntryIsPlacedStillHasItsCallerAnswered() {
    KeyedFerry<Object, String> ferry = oneSlot();
    ferry.submit("busy"); // in flight: the next keys wait
    Future<Optional<String>> other = ferry.submit("o"); // waits: the waiting keys' map is in use
    FlakyKey flaky = new FlakyKey("f");
    List<Future<Optional<String>>> futures = new ArrayList<>();
    assertDoesNotThrow(() -> futures.add(ferry.submit(flaky)));
    answers.get(0).complete(Map.of());
    loop.advance(0);
    assertEquals(2, answers.size(), "the waiting keys left in one call");
    answers.get(1).complete(Map.of(flaky, "vf", "o", "vo"));
    loop.advance(0);
    assertEquals(Optional.of("vo"), other.result());
    Future<Optional<String>> mine = futures.get(0);
    assertTrue(mine.isComplete(), "the flaky key's caller is never answered");
    assertEquals(Optional.of("vf"), mine.result(), "its key was fetched");
    assertEquals(3, ferry.metrics().submitted());
    assertEquals(1, loop.reported.size(), "the broken key is reported once: " + loop.reported);
  }

  /** A key whose hashCode reads a field its caller may clear after submit (a reused object). */
  private static final class Account {
    String id;

    Account(String id) {
      this.id = id;
    }

    @Override
    public int hashCode() {
      return id.hashCode(); // NullPointerException once the id is cleared
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Account a && a.id.equals(id);
    }
  }

  /**
   * A key changed after submit so that its hashCode throws (ADR 0121) fails no other caller's key:
   * it made the ferry's own de-duplication of the batch's keys throw, and the whole batch failed
   * before the lookup was even called, every other key's caller answered FAILED.
   */
  @Test
  void aKeyWhoseHashCodeBreaksWhileItWaitsDoesNotFailTheOtherKeysOfItsBatch() {
    List<List<Object>> lookups = new ArrayList<>();
    List<Integer> reportedAtLookup = new ArrayList<>();
    KeyedFerry<Object, String> ferry = new KeyedFerry<>(loop, FerryConfig.builder().maxInFlightBatches(1).build(),
        keys -> {
          lookups.add(keys);
          reportedAtLookup.add(loop.reported.size());
          Promise<Map<Object, String>> p = Promise.promise();
          answers.add(p);
          return p.future();
        });
    ferry.submit("busy"); // in flight: the next keys wait
    Future<Optional<String>> other = ferry.submit("o");
    Account account = new Account("a");
    Future<Optional<String>> broken = ferry.submit(account);
    account.id = null; // the caller reuses its object while the key waits
    answers.get(0).complete(Map.of());
    loop.advance(0);
    assertEquals(2, lookups.size(), "the waiting keys were never looked up: " + other);
    assertEquals("o", lookups.get(1).get(0));
    assertTrue(lookups.get(1).get(1) == account && lookups.get(1).size() == 2, "the batch's keys: " + lookups.get(1).size());
    answers.get(1).complete(Map.of("o", "vo"));
    loop.advance(0);
    assertEquals(Optional.of("vo"), other.result(), "another caller's key failed with the broken one");
    assertTrue(broken.isComplete(), "the broken key's caller is answered");
    assertEquals(1, reportedAtLookup.get(1), "the key that broke the batch's de-duplication is reported as the"
        + " batch's keys are taken, before its lookup: " + loop.reported);
    assertTrue(loop.reported.get(0) instanceof NullPointerException, String.valueOf(loop.reported));
  }

  /**
   * The callers still waiting on a key are kept through the compaction that lets go of those who
   * gave up: a patient caller with no deadline and one with a deadline far off, behind 200 callers
   * who gave up, are answered with the key's value once it is fetched. Mutation testing: a
   * compaction that dropped every caller, not only those answered, left them unanswered for good.
   */
  @Test
  void callersStillWaitingOnAKeyAreAnsweredAfterManyGaveUpBesideThem() {
    KeyedFerry<Object, String> ferry = oneSlot();
    ferry.submit("busy"); // in flight until the test answers it
    Future<Optional<String>> patient = ferry.submit("k");
    Future<Optional<String>> timed = ferry.submit("k", Duration.ofHours(1));
    for (int i = 0; i < 200; i++) {
      Future<Optional<String>> f = ferry.submit("k", Duration.ofMillis(1));
      loop.advanceMillis(1);
      assertTrue(f.failed(), "caller " + i + " was not given up: " + f);
    }
    answers.get(0).complete(Map.of());
    loop.advance(0);
    assertEquals(2, answers.size(), "k is looked up once busy's call ended");
    answers.get(1).complete(Map.of("k", "vk"));
    loop.advance(0);
    assertEquals(Optional.of("vk"), patient.result(), "the patient caller: " + patient);
    assertEquals(Optional.of("vk"), timed.result(), "the caller whose deadline is far off: " + timed);
  }
}
