package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class PerKeyConfigTest {

  @Test
  void defaultsAreTheDocumentedOnes() {
    PerKeyConfig c = PerKeyConfig.defaults();
    assertEquals(100, c.maxBatchSize());
    assertEquals(Long.MAX_VALUE, c.maxBatchWeight());
    assertEquals(256, c.maxInFlightBatches(), "the ceiling of the learned limit");
    assertEquals(Dispatch.ADAPTIVE, c.dispatch(), "ADR 0016: adaptive dispatch is the default");
    assertEquals(0, c.pinnedLimit(), "the limit is learned");
    assertEquals(10_000, c.maxQueueing());
    assertEquals(Long.MAX_VALUE, c.maxQueuedWeight());
    assertEquals(Duration.ZERO, c.maxBatchDelay());
    assertTrue(c.directIdleKeys());
    assertTrue(c.directCallsEnabled());
    assertEquals(Duration.ofSeconds(30), c.callTimeout());
  }

  @Test
  void anInvalidConfigNamesEveryViolatedFieldWithValueAndRule() {
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.builder()
        .maxBatchSize(0)
        .maxBatchWeight(-1)
        .maxInFlightBatches(0)
        .maxQueueing(-5)
        .maxQueuedWeight(0)
        .maxBatchDelay(Duration.ofMillis(-1))
        .callTimeout(Duration.ZERO)
        .build());
    assertEquals(7, e.violations().size(), e.getMessage());
    assertTrue(e.getMessage().contains("maxBatchSize = 0: must be >= 1"), e.getMessage());
    assertTrue(e.getMessage().contains("maxQueueing = -5: must be >= 1"), e.getMessage());
    assertTrue(e.getMessage().contains("callTimeout"), e.getMessage());
  }

  @Test
  void fromJsonReadsEveryFieldAndRoundTrips() {
    JsonObject json = new JsonObject()
        .put("maxBatchSize", 25).put("maxBatchWeight", 262144).put("maxInFlightBatches", 8)
        .put("maxQueueing", 1000).put("maxQueuedWeight", 1 << 26).put("maxBatchDelayMs", 0)
        .put("directIdleKeys", false).put("callTimeoutMs", 5000);
    PerKeyConfig c = PerKeyConfig.fromJson(json);
    assertEquals(25, c.maxBatchSize());
    assertEquals(262144, c.maxBatchWeight());
    assertFalse(c.directIdleKeys());
    assertEquals(Duration.ofSeconds(5), c.callTimeout());
    assertEquals(c, PerKeyConfig.fromJson(c.toJson()));
    assertEquals(c, c.toBuilder().build());
  }

  @Test
  void fromJsonReportsUnknownFieldsWrongTypesAndRangesTogether() {
    JsonObject json = new JsonObject()
        .put("maxBatchSise", 10)
        .put("maxInFlightBatches", "many")
        .put("maxQueueing", 0)
        .put("directIdleKeys", "yes")
        .put("maxBatchDelayMs", 1.5);
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.fromJson(json));
    String m = e.getMessage();
    assertTrue(m.contains("maxBatchSise: unknown field"), m);
    assertTrue(m.contains("maxInFlightBatches = \"many\": must be a whole number"), m);
    assertTrue(m.contains("maxQueueing = 0: must be >= 1"), m);
    assertTrue(m.contains("directIdleKeys = \"yes\": must be true or false"), m);
    assertTrue(m.contains("maxBatchDelayMs = 1.5: must be a whole number"), m);
    assertEquals(5, e.violations().size(), m);
  }

  @Test
  void millisecondFieldsAreNamedAsWrittenAndBoundedSoTheyNeverOverflow() {
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.fromJson(
        new JsonObject().put("maxBatchDelayMs", -1).put("callTimeoutMs", Long.MAX_VALUE)));
    String m = e.getMessage();
    assertTrue(m.contains("maxBatchDelayMs = -1: must be >= 0"), m);
    assertTrue(m.contains("callTimeoutMs = " + Long.MAX_VALUE + ": must be >= 1 and <= "), m);
    assertEquals(2, e.violations().size(), m);
    assertThrows(InvalidConfigException.class,
        () -> PerKeyConfig.builder().callTimeout(Duration.ofDays(365L * 1000)).build());
  }

  /**
   * Each rule's edge is on the side the rule states: the smallest and the largest allowed values
   * build, from the builder and from JSON, and one step past them is named; a bad drain timeout
   * is named like the others.
   */
  @Test
  void everyBoundItselfIsAllowedAndOneStepPastItIsNamed() {
    Duration longest = Duration.ofMillis(dev.ferry.internal.Limits.MAX_MS);
    PerKeyConfig.builder().maxBatchWeight(1).maxQueuedWeight(1).maxBatchDelay(longest)
        .callTimeout(longest).drainTimeout(longest).build();
    PerKeyConfig.builder().callTimeout(Duration.ofMillis(1)).drainTimeout(Duration.ZERO).build();
    PerKeyConfig.fromJson(new JsonObject().put("maxBatchDelayMs", 0).put("callTimeoutMs", 1).put("drainTimeoutMs", 0));
    PerKeyConfig.fromJson(new JsonObject().put("maxBatchDelayMs", dev.ferry.internal.Limits.MAX_MS)
        .put("callTimeoutMs", dev.ferry.internal.Limits.MAX_MS).put("drainTimeoutMs", dev.ferry.internal.Limits.MAX_MS));
    Duration tooLong = longest.plusMillis(1);
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.builder()
        .maxBatchDelay(tooLong).callTimeout(tooLong).drainTimeout(Duration.ofMillis(-1)).build());
    assertEquals(3, e.violations().size(), e.getMessage());
    assertTrue(e.getMessage().contains("drainTimeout"), e.getMessage());
  }

  /** ADR 0016: a config that names no mode is adaptive, with the ceiling 256, however it is made. */
  @Test
  void withNoDispatchGivenTheModeIsAdaptiveWithItsCeiling() {
    for (PerKeyConfig c : new PerKeyConfig[] {PerKeyConfig.defaults(), PerKeyConfig.builder().build(),
        PerKeyConfig.fromJson(new JsonObject()), PerKeyConfig.fromJson(new JsonObject().put("maxBatchSize", 8)),
        PerKeyConfig.builder().maxBatchSize(8).directIdleKeys(false).build()}) {
      assertEquals(Dispatch.ADAPTIVE, c.dispatch(), c.toString());
      assertEquals(PerKeyConfig.DEFAULT_ADAPTIVE_CEILING, c.maxInFlightBatches(), c.toString());
      assertEquals(256, c.maxInFlightBatches(), c.toString());
      assertEquals(0, c.pinnedLimit(), c.toString());
      assertEquals("adaptive", c.toJson().getString("dispatch"), c.toString());
    }
    assertEquals(Dispatch.ADAPTIVE, PerKeyConfig.DEFAULT_DISPATCH);
    java.util.List<String> violations = new java.util.ArrayList<>();
    PerKeyConfig read = PerKeyConfig.read(new JsonObject(), violations);
    assertTrue(violations.isEmpty(), violations.toString());
    assertEquals(Dispatch.ADAPTIVE, read.dispatch());
    assertEquals(256, read.maxInFlightBatches());
  }

  @Test
  void maxInFlightBatchesDefaultsByModeUnlessSet() {
    assertEquals(256, PerKeyConfig.builder().dispatch(Dispatch.ADAPTIVE).build().maxInFlightBatches(),
        "adaptive: a ceiling high enough for a large pool");
    assertEquals(16, PerKeyConfig.builder().dispatch(Dispatch.FIXED_SLOTS).build().maxInFlightBatches());
    assertEquals(5, PerKeyConfig.builder().maxInFlightBatches(5).dispatch(Dispatch.ADAPTIVE).build().maxInFlightBatches(),
        "a value set is kept, whatever the mode");
    assertEquals(256, PerKeyConfig.fromJson(new JsonObject().put("dispatch", "adaptive")).maxInFlightBatches());
    assertEquals(16, PerKeyConfig.fromJson(new JsonObject().put("dispatch", "fixed-slots")).maxInFlightBatches());
    assertEquals(16, PerKeyConfig.fromJson(new JsonObject().put("dispatch", "fixed-slots").put("directIdleKeys", true))
        .toBuilder().build().maxInFlightBatches(), "a config read keeps its value through toBuilder");
    assertEquals(40, PerKeyConfig.fromJson(new JsonObject().put("dispatch", "adaptive").put("maxInFlightBatches", 40))
        .maxInFlightBatches());
    PerKeyConfig adaptive = PerKeyConfig.builder().dispatch(Dispatch.ADAPTIVE).build();
    assertEquals(adaptive, adaptive.toBuilder().build());
    assertEquals(adaptive, PerKeyConfig.fromJson(adaptive.toJson()));
  }

  @Test
  void theDispatchModeAndAPinnedLimitReadFromJsonAndRoundTrip() {
    PerKeyConfig c = PerKeyConfig.fromJson(new JsonObject().put("dispatch", "adaptive").put("pinnedLimit", 8)
        .put("maxInFlightBatches", 32));
    assertEquals(Dispatch.ADAPTIVE, c.dispatch());
    assertEquals(8, c.pinnedLimit());
    assertEquals(c, PerKeyConfig.fromJson(c.toJson()));
    PerKeyConfig fixed = PerKeyConfig.fromJson(new JsonObject().put("dispatch", "fixed-slots"));
    assertEquals(Dispatch.FIXED_SLOTS, fixed.dispatch());
    assertEquals(fixed, PerKeyConfig.fromJson(fixed.toJson()));
    assertEquals(fixed, fixed.toBuilder().build());
  }

  @Test
  void aBadModeOrPinnedLimitIsNamedWithItsRule() {
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.fromJson(
        new JsonObject().put("dispatch", "fast").put("pinnedLimit", 300)));
    String m = e.getMessage();
    assertTrue(m.contains("dispatch = \"fast\": must be \"adaptive\" or \"fixed-slots\""), m);
    assertTrue(m.contains("pinnedLimit = 300: must be >= 1 and <= maxInFlightBatches (256)"), m);
    InvalidConfigException fixed = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.builder()
        .dispatch(Dispatch.FIXED_SLOTS).pinnedLimit(4).build());
    assertTrue(fixed.getMessage().contains("pinnedLimit = 4: only with dispatch \"adaptive\""), fixed.getMessage());
    InvalidConfigException negative = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.builder()
        .pinnedLimit(-1).build());
    assertTrue(negative.getMessage().contains("pinnedLimit = -1"), negative.getMessage());
  }

  /**
   * Review S: a negative maxInFlightBatches is one violation. The pinned limit the config never
   * set (0, "learn it") was named beside it as violated, with a rule that allows 0 in the same
   * breath; and a pinned limit within range was named against the invalid ceiling.
   */
  @Test
  void aNegativeMaxInFlightBatchesIsTheOnlyViolationWhenNoPinnedLimitIsSet() {
    InvalidConfigException json = assertThrows(InvalidConfigException.class,
        () -> PerKeyConfig.fromJson(new JsonObject().put("maxInFlightBatches", -1)));
    assertEquals(java.util.List.of("maxInFlightBatches = -1: must be >= 1"), json.violations(), json.getMessage());
    InvalidConfigException built = assertThrows(InvalidConfigException.class,
        () -> PerKeyConfig.builder().maxInFlightBatches(-3).build());
    assertEquals(java.util.List.of("maxInFlightBatches = -3: must be >= 1"), built.violations(), built.getMessage());
    InvalidConfigException pinned = assertThrows(InvalidConfigException.class,
        () -> PerKeyConfig.builder().maxInFlightBatches(-3).pinnedLimit(4).build());
    assertEquals(java.util.List.of("maxInFlightBatches = -3: must be >= 1"), pinned.violations(), pinned.getMessage());
  }

  /**
   * The pinned limit's ceiling at its edges: a limit equal to maxInFlightBatches is allowed, one
   * above it is not, and a ceiling of exactly 1 is a valid one (only a ceiling below 1 is left to
   * its own violation). Mutation testing: "<=" as "<" refused a limit at the ceiling, and "< 1" as
   * "<= 1" let any pinned limit through beside maxInFlightBatches = 1.
   */
  @Test
  void aPinnedLimitMayEqualMaxInFlightBatchesButNotPassItEvenAtACeilingOfOne() {
    assertEquals(8, PerKeyConfig.builder().maxInFlightBatches(8).pinnedLimit(8).build().pinnedLimit());
    assertEquals(1, PerKeyConfig.builder().maxInFlightBatches(1).pinnedLimit(1).build().pinnedLimit());
    InvalidConfigException above = assertThrows(InvalidConfigException.class,
        () -> PerKeyConfig.builder().maxInFlightBatches(8).pinnedLimit(9).build());
    assertEquals(java.util.List.of("pinnedLimit = 9: must be >= 1 and <= maxInFlightBatches (8), or 0/absent to learn the limit"),
        above.violations(), above.getMessage());
    InvalidConfigException aboveOne = assertThrows(InvalidConfigException.class,
        () -> PerKeyConfig.builder().maxInFlightBatches(1).pinnedLimit(2).build());
    assertEquals(java.util.List.of("pinnedLimit = 2: must be >= 1 and <= maxInFlightBatches (1), or 0/absent to learn the limit"),
        aboveOne.violations(), aboveOne.getMessage());
  }

  @Test
  void aPositiveDelayTurnsDirectCallsOff() {
    PerKeyConfig c = PerKeyConfig.builder().maxBatchDelay(Duration.ofMillis(2)).build();
    assertTrue(c.directIdleKeys());
    assertFalse(c.directCallsEnabled());
  }

  @Test
  void noJsonIsRefusedNamingTheArgumentNotDeepInTheReader() {
    NullPointerException e = org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class,
        () -> PerKeyConfig.fromJson(null));
    org.junit.jupiter.api.Assertions.assertTrue(String.valueOf(e.getMessage()).contains("PerKeyConfig.defaults()"), e.getMessage());
  }
}
