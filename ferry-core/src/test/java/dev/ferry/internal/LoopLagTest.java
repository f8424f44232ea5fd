package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.testing.VirtualLoop;
import org.junit.jupiter.api.Test;

/** ADR 0015: the probe reads how long a task waits on the loop, smoothed; no timer is set. */
class LoopLagTest {
  static final long MS = 1_000_000L;

  @Test
  void aStalledLoopShowsAsLagAndAPromptOneBringsItBackDown() {
    VirtualLoop loop = new VirtualLoop();
    LoopLag lag = new LoopLag(loop);
    assertEquals(CallLimit.LAG_UNKNOWN, lag.told(), "no reading yet is not no lag (ADR 0114)");
    lag.probe();
    assertEquals(CallLimit.LAG_UNKNOWN, lag.told(), "a probe posted is not one that ran");
    loop.stallMillis(8); // the loop's thread waited 8 ms for a core before running the probe
    lag.probe(); // one probe at a time: this one is not posted
    loop.runPending();
    assertEquals(4 * MS, lag.nanos(), "the first reading counts half");
    lag.probe();
    loop.stallMillis(8);
    loop.runPending();
    assertEquals(6 * MS, lag.nanos());
    for (int i = 0; i < 20; i++) {
      lag.probe();
      loop.runPending();
    }
    assertEquals(0, lag.nanos() / 1000, "a prompt loop: the lag decays to nothing");
    assertEquals(lag.nanos(), lag.told());
    assertEquals(0, loop.liveTimers(), "the probe never sets a timer");
  }
}
