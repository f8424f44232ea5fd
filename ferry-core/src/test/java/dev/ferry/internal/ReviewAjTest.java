package dev.ferry.internal;

import static dev.ferry.internal.PerKeyHarness.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyHarness.In;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

/** Review AJ: the library API attacked as a careless or hostile Vert.x user would. */
class ReviewAjTest {

  /**
   * A caller may complete the Future its submit returned: a Vert.x 5 Future made by a promise is
   * that promise, so a caller who casts it can "cancel" its own submit. The ferry's later answer
   * then finds it complete; taken for the ferry answering twice, it threw out of the effect that
   * answers the batch (where assertions are on), and the callers after it in the batch were never
   * answered.
   */
  @Test
  @SuppressWarnings("unchecked")
  void aCallerThatCompletesItsOwnFutureDoesNotKeepTheRestOfItsBatchFromTheirAnswers() {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
    Future<String> first = h.submit("k", "k1"); // a direct call: the key is busy now
    Future<String> mine = h.submit("k", "k2");
    Future<String> next = h.submit("k", "k3");
    Future<String> waiting = h.submit("k", "k4");
    h.succeed(0);
    assertEquals("k1", first.result());
    assertEquals("k[k2, k3, k4]", h.call(1));
    assertTrue(((Promise<String>) mine).tryFail("given up by its caller"), "the caller cancels its own submit");

    h.succeed(1);
    assertEquals("given up by its caller", mine.cause().getMessage(), "the caller's own answer stands");
    assertEquals("k3", next.result(), "the caller after it in the batch is answered");
    assertEquals("k4", waiting.result());
    assertEquals(0, h.ferry.metrics().activeLanes());
  }

  /** The same, for a caller failed by the engine (its deadline), and for a batch that failed. */
  @Test
  @SuppressWarnings("unchecked")
  void aCallerThatCompletesItsOwnFutureDoesNotKeepTheOthersFromAFailureOrAClose() {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
    h.submit("k", "k1");
    Future<String> mine = h.submit("k", "k2");
    Future<String> next = h.submit("k", "k3");
    assertTrue(((Promise<String>) mine).tryComplete("mine"));
    h.succeed(0);
    h.fail(1, new IllegalStateException("down"));
    assertEquals("mine", mine.result());
    assertEquals(FerryError.FAILED, failure(next).kind());

    h.submit("j", "j1");
    Future<String> cancelled = h.submit("j", "j2");
    Future<String> closedOut = h.submit("j", "j3");
    assertTrue(((Promise<String>) cancelled).tryComplete("cancelled"));
    h.ferry.close();
    h.loop.runPending();
    assertEquals(FerryError.CLOSED, failure(closedOut).kind(), "the caller waiting after it is answered CLOSED");
  }

  /**
   * The Future {@code close()} returned was the ferry's own promise: a caller who completed it (to
   * stop waiting) made the ferry read as closed to everyone, its owner's close hook and its probes
   * included, while its call was still in flight.
   */
  @Test
  @SuppressWarnings("unchecked")
  void aCallerThatCompletesTheFutureOfItsCloseDoesNotCloseTheFerryForOthers() {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
    Future<String> inFlight = h.submit("k", "k1");
    Future<Void> mine = h.ferry.close();
    h.loop.runPending();
    assertTrue(((Promise<Void>) mine).tryComplete(), "the caller stops waiting for its close");

    Future<Void> theirs = h.ferry.close();
    Future<Void> drained = h.ferry.drain(java.time.Duration.ofSeconds(1));
    h.loop.runPending();
    assertTrue(!theirs.isComplete() && !drained.isComplete(), "the ferry is not closed while its call is out");
    h.succeed(0);
    assertEquals("k1", inFlight.result());
    assertTrue(theirs.succeeded() && drained.succeeded(), "closed once its last call is over");
  }

  /**
   * An input heavier on its own than {@code maxQueuedWeight} is REJECTED whatever waits, an empty
   * ferry included: a caller retrying on REJECTED (429, "the room is full") would retry for ever.
   * The answer says so, instead of reading as a full room.
   */
  @Test
  void anInputHeavierThanTheWholeWaitingRoomIsToldItCanNeverWait() {
    dev.ferry.testing.VirtualLoop loop = new dev.ferry.testing.VirtualLoop();
    StreamFerry<Long, java.util.List<Long>, Long> ferry = new StreamFerry<>(loop,
        dev.ferry.FerryConfig.builder().maxQueuedWeight(10).build(), w -> w,
        inputs -> Future.succeededFuture(inputs), (in, out) -> in);
    Future<Long> heavy = ferry.submit(11L);
    loop.runPending();
    assertEquals(FerryError.REJECTED, failure(heavy).kind(), "the kind is unchanged (the contract's 429)");
    assertTrue(failure(heavy).getMessage().contains("more than maxQueuedWeight (10) on its own"),
        () -> "the message says the input can never wait: " + failure(heavy).getMessage());
    Future<Long> light = ferry.submit(10L);
    loop.runPending();
    assertEquals(10L, light.result(), "an input that fits is sent");
  }

  /**
   * A hand-rolled Future whose {@code onComplete} calls back (later, from another thread) with a
   * null {@link io.vertx.core.AsyncResult}, or with one whose methods throw: reading it threw inside
   * the transition that ends the call, which Vert.x reports and goes past, so the call never
   * ended. Its callers were failed only at the call timeout, and its key stayed reserved for good
   * (no later input of it ever sent, no close ever completing). As ADR 0129 takes a Future that
   * cannot be listened to, a Future whose answer cannot be read is taken as failed, with the throw.
   */
  @Test
  void aCallWhoseFutureAnswersWithNoResultOrOneThatCannotBeReadFailsItsCallersAndFreesItsKey() throws Exception {
    for (io.vertx.core.AsyncResult<java.util.List<String>> broken : java.util.Arrays.asList(
        null, dev.ferry.testing.HostileFutures.<java.util.List<String>>throwingResult(
            new IllegalStateException("succeeded() is broken")))) {
      dev.ferry.testing.VirtualLoop loop = new dev.ferry.testing.VirtualLoop();
      Promise<java.util.List<String>> downstream = Promise.promise();
      int[] calls = {0};
      PerKeyFerry<String, String, java.util.List<String>, String> ferry = new PerKeyFerry<>(loop,
          PerKeyConfig.defaults(), s -> "k", null, null,
          (key, inputs) -> calls[0]++ == 0
              ? dev.ferry.testing.HostileFutures.answering(downstream.future(), broken)
              : Future.succeededFuture(inputs),
          (in, out) -> in);
      Future<String> first = ferry.submit("a");
      loop.runPending();
      Thread foreign = new Thread(() -> downstream.complete(java.util.List.of("a")), "foreign");
      foreign.start();
      foreign.join();
      try {
        loop.runPending();
      } catch (RuntimeException thrownIntoTheLoop) {
        // What a task throws, Vert.x reports to the context's exception handler, and goes on.
      }
      assertEquals(FerryError.FAILED, failure(first).kind(), "failed at once, not at the call timeout");
      Future<String> second = ferry.submit("b");
      loop.runPending();
      assertEquals("b", second.result(), "the key is free again");
      Future<Void> closed = ferry.close();
      loop.runPending();
      assertTrue(closed.succeeded(), "no call is left in flight");
    }
  }
}
