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
}
