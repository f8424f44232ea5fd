package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review AD: a per-key field past its Java type's range was refused naming the type's range
 * ("must be from -2147483648 to 2147483647", or a long's), a rule the field does not have and one
 * whose negative half read as allowed (contract notes 13.2). Now every such field names its own
 * rule, with the value as given, all of them in one error.
 */
class ReviewADConfigTest {

  @Test
  void everyFieldPastItsTypeNamesItsOwnRule() {
    JsonObject json = new JsonObject()
        .put("maxBatchSize", 3_000_000_000L)
        .put("maxBatchWeight", new BigInteger("100000000000000000000"))
        .put("maxInFlightBatches", -3_000_000_000L)
        .put("maxQueueing", 1e10)
        .put("maxQueuedWeight", -1e30)
        .put("maxBatchDelayMs", 1e19)
        .put("callTimeoutMs", 1e30)
        .put("drainTimeoutMs", -1e30)
        .put("pinnedLimit", 3_000_000_000L);
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.fromJson(json));
    assertEquals(List.of(
        "callTimeoutMs = 1.0E30: must be >= 1 and <= 9223372036854",
        "drainTimeoutMs = -1.0E30: must be >= 0 and <= 9223372036854",
        "maxBatchDelayMs = 1.0E19: must be >= 0 and <= 9223372036854",
        "maxBatchSize = 3000000000: must be >= 1 and <= 2147483647",
        "maxBatchWeight = 100000000000000000000: must be >= 1 and <= 9223372036854775807",
        "maxInFlightBatches = -3000000000: must be >= 1 and <= 2147483647",
        "maxQueuedWeight = -1.0E30: must be >= 1 and <= 9223372036854775807",
        "maxQueueing = 10000000000: must be >= 1 and <= 2147483647",
        "pinnedLimit = 3000000000: must be >= 1 and <= maxInFlightBatches, or 0/absent to learn the limit"),
        e.violations().stream().sorted().toList(), e.getMessage());
    assertFalse(e.getMessage().contains("must be from"), e.getMessage());
  }

  /** The same fields read by make and keyed's config. */
  @Test
  void theStreamConfigNamesTheFieldsRuleToo() {
    InvalidConfigException e = assertThrows(InvalidConfigException.class,
        () -> FerryConfig.fromJson(new JsonObject().put("maxBatchSize", 3_000_000_000L).put("callTimeoutMs", 1e30)));
    assertEquals(List.of(
        "callTimeoutMs = 1.0E30: must be >= 1 and <= 9223372036854",
        "maxBatchSize = 3000000000: must be >= 1 and <= 2147483647"),
        e.violations().stream().sorted().toList(), e.getMessage());
  }

  /** Within the type, the field's rule reads as before, and a value that is no whole number still says so. */
  @Test
  void withinTheTypeTheMessagesAreUnchanged() {
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.fromJson(new JsonObject()
        .put("maxBatchSize", 0).put("maxQueueing", 1.5).put("callTimeoutMs", 0.0)));
    assertEquals(List.of(
        "callTimeoutMs = 0: must be >= 1 and <= 9223372036854",
        "maxBatchSize = 0: must be >= 1",
        "maxQueueing = 1.5: must be a whole number"),
        e.violations().stream().sorted().toList(), e.getMessage());
  }

  /**
   * A refused maxInFlightBatches has a default standing in for it (256 in adaptive mode). The pinned
   * limit was judged against that default: 300 under a ceiling of 1e10 was refused as "<=
   * maxInFlightBatches (256)", a ceiling the operator never gave. Now only the ceiling is refused,
   * and a pinned limit refused beside it does not quote the default.
   */
  @Test
  void aRefusedCeilingIsNeitherQuotedNorJudgedAgainst() {
    InvalidConfigException within = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.fromJson(
        new JsonObject().put("maxInFlightBatches", 1e10).put("pinnedLimit", 300)));
    assertEquals(List.of("maxInFlightBatches = 10000000000: must be >= 1 and <= 2147483647"),
        within.violations(), within.getMessage());
    InvalidConfigException both = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.fromJson(
        new JsonObject().put("maxInFlightBatches", "many").put("pinnedLimit", -2)));
    assertEquals(List.of(
        "maxInFlightBatches = \"many\": must be a whole number",
        "pinnedLimit = -2: must be >= 1 and <= maxInFlightBatches, or 0/absent to learn the limit"),
        both.violations().stream().sorted().toList(), both.getMessage());
    assertFalse(both.getMessage().contains("(256)"), both.getMessage());
  }

  /**
   * Review AL: a maxInFlightBatches refused by its rule (a whole number within an int, below 1) is
   * judged after the fields are read, and a pinnedLimit past an int is refused while they are read,
   * its rule written then: that rule quoted the refused value as the ceiling, "<=
   * maxInFlightBatches (-3)", a bound no pinned limit can meet.
   */
  @Test
  void aCeilingRefusedByItsRuleIsNotQuotedEither() {
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> PerKeyConfig.fromJson(
        new JsonObject().put("maxInFlightBatches", -3).put("pinnedLimit", 3e9)));
    assertEquals(List.of(
        "maxInFlightBatches = -3: must be >= 1",
        "pinnedLimit = 3000000000: must be >= 1 and <= maxInFlightBatches, or 0/absent to learn the limit"),
        e.violations().stream().sorted().toList(), e.getMessage());
  }
}
