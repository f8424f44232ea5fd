package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.verticle.FerryClient;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Review BG: {@link RoutingClient#submit}, public, used directly as a hostile caller would. It
 * routes by its {@code key} argument, and the node reads the {@code key} header: the two must be
 * one key, or an input is routed by one key and batched under another (at a node that does not
 * own it, outside the order of either). An id over the bound (ADR 0189) is refused before
 * anything is sent, as {@link FerryClient} refuses it. On an unclustered Vert.x with a fixed view
 * {@code [n0]}, a consumer at n0's node address recording the key header of what reaches it.
 */
class ReviewBgRoutingClientTest {
  private static final String SUBMIT = "ferry.submit";

  private Vertx vertx;
  private Context context;
  private RoutingClient client;
  private final List<String> keysAtN0 = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    await(vertx.eventBus().consumer(FerryClient.nodeAddress(SUBMIT, "n0"), m -> {
      keysAtN0.add(String.join("|", m.headers().getAll(FerryClient.KEY_HEADER)));
      m.reply("ok");
    }).completion());
    context = vertx.getOrCreateContext();
    Promise<RoutingClient> made = Promise.promise();
    context.runOnContext(v -> made.complete(RoutingClient.create(vertx, SUBMIT, new FixedView("client", Set.of("n0")))));
    client = await(made.future());
    await(client.started());
  }

  @AfterEach
  void stop() {
    if (vertx != null) {
      await(vertx.close());
    }
  }

  private FerryError refusal(Future<Object> answer) {
    Throwable failure = ClusterHarness.failure(answer);
    assertTrue(failure instanceof FerryException, String.valueOf(failure));
    return ((FerryException) failure).kind();
  }

  @Test
  void aKeyHeaderThatIsNotTheRoutedKeyIsRefusedBeforeSending() {
    assertEquals(FerryError.BAD_INPUT, refusal(client.submit("a", 1,
        new DeliveryOptions().addHeader("KEY", "b"), 0, 5_000)));
    assertEquals(FerryError.BAD_INPUT, refusal(client.submit("a", 1,
        new DeliveryOptions().addHeader("key", "a").addHeader("Key", "b"), 0, 5_000)));
    // The same key in another case of the header's name, or given twice alike, is the key.
    assertEquals("ok", await(client.submit("a", 1, new DeliveryOptions().addHeader("KEY", "a"), 0, 5_000)));
    assertEquals("ok", await(client.submit("a", 1,
        new DeliveryOptions().addHeader("Key", "a").addHeader("key", "a"), 0, 5_000)));
    assertEquals(List.of("a", "a|a"), keysAtN0);
  }

  @Test
  void noHeadersAtAllSendTheRoutedKey() {
    // DeliveryOptions without a header has none (getHeaders() is null): the send threw on the
    // client's loop and the caller was never answered.
    assertEquals("ok", await(client.submit("a", 1, new DeliveryOptions(), 0, 5_000)));
    assertEquals(List.of("a"), keysAtN0);
  }

  @Test
  void anIdOverTheBoundIsRefusedBeforeSending() {
    assertEquals(FerryError.BAD_INPUT, refusal(client.submit("a", 1, new DeliveryOptions().addHeader("key", "a")
        .addHeader("ID", "i".repeat(FerryClient.MAX_ID_LENGTH + 1)), 0, 5_000)));
    assertEquals(List.of(), keysAtN0);
  }
}
