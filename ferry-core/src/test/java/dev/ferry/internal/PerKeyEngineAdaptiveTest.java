package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Dispatch;
import dev.ferry.FerryMetrics;
import dev.ferry.PerKeyConfig;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Every test of {@link PerKeyEngineTest} again in the adaptive mode, plus the rules of adaptive
 * dispatch itself (ADR 0011, 0014): one limit over every call, idle keys first but, while busy keys
 * wait, about as many inputs as the last busy grant carried (never more grants), busy keys oldest input first,
 * a learned limit.
 */
class PerKeyEngineAdaptiveTest extends PerKeyEngineTest {
  @Override
  Dispatch mode() {
    return Dispatch.ADAPTIVE;
  }

  // The tests of PerKeyEngineTest, run here in the adaptive mode (JUnit does not inherit @Nested classes).
  @Nested
  class Guarantees extends PerKeyEngineTest.Guarantees {}

  @Nested
  class BatchForming extends PerKeyEngineTest.BatchForming {}

  @Nested
  class DirectIdleKeys extends PerKeyEngineTest.DirectIdleKeys {}

  @Nested
  class Bounds extends PerKeyEngineTest.Bounds {}

  @Nested
  class Outcomes extends PerKeyEngineTest.Outcomes {}

  @Nested
  class Deadlines extends PerKeyEngineTest.Deadlines {}

  @Nested
  class CallTimeout extends PerKeyEngineTest.CallTimeout {}

  @Nested
  class CallTimeoutsWithOneTimer extends PerKeyEngineTest.CallTimeoutsWithOneTimer {}

  @Nested
  class Closing extends PerKeyEngineTest.Closing {}

  @Nested
  class Metrics extends PerKeyEngineTest.Metrics {}

  @Nested
  class Probing extends PerKeyEngineTest.Probing {}

  @Nested
  class HandOff extends PerKeyEngineTest.HandOff {}

  static PerKeyConfig pinned(int limit, PerKeyConfig.Builder b) {
    return b.dispatch(Dispatch.ADAPTIVE).maxInFlightBatches(Math.max(limit, 1)).pinnedLimit(limit).build();
  }

  @Nested
  class AdaptiveDispatch {
    @Test
    void everyCallCountsAgainstTheLimitDirectCallsIncluded() {
      PerKeyHarness h = new PerKeyHarness(pinned(2, config()));
      h.submit("a", "a1"); // direct
      h.submit("b", "b1"); // direct
      h.submit("c", "c1"); // the limit is reached: c's lane waits
      assertEquals(List.of("a[a1]", "b[b1]"), h.calls());
      FerryMetrics m = h.ferry.metrics();
      assertEquals(2, m.callLimit());
      assertEquals(1, m.callsWaiting());
      assertEquals(1, m.queuedInputs(), "past the limit an idle key's input waits, counted in maxQueueing");
      h.succeed(0);
      assertEquals("c[c1]", h.call(2));
      assertEquals(0, h.ferry.metrics().callsWaiting());
      assertEquals(null, h.engine().brokenInvariant());
    }

    @Test
    void idleKeysGoFirstButTakeAtMostEveryOtherGrantWhileBusyKeysWait() {
      PerKeyHarness h = new PerKeyHarness(pinned(1, config().maxBatchSize(1)));
      h.submit("a", "a1"); // direct
      h.submit("a", "a2");
      h.submit("a", "a3");
      h.submit("x", "x1"); // idle keys: they wait in the idle line
      h.submit("y", "y1");
      h.submit("z", "z1");
      for (int i = 0; i < 6; i++) {
        h.succeed(i);
        assertEquals(null, h.engine().brokenInvariant());
      }
      assertEquals(List.of("a[a1]", "x[x1]", "a[a2]", "y[y1]", "a[a3]", "z[z1]"), h.calls());
    }

    @Test
    void aKeyThatWentAheadOfWaitingBusyKeysGetsNoSecondHeadStartWhileTheyWait() {
      // ADR 0183: b was granted from the idle line while c2 (and a3) waited in the busy line, and
      // let go of after its call. Its next input gets no second head start while c2 waits: it
      // joins the busy line by its age, behind c2 (before, idle b2 took the credit a[a3] left:
      // ... a[a3], b[b2], c[c2]).
      PerKeyHarness h = new PerKeyHarness(pinned(1, config().maxBatchSize(1)));
      h.submit("a", "a1"); // direct
      h.submit("a", "a2");
      h.submit("a", "a3");
      h.submit("c", "c1"); // idle line
      h.submit("c", "c2");
      h.submit("b", "b1"); // idle line
      h.succeed(0); // a joins the busy line; c[c1] (idle)
      h.succeed(1); // c joins the busy line; a[a2] (busy)
      h.succeed(2); // a joins the busy line again (a3, older than c2); b[b1] (idle)
      h.succeed(3); // b is let go of; a[a3] (busy), c2 waits
      h.submit("b", "b2");
      h.succeed(4);
      h.succeed(5);
      assertEquals(List.of("a[a1]", "c[c1]", "a[a2]", "b[b1]", "a[a3]", "c[c2]", "b[b2]"), h.calls());
      assertEquals(null, h.engine().brokenInvariant());
    }

    @Test
    void aKeyKeepsItsPlaceInAnIdleLineThatIsBehindTheBusyLine() {
      // ADR 0196: b was granted from the idle line while c3 waited in the busy line, and let go of
      // after its call; when b2 comes, the idle line's head d1 was admitted before the busy line's
      // head e2. The back of that idle line is no head start over the busy line, so b2 joins it (as
      // before ADR 0183) and is sent after d1, in the idle line's turn. With ADR 0183 alone b2 was
      // sent to the busy line behind e2 and e3 (... e[e2], e[e3], b[b2]): at overload with many
      // keys, keys kept behind a backlog of seconds with the one input they had.
      PerKeyHarness h = new PerKeyHarness(pinned(1, config().maxBatchSize(1)));
      h.submit("a", "a1"); // direct
      h.submit("a", "a2");
      h.submit("c", "c1"); // idle line: c, e, b, d
      h.submit("e", "e1");
      h.submit("b", "b1");
      h.submit("d", "d1");
      h.submit("c", "c2");
      h.submit("c", "c3");
      h.submit("e", "e2");
      h.submit("e", "e3");
      h.succeed(0); // a joins the busy line (a2); c[c1] (idle)
      h.succeed(1); // c joins the busy line (c2); a[a2] (busy)
      h.succeed(2); // e[e1] (idle)
      h.succeed(3); // e joins the busy line (e2); c[c2] (busy)
      h.succeed(4); // c joins the busy line (c3); b[b1] (idle, over c3 and e2)
      h.succeed(5); // b is let go of, remembered; c[c3] (busy)
      h.submit("b", "b2"); // the idle line's head d1 is older than the busy head e2
      for (int i = 6; i < 10; i++) {
        h.succeed(i);
        assertEquals(null, h.engine().brokenInvariant());
      }
      assertEquals(List.of("a[a1]", "c[c1]", "a[a2]", "e[e1]", "c[c2]", "b[b1]", "c[c3]", "d[d1]", "e[e2]", "b[b2]",
          "e[e3]"), h.calls());
    }

    @Test
    void aKeyCalledDirectlyKeepsItsHeadStart() {
      // The head start stays for a key whose last call was not one (b1 was called directly, with
      // nothing waiting): b2 goes ahead of a3 as an idle key's input.
      PerKeyHarness h = new PerKeyHarness(pinned(1, config().maxBatchSize(1)));
      h.submit("b", "b1"); // direct
      h.succeed(0);
      h.submit("a", "a1"); // direct
      h.submit("a", "a2");
      h.submit("a", "a3");
      h.succeed(1); // a[a2] (busy)
      h.submit("b", "b2"); // idle line, a3 not waiting yet (a is in flight)
      h.succeed(2); // a joins the busy line (a3); b[b2] goes first (idle)
      assertEquals(List.of("b[b1]", "a[a1]", "a[a2]", "b[b2]"), h.calls());
      assertEquals(null, h.engine().brokenInvariant());
    }

    @Test
    void idleKeysTakeAtMostAsManyGrantsAsTheBusyGrantBeforeThemCarriedInputs() {
      // ADR 0014: a busy grant of n inputs lets idle keys take up to n grants before the next one,
      // so quiet keys (one input a call) keep up beside hot keys whose calls carry many.
      PerKeyHarness h = new PerKeyHarness(pinned(1, config().maxBatchSize(3)));
      h.submit("a", "a1"); // direct
      h.submit("a", "a2");
      h.submit("a", "a3");
      h.submit("a", "a4");
      for (String k : List.of("x", "y", "z", "w", "v")) {
        h.submit(k, k + "1"); // idle keys: they wait in the idle line
      }
      h.succeed(0); // a joins the busy line; the first grant may go to an idle key
      h.succeed(1); // then a busy grant of three inputs
      h.submit("a", "a5");
      h.submit("a", "a6");
      for (int i = 2; i < 8; i++) {
        h.succeed(i);
        assertEquals(null, h.engine().brokenInvariant());
      }
      // Every other grant would have sent a[a5, a6] right after y[y1].
      assertEquals(List.of("a[a1]", "x[x1]", "a[a2, a3, a4]", "y[y1]", "z[z1]", "w[w1]", "a[a5, a6]", "v[v1]"),
          h.calls());
    }

    @Test
    void anIdleKeyThatGatheredSeveralInputsSpendsTheCreditByItsInputs() {
      // ADR 0014's addendum: an idle lane that waited long enough to gather inputs (at overload, many
      // keys do) takes as much of the busy keys' turn as it sends. Spent per grant, x[x1, x2] cost
      // one unit of a's three and z went ahead of a too: idle keys sent four inputs to a's three.
      PerKeyHarness h = new PerKeyHarness(pinned(1, config().maxBatchSize(3)));
      h.submit("a", "a1"); // direct
      h.submit("a", "a2");
      h.submit("a", "a3");
      h.submit("a", "a4");
      h.submit("w", "w1"); // idle keys, in the idle line
      h.submit("x", "x1");
      h.submit("x", "x2");
      h.submit("y", "y1");
      h.submit("z", "z1");
      h.succeed(0); // a joins the busy line; the credit of 1 lets w through first
      h.succeed(1); // a's busy grant of three inputs: a credit of three
      h.submit("a", "a5");
      for (int i = 2; i < 7; i++) {
        h.succeed(i);
        assertEquals(null, h.engine().brokenInvariant());
      }
      assertEquals(List.of("a[a1]", "w[w1]", "a[a2, a3, a4]", "x[x1, x2]", "y[y1]", "a[a5]", "z[z1]"), h.calls());
    }

    @Test
    void anIdleCallMayOverdrawTheCreditByUpToOneBatch() {
      // ADR 0014's addendum: an idle lane is granted while the credit is positive and carries all it
      // holds, so after a busy grant of one input an idle call of three goes: idle keys send fewer
      // inputs than the busy grant plus one batch, not at most as many as busy keys.
      PerKeyHarness h = new PerKeyHarness(pinned(1, config().maxBatchSize(3)));
      h.submit("a", "a1"); // direct
      h.submit("a", "a2");
      h.submit("w", "w1");
      h.succeed(0); // a joins the busy line; the credit of 1 lets w through
      h.submit("x", "x1");
      h.submit("x", "x2");
      h.submit("x", "x3");
      h.succeed(1); // the credit is spent: a busy grant of one input, a credit of one
      h.submit("a", "a3");
      for (int i = 2; i < 5; i++) {
        h.succeed(i);
        assertEquals(null, h.engine().brokenInvariant());
      }
      assertEquals(List.of("a[a1]", "w[w1]", "a[a2]", "x[x1, x2, x3]", "a[a3]"), h.calls());
    }

    @Test
    void busyBatchesCutToOneByWeightStillAlternateWithIdleCallsOfSeveralInputs() {
      // Neither line starves when the weight bound keeps busy calls at one input and idle lanes
      // gathered several: each busy grant gives a credit of one, each idle call overdraws it.
      PerKeyHarness h = new PerKeyHarness(pinned(1, config().maxBatchSize(3).maxBatchWeight(5)));
      for (int i = 1; i <= 4; i++) {
        h.submit(PerKeyHarness.In.weighing("a", "a" + i, 5)); // a1 direct
      }
      for (String k : List.of("x", "y")) {
        for (int i = 1; i <= 3; i++) {
          h.submit(k, k + i);
        }
      }
      h.submit("z", "z1");
      for (int i = 0; i < 7; i++) {
        h.succeed(i);
        assertEquals(null, h.engine().brokenInvariant());
      }
      assertEquals(List.of("a[a1]", "x[x1, x2, x3]", "a[a2]", "y[y1, y2, y3]", "a[a3]", "z[z1]", "a[a4]"), h.calls());
    }

    @Test
    void withNoBusyKeyWaitingIdleKeysTakeEveryGrant() {
      PerKeyHarness h = new PerKeyHarness(pinned(1, config()));
      h.submit("a", "a1"); // direct
      h.submit("x", "x1");
      h.submit("y", "y1");
      h.succeed(0);
      h.succeed(1);
      assertEquals(List.of("a[a1]", "x[x1]", "y[y1]"), h.calls());
    }

    @Test
    void busyKeysAreServedOldestWaitingInputFirst() {
      PerKeyHarness h = new PerKeyHarness(pinned(1, config().directIdleKeys(false).maxBatchSize(1)));
      h.submit("a", "a1");
      h.submit("a", "a2");
      h.submit("b", "b1");
      h.submit("c", "c1");
      h.submit("b", "b2");
      for (int i = 0; i < 5; i++) {
        h.succeed(i);
      }
      // a2 came before b1: the back-of-the-line rule would have sent b1 and c1 first.
      assertEquals(List.of("a[a1]", "a[a2]", "b[b1]", "c[c1]", "b[b2]"), h.calls());
    }

    @Test
    void aKeyWithABacklogIsCalledAgainUntilItsBacklogIsYoungerThanTheOthers() {
      PerKeyHarness h = new PerKeyHarness(pinned(1, config().directIdleKeys(false).maxBatchSize(2)));
      for (int i = 1; i <= 6; i++) {
        h.submit("hot", "h" + i);
      }
      h.submit("cold", "c1");
      h.submit("hot", "h7");
      for (int i = 0; i < 5; i++) {
        h.succeed(i);
      }
      // Round robin would give cold its turn after h[h2, h3]; by age, the hot key's older inputs go first.
      assertEquals(List.of("hot[h1]", "hot[h2, h3]", "hot[h4, h5]", "hot[h6, h7]", "cold[c1]"), h.calls());
    }

    @Test
    void aLearnedLimitStartsAtOneAndGrowsWhileTheDownstreamKeepsItsLatency() {
      PerKeyHarness h = new PerKeyHarness(PerKeyConfig.builder().dispatch(Dispatch.ADAPTIVE).maxInFlightBatches(64).build());
      assertEquals(1, h.ferry.metrics().callLimit());
      // 32 keys always have work; each call takes 2 ms whatever the concurrency: no queueing.
      for (int k = 0; k < 32; k++) {
        h.submit("k" + k, "k" + k);
      }
      for (int round = 0; round < 40; round++) {
        h.loop.advanceMillis(2);
        List<Integer> open = openCalls(h);
        for (int i : open) {
          String key = h.down.calls.get(i).key;
          h.succeed(i);
          h.submit(key, key + "-" + round);
        }
        assertEquals(null, h.engine().brokenInvariant());
        assertTrue(h.down.openCount() <= h.ferry.metrics().callLimit());
      }
      FerryMetrics m = h.ferry.metrics();
      assertTrue(m.callLimit() >= 32, "the limit grew to cover the 32 keys: " + m.callLimit());
      assertEquals(2000, m.seenLatencyMicros());
      assertEquals(2000, m.seenFloorMicros());
    }

    private List<Integer> openCalls(PerKeyHarness h) {
      List<Integer> open = new java.util.ArrayList<>();
      for (int i = 0; i < h.down.calls.size(); i++) {
        if (h.down.calls.get(i).open()) {
          open.add(i);
        }
      }
      return open;
    }
  }
}
