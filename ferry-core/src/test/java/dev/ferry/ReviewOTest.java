package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review O: the library API used as a hostile user would, in the corners earlier reviews left.
 * Each test is the smallest reproduction, in virtual time.
 */
class ReviewOTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final RecordingDownstream<String, String> down = new RecordingDownstream<>(loop);

  /**
   * A custom order that re-enters the ferry: the first time it is asked to compare, it submits
   * another input of the same key (or closes the ferry). The comparator runs inside the engine's
   * transition (the lane's priority queue), so the nested submit must not run there.
   */
  @Test
  void aComparatorThatSubmitsFromInsideCompareLeavesNoCallerUnanswered() {
    List<Future<String>> nested = new ArrayList<>();
    @SuppressWarnings("unchecked")
    PerKeyFerry<String, String, List<String>, String>[] self = new PerKeyFerry[1];
    boolean[] once = {false};
    Comparator<String> order = (a, b) -> {
      if (!once[0]) {
        once[0] = true;
        nested.add(self[0].submit("k4"));
      }
      return a.compareTo(b);
    };
    self[0] = new PerKeyFerry<>(loop, PerKeyConfig.defaults(), in -> "k", null, order, down, (in, result) -> in);
    Ferry<String, String> ferry = self[0];
    Future<String> k1 = ferry.submit("k1"); // a direct call: nothing compared
    loop.runPending();
    Future<String> k2 = ferry.submit("k2"); // waits alone in the lane: nothing compared
    loop.runPending();
    Future<String> k3 = ferry.submit("k3"); // compared with k2: the comparator submits k4
    loop.runPending();
    assertEquals(1, nested.size());
    for (int round = 0; round < 5 && down.openCount() > 0; round++) {
      down.succeedAll();
      loop.runPending();
    }
    List<String> sent = new ArrayList<>();
    down.calls.forEach(c -> sent.addAll(c.inputs));
    assertEquals(List.of("k1", "k2", "k3", "k4"), sent, "every input sent once, in the comparator's order");
    assertEquals(List.of("k1", "k2", "k3", "k4"),
        List.of(k1.result(), k2.result(), k3.result(), nested.get(0).result()),
        "every caller answered, the nested submit's too");
    assertEquals(0, ferry.metrics().queuedInputs());
    assertEquals(0, ferry.metrics().activeLanes());
  }

  @Test
  void aComparatorThatClosesTheFerryFromInsideCompareLeavesNoCallerUnanswered() {
    @SuppressWarnings("unchecked")
    PerKeyFerry<String, String, List<String>, String>[] self = new PerKeyFerry[1];
    List<Future<Void>> closed = new ArrayList<>();
    boolean[] once = {false};
    Comparator<String> order = (a, b) -> {
      if (!once[0]) {
        once[0] = true;
        closed.add(self[0].close());
      }
      return a.compareTo(b);
    };
    self[0] = new PerKeyFerry<>(loop, PerKeyConfig.defaults(), in -> "k", null, order, down, (in, result) -> in);
    Ferry<String, String> ferry = self[0];
    Future<String> k1 = ferry.submit("k1");
    loop.runPending();
    Future<String> k2 = ferry.submit("k2");
    loop.runPending();
    Future<String> k3 = ferry.submit("k3"); // compared with k2: the comparator closes the ferry
    loop.runPending();
    down.succeedAll();
    loop.runPending();
    assertEquals("k1", k1.result(), "the call in flight delivers");
    assertTrue(k2.failed() && k3.failed(), "the waiting inputs are answered: " + k2 + " " + k3);
    assertEquals(FerryError.CLOSED, ((FerryException) k2.cause()).kind());
    assertEquals(FerryError.CLOSED, ((FerryException) k3.cause()).kind());
    assertTrue(closed.get(0).succeeded(), "the close completes once the last call is over");
    assertEquals(1, down.calls.size(), "nothing sent after the close");
    assertEquals(0, ferry.metrics().queuedInputs());
  }

  /**
   * A config's JSON (and its toString, which prints it) writes durations in whole milliseconds:
   * a sub-millisecond batch delay was written as 0, which reads back as "no delay", turning direct
   * calls back on and batching off; a call timeout of 1.5 ms came back as 1 ms.
   */
  @Test
  void aConfigWithASubMillisecondDurationKeepsItsBehaviourThroughItsJson() {
    PerKeyConfig delayed = PerKeyConfig.builder().maxBatchDelay(Duration.ofNanos(500_000)).build();
    assertTrue(!delayed.directCallsEnabled(), "a positive delay turns direct calls off");
    PerKeyConfig back = PerKeyConfig.fromJson(delayed.toJson());
    assertTrue(!back.maxBatchDelay().isZero(), "a positive delay read back as none: " + delayed);
    assertEquals(delayed.directCallsEnabled(), back.directCallsEnabled(), delayed.toString());
    FerryConfig timed = FerryConfig.builder().callTimeout(Duration.ofNanos(1_500_000)).build();
    assertTrue(FerryConfig.fromJson(timed.toJson()).callTimeout().compareTo(timed.callTimeout()) >= 0,
        "a call timeout read back shorter than it was: " + timed);
    FerryConfig stream = FerryConfig.builder().maxBatchDelay(Duration.ofNanos(1)).build();
    assertTrue(!FerryConfig.fromJson(stream.toJson()).maxBatchDelay().isZero(), stream.toString());
  }
}
