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
 *     -Dferry.soak.seconds=1800 [-Dferry.soak.seed=N] [-Dferry.soak.strict=true]
 * </pre>
 *
 * The seed is printed with the report and with every failure; {@code ferry.soak.strict} also fails
 * on the behaviours other issues still own (see {@link Soak.Known}).
 */
class SoakTest {
  @Test
  void everyAcceptedInputIsAnsweredOnceAndEveryBoundHoldsUnderFaultsUndeploysAndClose() throws Exception {
    long seed = Long.getLong("ferry.soak.seed", System.nanoTime());
    Duration budget = Duration.ofSeconds(Long.getLong("ferry.soak.seconds", 60));
    Soak.Report report = new Soak(seed, budget, Soak.Known.fromProperties()).run();
    System.out.println(report);
    assertEquals(List.of(), report.findings(), () -> report.toString());
  }
}
