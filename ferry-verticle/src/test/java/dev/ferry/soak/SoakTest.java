package dev.ferry.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The soak ({@link Soak}) on a time budget. In the default test run it is the short variant: 60 s
 * (a minute whatever the machine; a slower one runs fewer rounds). Left running:
 *
 * <pre>
 * mvn -B -ntp verify -pl ferry-verticle -am -Dtest=SoakTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dferry.soak.seconds=1800 [-Dferry.soak.seed=N]
 * </pre>
 *
 * The seed is printed with the report and with every failure. Every check is strict, the
 * verticle's "no key with two calls in flight" included (ADR 0064).
 */
class SoakTest {
  @Test
  void everyAcceptedInputIsAnsweredOnceAndEveryBoundHoldsUnderFaultsUndeploysAndClose() throws Exception {
    long seed = Long.getLong("ferry.soak.seed", System.nanoTime());
    Duration budget = Duration.ofSeconds(Long.getLong("ferry.soak.seconds", 60));
    Soak.Report report = new Soak(seed, budget).run();
    System.out.println(report);
    assertEquals(List.of(), report.findings(), () -> report.toString());
  }
}
