package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * FerryClient's options set carelessly: a duration the header or the event bus cannot carry fails
 * when it is set, with an IllegalArgumentException naming the option, not later as an
 * ArithmeticException, as an exception thrown out of {@code submit}, or as a 400 after a round trip.
 */
class FerryClientHostileTest extends VerticleTestBase {

  @Test
  void durationsTheClientCannotCarryFailWhenSetNamingTheOption() {
    for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofMillis(-5), Duration.ofNanos(999_999),
        Duration.ofMillis(VerticleConfig.MAX_MS + 1), Duration.ofSeconds(Long.MAX_VALUE)}) {
      IllegalArgumentException t = assertThrows(IllegalArgumentException.class,
          () -> new FerryClient.SubmitOptions().timeout(bad), "timeout " + bad);
      assertTrue(t.getMessage().startsWith("timeout must be at least 1 ms"), t.getMessage());
      IllegalArgumentException s = assertThrows(IllegalArgumentException.class,
          () -> new FerryClient.SubmitOptions().sendTimeout(bad), "sendTimeout " + bad);
      assertTrue(s.getMessage().startsWith("sendTimeout must be at least 1 ms"), s.getMessage());
    }
  }

  @Test
  void theLongestDurationsStillWork() {
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject()));
    FerryClient client = FerryClient.create(vertx);
    Duration longest = Duration.ofMillis(VerticleConfig.MAX_MS);
    assertEquals("x", await(client.submit("k", "x", new FerryClient.SubmitOptions().timeout(longest).sendTimeout(longest))));
    assertEquals("y", await(client.submit("k", "y", new FerryClient.SubmitOptions().timeout(null).sendTimeout(null))));
  }

  /**
   * Review S: a timeout that is not a whole number of ms went out truncated in the timeout-ms
   * header (1.5 ms as "1", 250.000001 ms as "250"), so the node could drop the input and answer
   * TIMEOUT before the caller's deadline had passed; the engine and the batch's expiry timer round
   * up ("a deadline is never reported early"). The header is read here by a consumer of its own.
   */
  @Test
  void aTimeoutBetweenWholeMillisecondsIsSentRoundedUpNeverShorter() {
    java.util.List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    await(vertx.eventBus().<Object>consumer("review.s.headers", m -> {
      seen.add(m.headers().get("timeout-ms"));
      m.reply(m.body());
    }).completion());
    FerryClient client = FerryClient.create(vertx, "review.s.headers");
    await(client.submit("k", 1, new FerryClient.SubmitOptions().timeout(Duration.ofNanos(1_500_000))));
    await(client.submit("k", 2, new FerryClient.SubmitOptions().timeout(Duration.ofMillis(250).plusNanos(1))));
    await(client.submit("k", 3, new FerryClient.SubmitOptions().timeout(Duration.ofMillis(40))));
    assertEquals(java.util.List.of("2", "251", "40"), seen);
  }

  /**
   * A send timeout set between whole ms is rounded up too, never down: the reply is awaited at
   * least as long as the caller asked (1.5 ms as 2, not 1; 250.000001 ms as 251), and a timeout
   * without a send timeout of its own is awaited for its rounded-up value plus the default.
   * Mutation testing: the send timeout truncated (toMillis) passed every test.
   */
  @Test
  void aSendTimeoutBetweenWholeMillisecondsIsRoundedUpNeverShorter() {
    assertEquals(2, new FerryClient.SubmitOptions().sendTimeout(Duration.ofNanos(1_500_000)).sendTimeoutMs());
    assertEquals(251, new FerryClient.SubmitOptions().sendTimeout(Duration.ofMillis(250).plusNanos(1)).sendTimeoutMs());
    assertEquals(250, new FerryClient.SubmitOptions().sendTimeout(Duration.ofMillis(250)).sendTimeoutMs());
    assertEquals(2 + io.vertx.core.eventbus.DeliveryOptions.DEFAULT_TIMEOUT,
        new FerryClient.SubmitOptions().timeout(Duration.ofNanos(1_500_000)).sendTimeoutMs());
  }

  @Test
  void aClosedPlainClientSendsNothingAndAnswersClosedWhileWhatItSentKeepsItsAnswer() {
    // As a closed routing client does (ADR 0136): a later submit is CLOSED at once, nothing sent.
    deploy(config(new JsonObject()));
    FerryClient client = FerryClient.create(vertx);
    io.vertx.core.Future<Object> sent = client.submit("k", "before");
    EbRecorder.Call call = await(downstream.call(0));
    await(client.close());
    await(client.close()); // again: nothing more to do
    dev.ferry.FerryException e = (dev.ferry.FerryException) failure(client.submit("k", "after"));
    assertEquals(dev.ferry.FerryError.CLOSED, e.kind());
    call.echo();
    assertEquals("before", await(sent), "an input sent before the close keeps its own answer");
    assertEquals(1, downstream.count(), "nothing sent after the close");
  }

  /**
   * A body another thread changes while the client checks or copies it: the walk or the copy
   * throws ConcurrentModificationException, which escaped {@code submit} as a throw, where every
   * other bad body is a failed Future (found by review). Here the body's map throws as it is
   * walked, as one being changed does.
   */
  @Test
  void aBodyChangedWhileItIsSubmittedIsBadInputNotAThrow() {
    deploy(config(new JsonObject()));
    java.util.Map<String, Object> changing = new java.util.HashMap<>(java.util.Map.of("a", 1)) {
      @Override
      public java.util.Set<java.util.Map.Entry<String, Object>> entrySet() {
        throw new java.util.ConcurrentModificationException();
      }

      @Override
      public void forEach(java.util.function.BiConsumer<? super String, ? super Object> action) {
        throw new java.util.ConcurrentModificationException();
      }
    };
    FerryClient client = FerryClient.create(vertx);
    io.vertx.core.Future<Object> answer = client.submit("k", new JsonObject(changing));
    dev.ferry.FerryException e = (dev.ferry.FerryException) failure(answer);
    assertEquals(dev.ferry.FerryError.BAD_INPUT, e.kind(), e.getMessage());
    assertEquals(0, downstream.count(), "nothing sent");
  }

  /** A key with a lone surrogate is BAD_INPUT before anything is sent: across nodes it would be another key. */
  @Test
  void aKeyWithALoneSurrogateIsBadInputAndNothingIsSent() {
    deploy(config(new JsonObject()));
    FerryClient client = FerryClient.create(vertx);
    dev.ferry.FerryException e = (dev.ferry.FerryException) failure(client.submit("ls-\uD800-0", "x"));
    assertEquals(dev.ferry.FerryError.BAD_INPUT, e.kind(), e.getMessage());
    assertEquals(0, downstream.count(), "nothing sent");
  }
}
