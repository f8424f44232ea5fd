package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Completable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Callers answered through a handle instead of a Future (the verticle's path, ADR 0097): each
 * handle is called once with its own outcome, in the batch's order, a deadline still answers
 * TIMEOUT, and a handle that throws neither loses the other callers their answers nor breaks the
 * ferry.
 */
class AnswerHandleTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final RecordingDownstream<String, String> down = new RecordingDownstream<>(loop);
  private final List<String> answers = new ArrayList<>();

  private PerKeyFerry<String, String, List<String>, String> ferry() {
    return new PerKeyFerry<>(loop, PerKeyConfig.defaults(), s -> s.substring(0, 1), null, null, down,
        (in, r) -> in + "!");
  }

  private Completable<String> recording(String name) {
    return (value, failure) -> answers.add(name + "=" + (failure == null ? value
        : ((FerryException) failure).kind()));
  }

  @Test
  void everyHandleGetsItsOwnOutcomeOnceEvenWhenAnotherThrows() {
    PerKeyFerry<String, String, List<String>, String> ferry = ferry();
    ferry.submit("k0", 0, recording("a")); // leaves at once, alone
    ferry.submit("k1", 0, (value, failure) -> {
      throw new IllegalStateException("a caller's bug");
    });
    ferry.submit("k2", 0, recording("c"));
    down.succeed(0);
    down.succeed(1);
    assertEquals(List.of("a=k0!", "c=k2!"), answers);
    assertEquals(1, loop.reported.size(), "what the handle threw is reported to the loop");
    // The ferry goes on: the key's next input leaves and is answered.
    ferry.submit("k3", 0, recording("d"));
    down.succeed(2);
    assertEquals(List.of("a=k0!", "c=k2!", "d=k3!"), answers);
  }

  @Test
  void aDeadlineAnswersTimeoutAndAFailedCallAnswersFailed() {
    PerKeyFerry<String, String, List<String>, String> ferry = ferry();
    ferry.submit("k0", 0, recording("a"));
    ferry.submit("k1", TimeUnit.MILLISECONDS.toNanos(10), recording("late"));
    ferry.submit("k2", 0, recording("b"));
    loop.advanceMillis(10);
    assertEquals(List.of("late=TIMEOUT"), answers);
    down.fail(0, new RuntimeException("down"));
    down.fail(1, new RuntimeException("down"));
    assertEquals(List.of("late=TIMEOUT", "a=FAILED", "b=FAILED"), answers);
  }

  @Test
  void badInputIsAnsweredAtOnce() {
    PerKeyFerry<String, String, List<String>, String> ferry = ferry();
    ferry.submit(null, 0, recording("null"));
    ferry.submit("k", -1, recording("negative"));
    assertEquals(List.of("null=BAD_INPUT", "negative=BAD_INPUT"), answers);
    assertTrue(down.calls.isEmpty());
    assertEquals(0, ferry.metrics().submitted());
  }
}
