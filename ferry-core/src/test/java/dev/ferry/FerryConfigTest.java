package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.internal.Limits;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link FerryConfig}: defaults, validation that names every violation, strict JSON. */
class FerryConfigTest {

  @Test
  void defaultsAreTheDocumentedOnes() {
    FerryConfig c = FerryConfig.defaults();
    assertEquals(100, c.maxBatchSize());
    assertEquals(Limits.UNBOUNDED, c.maxBatchWeight());
    assertEquals(16, c.maxInFlightBatches());
    assertEquals(10_000, c.maxQueueing());
    assertEquals(Limits.UNBOUNDED, c.maxQueuedWeight());
    assertEquals(Duration.ZERO, c.maxBatchDelay());
    assertEquals(Duration.ofSeconds(30), c.callTimeout());
  }

  @Test
  void theBuilderReportsEveryViolatedFieldAtOnce() {
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> FerryConfig.builder()
        .maxBatchSize(0).maxBatchWeight(0).maxInFlightBatches(-1).maxQueueing(0).maxQueuedWeight(0)
        .maxBatchDelay(Duration.ofMillis(-5)).callTimeout(Duration.ZERO).build());
    List<String> v = e.violations();
    assertEquals(7, v.size(), v.toString());
    for (String field : List.of("maxBatchSize = 0", "maxBatchWeight = 0", "maxInFlightBatches = -1",
        "maxQueueing = 0", "maxQueuedWeight = 0", "maxBatchDelay = PT-0.005S", "callTimeout = PT0S")) {
      assertTrue(v.stream().anyMatch(s -> s.startsWith(field)), field + " missing from " + v);
      assertTrue(e.getMessage().contains(field));
    }
  }

  @Test
  void fromJsonReadsEveryFieldAndRoundTrips() {
    JsonObject json = new JsonObject().put("maxBatchSize", 7).put("maxBatchWeight", 70)
        .put("maxInFlightBatches", 2).put("maxQueueing", 50).put("maxQueuedWeight", 500)
        .put("maxBatchDelayMs", 15).put("callTimeoutMs", 900).put("drainTimeoutMs", 2500);
    FerryConfig c = FerryConfig.fromJson(json);
    assertEquals(7, c.maxBatchSize());
    assertEquals(70, c.maxBatchWeight());
    assertEquals(2, c.maxInFlightBatches());
    assertEquals(50, c.maxQueueing());
    assertEquals(500, c.maxQueuedWeight());
    assertEquals(Duration.ofMillis(15), c.maxBatchDelay());
    assertEquals(Duration.ofMillis(900), c.callTimeout());
    assertEquals(Duration.ofMillis(2500), c.drainTimeout());
    assertEquals(json, c.toJson());
    assertEquals(c, FerryConfig.fromJson(c.toJson()));
    assertEquals(c, c.toBuilder().build());
    assertEquals(FerryConfig.defaults(), FerryConfig.fromJson(new JsonObject()));
  }

  @Test
  void fromJsonNamesUnknownFieldsWrongTypesAndBadValuesTogether() {
    JsonObject json = new JsonObject().put("maxBatchSise", 5).put("directIdleKeys", true)
        .put("maxQueueing", "many").put("maxBatchDelayMs", 1.5).put("maxInFlightBatches", 0);
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> FerryConfig.fromJson(json));
    String m = e.getMessage();
    assertEquals(5, e.violations().size(), e.violations().toString());
    assertTrue(m.contains("maxBatchSise: unknown field"), m);
    assertTrue(m.contains("directIdleKeys: unknown field"), "make has no idle keys: " + m);
    assertTrue(m.contains("maxQueueing = \"many\": must be a whole number"), m);
    assertTrue(m.contains("maxBatchDelayMs = 1.5: must be a whole number"), m);
    assertTrue(m.contains("maxInFlightBatches = 0: must be >= 1"), m);
  }

  @Test
  void equalityFollowsTheValues() {
    FerryConfig a = FerryConfig.builder().maxBatchSize(3).build();
    assertEquals(a, FerryConfig.builder().maxBatchSize(3).build());
    assertEquals(a.hashCode(), FerryConfig.builder().maxBatchSize(3).build().hashCode());
    assertNotEquals(a, FerryConfig.builder().maxBatchSize(4).build());
    assertTrue(a.toString().contains("\"maxBatchSize\":3"));
  }

  @Test
  void aWholeNumberFieldTakesEveryValueOfItsTypeAndRefusesTheFirstBeyondNamingTheField() {
    // The edges of the range themselves are read as the numbers they are (then judged by the
    // field's own rule); one past them is refused, never wrapped or clamped, with the field's rule
    // and the top its type sets (review AD: it named the type's range, a rule the field does not have).
    FerryConfig top = FerryConfig.fromJson(new JsonObject()
        .put("maxQueueing", Integer.MAX_VALUE).put("maxQueuedWeight", Long.MAX_VALUE));
    assertEquals(Integer.MAX_VALUE, top.maxQueueing());
    assertEquals(Long.MAX_VALUE, top.maxQueuedWeight());
    InvalidConfigException low = assertThrows(InvalidConfigException.class,
        () -> FerryConfig.fromJson(new JsonObject().put("maxQueueing", Integer.MIN_VALUE)));
    assertEquals(List.of("maxQueueing = -2147483648: must be >= 1"), low.violations());
    InvalidConfigException beyond = assertThrows(InvalidConfigException.class, () -> FerryConfig.fromJson(
        new JsonObject().put("maxQueueing", 1L + Integer.MAX_VALUE).put("maxQueuedWeight", 0x1p63)));
    assertEquals(List.of(
        "maxQueuedWeight = 9.223372036854776E18: must be >= 1 and <= 9223372036854775807",
        "maxQueueing = 2147483648: must be >= 1 and <= 2147483647"),
        beyond.violations().stream().sorted().toList());
  }

  @Test
  void noJsonIsRefusedNamingTheArgumentNotDeepInTheReader() {
    NullPointerException e = org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class,
        () -> FerryConfig.fromJson(null));
    org.junit.jupiter.api.Assertions.assertTrue(String.valueOf(e.getMessage()).contains("FerryConfig.defaults()"), e.getMessage());
  }
}
