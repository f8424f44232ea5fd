package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The contract's guarantees 1-7 as seen from the event bus, with held downstream calls. */
class FerryVerticleGuaranteesTest extends VerticleTestBase {

  /**
   * Both modes: fixed slots, whose idle keys' first inputs go direct beside the batch slots, and
   * adaptive (the default) with its limit pinned at 16 (a learned one starts at 1 and would hold b's
   * first back).
   */
  @ParameterizedTest
  @ValueSource(strings = {"fixed-slots", "adaptive"})
  void batchesFormOnCompletionOneKeyInOrderWithinSize(String dispatch) {
    JsonObject mode = new JsonObject().put("dispatch", dispatch);
    if (dispatch.equals("adaptive")) {
      mode.put("pinnedLimit", 16);
    }
    deploy(config(mode.put("maxBatchSize", 3)));
    Future<Message<Object>> first = send("a", 0);
    EbRecorder.Call direct = await(downstream.call(0));
    List<Future<Message<Object>>> rest = new ArrayList<>();
    for (int i = 1; i <= 7; i++) {
      rest.add(send("a", i));
      send("b", 100 + i);
    }
    // Guarantee 2: while a's direct call is open, a's inputs wait (b's first went direct).
    JsonObject m = admitted(15);
    assertEquals(7 + 6, m.getInteger("queuedInputs"), m.encode());
    assertEquals(List.of(0), direct.bodies());

    direct.echo();
    assertEquals(0, body(first));
    List<List<Object>> aBatches = new ArrayList<>();
    for (int i = 1; aBatches.stream().mapToInt(List::size).sum() < 7; i++) {
      EbRecorder.Call c = await(downstream.call(i));
      // Guarantee 1: one key per batch (every input of a batch is that key's).
      for (Object body : c.bodies()) {
        assertEquals(c.key.equals("a"), (Integer) body < 100, "mixed batch " + c.bodies());
      }
      assertFalse(c.bodies().size() > 3, "batch over maxBatchSize: " + c.bodies()); // guarantee 6
      if (c.key.equals("a")) {
        aBatches.add(c.bodies());
      }
      c.echo();
    }
    // Guarantee 3: a's inputs leave in submission order, three at a time.
    assertEquals(List.of(List.of(1, 2, 3), List.of(4, 5, 6), List.of(7)), aBatches);
    for (int i = 0; i < 7; i++) {
      assertEquals(i + 1, body(rest.get(i)));
    }
  }

  @Test
  void headerOrderSortsWaitingInputsTiesInSubmissionOrder() {
    deploy(config(new JsonObject().put("order", "header")));
    send("k", "first", "order", "50");
    EbRecorder.Call direct = await(downstream.call(0));
    send("k", "o5", "order", "5");
    send("k", "none");
    send("k", "o3a", "order", "3");
    send("k", "o-1", "order", "-1");
    send("k", "o3b", "order", "3");
    assertEquals(5, admitted(6).getInteger("queuedInputs"));
    direct.echo();
    assertEquals(List.of("o-1", "o3a", "o3b", "o5", "none"), await(downstream.call(1)).bodies());
  }

  /**
   * Fixed slots: a key with inputs left goes to the back of the line. Adaptive: busy keys go oldest
   * waiting input first, which here is the same order (a's second input came after b's and c's).
   */
  @ParameterizedTest
  @ValueSource(strings = {"fixed-slots", "adaptive"})
  void keysTakeTurnsAndABusyKeyGoesToTheBack(String dispatch) {
    deploy(config(new JsonObject().put("dispatch", dispatch).put("maxInFlightBatches", 1).put("directIdleKeys", false)));
    send("a", 1);
    EbRecorder.Call a1 = await(downstream.call(0));
    send("b", 1);
    send("c", 1);
    send("a", 2);
    assertEquals(3, admitted(4).getInteger("queuedInputs"));
    a1.echo();
    List<String> keys = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      EbRecorder.Call c = await(downstream.call(i));
      keys.add(c.key);
      c.echo();
    }
    // a still had an input when its call completed: it went behind b and c.
    assertEquals(List.of("b", "c", "a"), keys);
  }

  @Test
  void keysRunInParallelUpToTheSlotsPlusDirectCalls() {
    deploy(config(new JsonObject().put("maxInFlightBatches", 2).put("dispatch", "fixed-slots")));
    List<EbRecorder.Call> directs = new ArrayList<>();
    for (int k = 0; k < 3; k++) {
      send("k" + k, "d" + k);
      directs.add(await(downstream.call(k)));
    }
    // Three direct calls in flight, more than the two slots: direct calls are not counted.
    assertEquals(3, metrics().getInteger("inFlightBatches"));
    for (int k = 0; k < 3; k++) {
      send("k" + k, "w" + k);
    }
    admitted(6);
    for (EbRecorder.Call d : directs) {
      d.echo();
    }
    EbRecorder.Call b1 = await(downstream.call(3));
    EbRecorder.Call b2 = await(downstream.call(4));
    // Two batches hold both slots; the third key waits although its direct call is over (once
    // that reply is processed, in flight drops from 3 to 2 and must stay there).
    JsonObject m = metricsUntil(x -> x.getInteger("inFlightBatches") <= 2);
    assertEquals(2, m.getInteger("inFlightBatches"), m.encode());
    assertEquals(1, m.getInteger("queuedInputs"), m.encode());
    assertEquals(5, downstream.count());
    // An idle key is still called at once, outside the slots.
    send("idle", "x");
    EbRecorder.Call idle = await(downstream.call(5));
    assertEquals("idle", idle.key);
    idle.echo();
    b1.echo();
    EbRecorder.Call b3 = await(downstream.call(6));
    b2.echo();
    b3.echo();
    assertEquals(List.of("k0", "k1", "k2"), List.of(b1.key, b2.key, b3.key).stream().sorted().toList());
  }

  @Test
  void withoutAWeightBoundInputsAreNotWeighedAndEachCountsOne() {
    deploy(config(new JsonObject()));
    send("w", "first");
    EbRecorder.Call direct = await(downstream.call(0));
    send("w", "this body would weigh many bytes");
    send("w", "and so would this one");
    JsonObject m = admitted(3);
    assertEquals(2, m.getLong("queuedInputs"), m.encode());
    assertEquals(2, m.getLong("queuedWeight"), m.encode());
    direct.echo();
    await(downstream.call(1)).echo();
  }

  @Test
  void batchWeightIsTheJsonByteLengthAndAHeavyInputTravelsAlone() {
    // "abcd" encodes as "\"abcd\"": 6 bytes. Two fit in 12, a third does not.
    deploy(config(new JsonObject().put("maxBatchWeight", 12)));
    send("w", "first");
    EbRecorder.Call direct = await(downstream.call(0));
    send("w", "abcd");
    send("w", "abcd");
    send("w", "abcd");
    send("w", "this one is far heavier than twelve bytes");
    send("w", "ab");
    JsonObject m = admitted(6);
    assertEquals(6 * 3 + 43 + 4, m.getLong("queuedWeight"), m.encode());
    direct.echo();
    List<List<Object>> batches = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      EbRecorder.Call c = await(downstream.call(i));
      batches.add(c.bodies());
      c.echo();
    }
    assertEquals(List.of(List.of("abcd", "abcd"), List.of("abcd"),
        List.of("this one is far heavier than twelve bytes"), List.of("ab")), batches);
  }
}
