package dev.ferry.internal;

import static dev.ferry.internal.PerKeyHarness.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyHarness.In;
import dev.ferry.testing.HostileFutures;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review AM: the Futures of the cluster hand-off path ({@link PerKeyFerry#handOff}), attacked as
 * review AJ attacked a batch call's. Only the cluster router supplies a forward today, and its
 * Futures are Vert.x's own, completed on the ferry's loop; these pin what the ferry does when a
 * forward's Future is not so well behaved.
 */
class ReviewAmTest {

  private static final IllegalStateException BROKEN = new IllegalStateException("succeeded() is broken");

  /**
   * A forward's Future that calls back with a null {@link AsyncResult}, or with one whose methods
   * throw: reading it threw inside the listener, after the listener had marked its caller as
   * answered, so that caller was never answered (the throw went to whoever completed the Future,
   * or, called back at once, was reported and the caller still left waiting). Its answer cannot
   * be read, and the input went to the new owner: FAILED with the throw, reported, as a batch
   * call's unreadable answer is since review AJ.
   */
  @Test
  void aForwardWhoseAnswerCannotBeReadFailsItsCallerAndTheHandOffGoesOn() {
    for (AsyncResult<String> broken : Arrays.<AsyncResult<String>>asList(null, HostileFutures.throwingResult(BROKEN))) {
      for (boolean atOnce : new boolean[] {true, false}) {
        String what = (broken == null ? "a null result" : "a throwing result") + (atOnce ? ", at once" : ", later");
        PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
        h.submit("k", "k1"); // in flight: the others wait
        Future<String> first = h.submit("k", "k2");
        Future<String> second = h.submit("k", "k3");
        Promise<String> late = Promise.promise();
        if (atOnce) {
          late.complete("from the new owner");
        }
        List<String> forwarded = new ArrayList<>();
        Future<Void> done = h.ferry.handOff("k", (in, remaining) -> {
          forwarded.add(in.label());
          return in.label().equals("k2") ? HostileFutures.answering(late.future(), broken)
              : Future.succeededFuture("elsewhere:" + in.label());
        });
        h.loop.runPending();
        h.succeed(0);
        if (!atOnce) {
          late.complete("from the new owner"); // on the loop's thread, as the router completes its own
          h.loop.runPending();
        }
        assertEquals(List.of("k2", "k3"), forwarded, what);
        assertEquals(FerryError.FAILED, failure(first).kind(), what + ": forwarded, so perhaps applied; unreadable");
        if (broken != null) {
          assertSame(BROKEN, failure(first).getCause(), what);
        }
        assertEquals("elsewhere:k3", second.result(), what);
        assertTrue(done.succeeded(), what);
        assertEquals(1, h.loop.reported.size(), what + ": reported once: " + h.loop.reported);
        assertEquals(0, h.ferry.metrics().activeLanes(), what);
      }
    }
  }

  /**
   * A forward's Future completed on a thread of its own (not the ferry's loop): its caller's
   * answer was given there, on that thread. A caller's answer handle is promised a call on the
   * ferry's loop (ADR 0097), and the flag that keeps a Future completing twice from answering
   * twice was read and written there, beside the loop, with no lock. The answer now comes back
   * to the loop first.
   */
  @Test
  void aForwardAnsweredOnAForeignThreadAnswersItsCallerOnTheLoopOnce() throws Exception {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
    h.submit("k", "k1");
    List<String> answers = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    h.ferry.submit(In.of("k", "k2"), 0, (value, failure) -> {
      answers.add(value);
      threads.add(Thread.currentThread());
    });
    h.loop.runPending();
    Promise<String> elsewhere = Promise.promise();
    Future<Void> done = h.ferry.handOff("k", (in, remaining) -> elsewhere.future());
    h.loop.runPending();
    h.succeed(0);
    assertTrue(done.succeeded());

    Thread foreign = new Thread(() -> {
      elsewhere.complete("from the new owner");
    }, "foreign");
    foreign.start();
    foreign.join();
    assertEquals(List.of(), answers, "not answered on the foreign thread");
    h.loop.runPending();
    assertEquals(List.of("from the new owner"), answers);
    assertEquals(List.of(Thread.currentThread()), threads, "answered on the loop");
    assertFalse(h.loop.reported.iterator().hasNext(), "nothing reported: " + h.loop.reported);
  }

  /**
   * {@code activeKeys()} asked off the loop: its Future was completed inside the transition that
   * took the snapshot, so its callbacks ran there. One that throws (Vert.x rethrows what a
   * callback of a promise with no context throws) ended that step before its effects ran: an
   * input the callback submitted, put off until the transition was over, was left unadmitted
   * until something else ran on the loop. The snapshot is now handed over as an effect, after
   * the transition, shielded as every answer is.
   */
  @Test
  void aCallbackOfActiveKeysThatThrowsLeavesNothingItSubmittedWaiting() throws Exception {
    PerKeyHarness h = new PerKeyHarness(PerKeyConfig.defaults());
    h.submit("k", "k1");
    IllegalStateException thrown = new IllegalStateException("the callback is broken");
    List<Future<String>> submitted = new ArrayList<>();
    List<List<String>> seen = new ArrayList<>();
    Thread foreign = new Thread(() -> h.ferry.activeKeys().onSuccess(keys -> {
      seen.add(keys);
      submitted.add(h.ferry.submit(In.of("j", "j1")));
      throw thrown;
    }), "foreign");
    foreign.start();
    foreign.join();
    try {
      h.loop.runPending();
    } catch (RuntimeException thrownIntoTheLoop) {
      // What a task throws, Vert.x reports to the context's exception handler, and goes on.
    }
    assertEquals(List.of(List.of("k")), seen);
    assertEquals(2, h.ferry.metrics().activeLanes(), "what the callback submitted is admitted at once");
    assertEquals(List.of(thrown), h.loop.reported);
    h.succeed(0);
    assertEquals(List.of("k[k1]", "j[j1]"), h.calls());
  }
}
