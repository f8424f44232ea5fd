package dev.ferry.internal;

import static dev.ferry.internal.PerKeyHarness.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.HostileFutures;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Review AN: what a handed-off input's caller is told when its forward fails
 * ({@link PerKeyFerry#handOff}). A forward's failure that the ferry cannot read as "never sent"
 * is {@code FAILED} (it may have been applied at the new owner); {@code CLOSED}, which says the
 * input was never applied, is kept for a {@link FerryException} that says so itself and for a
 * message the event bus delivered to no handler.
 */
class ReviewAnTest {

  /** Hands key k's one waiting input (k2) off to {@code forward} and returns its caller's Future. */
  private static Future<String> handedOffThrough(PerKeyHarness h, Driver.Forward<PerKeyHarness.In, String> forward) {
    h.submit("k", "k1"); // in flight: k2 waits
    Future<String> waiting = h.submit("k", "k2");
    Future<Void> done = h.ferry.handOff("k", forward);
    h.loop.runPending();
    h.succeed(0); // the key's call is over: k2 goes to the new owner
    assertTrue(done.succeeded(), "the hand-off completes");
    assertEquals(0, h.ferry.metrics().activeLanes());
    return waiting;
  }

  /** An {@link AsyncResult} that failed without naming a cause, as a hand-rolled Future's may. */
  private static <T> AsyncResult<T> failedWithoutCause() {
    return new AsyncResult<>() {
      @Override
      public T result() {
        return null;
      }

      @Override
      public Throwable cause() {
        return null;
      }

      @Override
      public boolean succeeded() {
        return false;
      }

      @Override
      public boolean failed() {
        return true;
      }
    };
  }

  /**
   * A forward whose Future failed with no cause: its caller read "the key's new owner could not
   * be reached: null", CLOSED (never applied) with no cause at all. The input went to the new
   * owner's side and nothing says it did not arrive: FAILED, which always carries a cause (ADR
   * 0141), and a message that says the forward failed without one.
   */
  @Test
  void aForwardThatFailsWithoutACauseIsFailedAndSaysSo() {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
    Future<String> waiting = handedOffThrough(h, (in, remaining) ->
        HostileFutures.answering(Future.succeededFuture("ignored"), failedWithoutCause()));
    FerryException failed = failure(waiting);
    assertEquals(FerryError.FAILED, failed.kind(), failed.getMessage());
    assertNotNull(failed.getCause(), "FAILED carries a cause");
    assertTrue(failed.getMessage().contains("failed without a cause"), failed.getMessage());
    assertFalse(failed.getMessage().endsWith("null"), failed.getMessage());
    assertFalse(h.loop.reported.iterator().hasNext(), "a failure, not a broken Future: " + h.loop.reported);
  }

  /**
   * A forward that failed with something other than a {@link FerryException} was answered CLOSED
   * ("could not be reached", never applied), whatever it was: a timeout waiting for the owner's
   * answer, the owner's own failure, an I/O error halfway. None of these says the input never
   * left; each may follow its arrival. FAILED, the failure kept as the cause.
   */
  @Test
  void aForwardThatFailsWithAnythingUnreadableIsFailedWithThatCause() {
    List<Throwable> unreadable = List.of(
        new RuntimeException("the connection dropped"),
        new java.io.IOException("broken pipe"),
        new ReplyException(ReplyFailure.TIMEOUT, "timed out waiting for a reply"),
        new ReplyException(ReplyFailure.RECIPIENT_FAILURE, 500, "the owner failed"),
        new ReplyException(ReplyFailure.ERROR, "the message could not be written"));
    for (Throwable cause : unreadable) {
      PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
      Future<String> waiting = handedOffThrough(h, (in, remaining) -> Future.failedFuture(cause));
      FerryException failed = failure(waiting);
      assertEquals(FerryError.FAILED, failed.kind(), cause + ": " + failed.getMessage());
      assertSame(cause, failed.getCause(), cause.toString());
      assertTrue(failed.getMessage().contains("may have been applied"), failed.getMessage());
    }
  }

  /**
   * What does say the input never left keeps its CLOSED: the event bus found no handler for the
   * message (so none received it; the cluster router hands an input back unapplied this way and
   * reads the cause to send it back to its sender), and a FerryException, passed on as it is.
   */
  @Test
  void aForwardThatWasNeverDeliveredStaysClosedWithItsCause() {
    ReplyException noHandlers = new ReplyException(ReplyFailure.NO_HANDLERS, 408, "handed back, never applied");
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
    FerryException closed = failure(handedOffThrough(h, (in, remaining) -> Future.failedFuture(noHandlers)));
    assertEquals(FerryError.CLOSED, closed.kind(), closed.getMessage());
    assertSame(noHandlers, closed.getCause(), "the router reads its hand-back from the cause");

    for (FerryError kind : FerryError.values()) {
      FerryException own = new FerryException(kind, "the new owner's own answer");
      PerKeyHarness k = new PerKeyHarness(PerKeyConfig.defaults());
      assertSame(own, failure(handedOffThrough(k, (in, remaining) -> Future.failedFuture(own))), kind.toString());
    }
  }

  /**
   * A forward that throws, or returns null instead of a Future, was answered CLOSED as if it had
   * never been made. It was called with the input: what it did before it threw (or forgot to
   * return its Future) cannot be known, so the input may have left. FAILED.
   */
  @Test
  void aForwardThatThrowsOrReturnsNullIsFailed() {
    List<Supplier<Future<String>>> broken = new ArrayList<>();
    broken.add(() -> {
      throw new IllegalStateException("the forward threw");
    });
    broken.add(() -> null);
    for (Supplier<Future<String>> forward : broken) {
      PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
      FerryException failed = failure(handedOffThrough(h, (in, remaining) -> forward.get()));
      assertEquals(FerryError.FAILED, failed.kind(), failed.getMessage());
      assertNotNull(failed.getCause());
    }
  }

  /** A forward's later answer is still its caller's, once (the mapping is made on the loop). */
  @Test
  void aForwardThatFailsLaterIsMappedWhenItFails() {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
    Promise<String> later = Promise.promise();
    Future<String> waiting = handedOffThrough(h, (in, remaining) -> later.future());
    assertFalse(waiting.isComplete());
    RuntimeException cause = new RuntimeException("lost halfway");
    later.fail(cause);
    h.loop.runPending();
    assertEquals(FerryError.FAILED, failure(waiting).kind());
    assertSame(cause, failure(waiting).getCause());
  }
}
