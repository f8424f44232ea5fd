package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * A transition started by a timer (deadline, batch delay, call timeout) must have its effects
 * performed at once, not left queued until some later submit or completion happens to run them.
 */
class TimerEffectsTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final RecordingDownstream<String, String> down = new RecordingDownstream<>(loop);

  @Test
  void perKeyDeadlineRepliesWhenTheTimerFires() {
    PerKeyFerry<String, String, ?, String> ferry = new PerKeyFerry<>(loop, PerKeyConfig.defaults(),
        Function.identity(), null, null, down, (in, r) -> in);
    ferry.submit("k"); // in flight, directly
    Future<String> late = ferry.submit("k", Duration.ofMillis(10));
    loop.advanceMillis(10);
    assertTrue(late.failed(), "TIMEOUT must be replied when the deadline passes");
    assertEquals(FerryError.TIMEOUT, ((FerryException) late.cause()).kind());
  }

  @Test
  void perKeyBatchDelayStartsTheCallWhenTheTimerFires() {
    PerKeyFerry<String, String, ?, String> ferry = new PerKeyFerry<>(loop,
        PerKeyConfig.builder().maxBatchDelay(Duration.ofMillis(20)).build(),
        Function.identity(), null, null, down, (in, r) -> in);
    ferry.submit("k");
    loop.advanceMillis(20);
    assertEquals(1, down.calls.size(), "the delayed batch must leave when its delay is over");
  }

  @Test
  void singleQueueBatchDelayStartsTheCallWhenTheTimerFires() {
    StreamFerry<String, ?, String> ferry = new StreamFerry<>(loop,
        FerryConfig.builder().maxBatchDelay(Duration.ofMillis(20)).build(), null,
        inputs -> down.call(null, inputs), (in, r) -> in);
    ferry.submit("a");
    loop.advanceMillis(20);
    assertEquals(1, down.calls.size());
  }
}
