package dev.ferry.cluster;

import org.junit.jupiter.api.Test;

/**
 * Review P: {@link RouterSimulationTest}'s rules with registrations that reach the other parties
 * late (a joiner's consumers unknown at a sender for up to 300 ms after they were registered, ADR
 * 0148): forwards, releases and routing clients' requests to it are answered NO_HANDLERS until
 * then. Replay one with {@code -Dferry.routersim.lag=true -Dferry.routersim.seed=N} (plus the
 * mode's other properties).
 */
class RouterSimulationLagReviewTest {
  @Test
  void registrationsThatReachTheOthersLate() {
    RouterSimulationTest.simulate(false, 300, false, 0, false, false, false, true);
    RouterSimulationTest.simulate(false, 200, false, RouterSimulationTest.STORM, false, false, false, true);
  }

  /** The same with views adopted late, with snapshots skipped in storms, and with leaves that give up. */
  @Test
  void registrationsLateWithTheOtherModes() {
    RouterSimulationTest.simulate(true, 200, false, 0, false, false, false, true);
    RouterSimulationTest.simulate(false, 150, false, RouterSimulationTest.STORM, true, false, false, true);
    RouterSimulationTest.simulate(false, 200, false, 0, false, true, false, true);
  }
}
