package dev.ferry.internal;

import static dev.ferry.internal.PerKeyHarness.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review BE: a 502 at the call timeout names the setting as its user wrote it (ADR 0185). A config
 * read from JSON was set with {@code callTimeoutMs}, yet its callers read {@code (callTimeout)}, the
 * builder's name, which appears nowhere in their config. The engine learns the name from the
 * config, and knows nothing of JSON.
 */
class ReviewBeNamesTest {

  private static String timedOutMessage(PerKeyConfig config) {
    PerKeyHarness h = new PerKeyHarness(config);
    Future<String> f = h.submit("a", "a1");
    h.loop.advanceMillis(config.callTimeout().toMillis());
    FerryException e = failure(f);
    assertEquals(FerryError.FAILED, e.kind());
    assertEquals(e.getMessage() + "; it may still be applied", e.getCause().getMessage(), "the cause says the same");
    return e.getMessage();
  }

  @Test
  void aConfigReadFromJsonNamesCallTimeoutMs() {
    assertEquals("the batch call did not complete within 100 ms (callTimeoutMs)",
        timedOutMessage(PerKeyConfig.fromJson(new JsonObject().put("callTimeoutMs", 100))));
    List<String> violations = new java.util.ArrayList<>();
    assertEquals("the batch call did not complete within 100 ms (callTimeoutMs)",
        timedOutMessage(PerKeyConfig.read(new JsonObject().put("callTimeoutMs", 100), violations)),
        "read as the verticle reads it");
  }

  @Test
  void aBuiltConfigNamesTheBuildersCallTimeout() {
    assertEquals("the batch call did not complete within 100 ms (callTimeout)",
        timedOutMessage(PerKeyConfig.builder().callTimeout(Duration.ofMillis(100)).build()));
  }

  /**
   * A JSON config changed in a builder: its call timeout is still the one written in JSON until
   * the builder sets it, and then it is the builder's.
   */
  @Test
  void aJsonConfigsBuilderKeepsTheJsonNameUntilItSetsTheCallTimeout() {
    PerKeyConfig json = PerKeyConfig.fromJson(new JsonObject().put("callTimeoutMs", 100));
    assertEquals("the batch call did not complete within 100 ms (callTimeoutMs)",
        timedOutMessage(json.toBuilder().maxBatchSize(5).build()));
    assertEquals("the batch call did not complete within 200 ms (callTimeout)",
        timedOutMessage(json.toBuilder().callTimeout(Duration.ofMillis(200)).build()));
    assertEquals(json, json.toBuilder().build(), "the name is no part of the config's value");
    assertEquals(json, PerKeyConfig.builder().callTimeout(Duration.ofMillis(100)).build());
  }

  /** The stream ferries (make, keyed) read their names from FerryConfig alike. */
  @Test
  void aStreamFerryNamesTheSettingAsItsConfigWasWritten() {
    assertEquals("the batch call did not complete within 100 ms (callTimeoutMs)",
        streamTimedOutMessage(FerryConfig.fromJson(new JsonObject().put("callTimeoutMs", 100))));
    assertEquals("the batch call did not complete within 100 ms (callTimeout)",
        streamTimedOutMessage(FerryConfig.builder().callTimeout(Duration.ofMillis(100)).build()));
    assertEquals("the batch call did not complete within 100 ms (callTimeoutMs)", streamTimedOutMessage(
        FerryConfig.fromJson(new JsonObject().put("callTimeoutMs", 100)).toBuilder().maxBatchSize(3).build()));
  }

  private static String streamTimedOutMessage(FerryConfig config) {
    VirtualLoop loop = new VirtualLoop();
    StreamFerry<String, List<String>, String> ferry = new StreamFerry<>(loop, config, null,
        inputs -> Promise.<List<String>>promise().future(), (in, r) -> in);
    Future<String> f = ferry.submit("x");
    loop.runPending();
    loop.advanceMillis(100);
    FerryException e = failure(f);
    assertEquals(FerryError.FAILED, e.kind());
    return e.getMessage();
  }
}
