package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.ferry.InvalidConfigException;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Review AD: the operator surface (config errors, health, the monitoring endpoint) reviewed again. */
class ReviewADOpsTest extends VerticleTestBase {

  /**
   * A FerryVerticle config whose per-key fields are past their Java type named the type's range
   * ("must be from -2147483648 to 2147483647"), not the field's rule; and a port or frame bound past
   * a long named a long's (review AB had fixed them only up to a long). Each now names its own
   * rule, with the value as given, all in one error.
   */
  @Test
  void aFieldPastItsTypeNamesItsOwnRule() {
    JsonObject json = config(new JsonObject()
        .put("maxBatchSize", 3_000_000_000L)
        .put("callTimeoutMs", 1e30)
        .put("monitoring", new JsonObject().put("port", 1e30))
        .put("bridge", new JsonObject().put("port", 9_000).put("maxFrameBytes", -1e30)));
    InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> VerticleConfig.read(json));
    assertEquals(List.of(
        "bridge.maxFrameBytes = -1.0E30: must be 4096 to 1073741824",
        "callTimeoutMs = 1.0E30: must be >= 1 and <= 9223372036854",
        "maxBatchSize = 3000000000: must be >= 1 and <= 2147483647",
        "monitoring.port = 1.0E30: must be 0-65535"),
        e.violations().stream().sorted().toList(), e.getMessage());
    assertFalse(e.getMessage().contains("must be from"), e.getMessage());
  }
}
