package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryConfig;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.internal.StreamFerry;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** FerryMeterBinder over both engines, in virtual time: what the meters say is what happened. */
class FerryMeterBinderTest {
  @Test
  void perKeyMetersCountBatchesWaitsRejectionsAndTimeouts() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<String, String> down = new RecordingDownstream<>(loop);
    PerKeyFerry<String, String, List<String>, String> ferry = new PerKeyFerry<>(loop,
        PerKeyConfig.builder().maxQueueing(2).build(), s -> "k", null, null, down, (in, r) -> in);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FerryMeterBinder meters = FerryMeterBinder.bind(ferry, registry, "orders");
    loop.runPending();
    ferry.submit("a"); // direct
    ferry.submit("b");
    ferry.submit("c", Duration.ofMillis(1));
    ferry.submit("d"); // rejected: two wait already
    loop.advanceMillis(4);
    down.succeed(0);
    loop.runPending();
    down.succeed(1);
    loop.runPending();

    assertEquals(4, registry.get("ferry.submitted").tag("ferry", "orders").functionCounter().count());
    assertEquals(1, registry.get("ferry.rejected").tag("reason", "queueing").counter().count());
    assertEquals(1, registry.get("ferry.timeouts").functionCounter().count());
    assertEquals(2, registry.get("ferry.batch.size").summary().count());
    assertEquals(2, registry.get("ferry.batch.size").summary().totalAmount());
    assertEquals(2, registry.get("ferry.queue.wait").timer().count());
    assertEquals(4, registry.get("ferry.queue.wait").timer().totalTime(TimeUnit.MILLISECONDS), 0.001,
        "a went at once, b waited the 4 ms a was on the wire");
    assertEquals(0, registry.get("ferry.queued.inputs").gauge().value());

    meters.close();
    assertEquals(0, registry.getMeters().size(), "close removes every meter");
    ferry.submit("e");
    loop.runPending();
    assertEquals(0, registry.find("ferry.batch.size").meters().size(), "nothing records after close");
  }

  @Test
  void perKeyMetersShowTheCallLimitTheKeysItHoldsBackAndTheLatencyItSees() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<String, String> down = new RecordingDownstream<>(loop);
    PerKeyFerry<String, String, List<String>, String> ferry = new PerKeyFerry<>(loop,
        PerKeyConfig.builder().dispatch(dev.ferry.Dispatch.ADAPTIVE).maxInFlightBatches(8).build(), s -> s, null, null,
        down, (in, r) -> in);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FerryMeterBinder.bind(ferry, registry, "orders");
    loop.runPending();
    ferry.submit("a"); // the learned limit starts at 1: a goes, b and c wait for it
    ferry.submit("b");
    ferry.submit("c");
    loop.runPending();
    assertEquals(1, registry.get("ferry.call.limit").gauge().value());
    assertEquals(2, registry.get("ferry.calls.waiting").gauge().value());
    // During slow start a round of the learned limit is one wave, as many calls as the limit
    // (ADR 0020): a's call, 3 ms, held b and c back.
    loop.advanceMillis(3);
    down.succeed(0);
    loop.runPending();
    // The round was held back by the limit and saw no queueing: the limit doubled.
    assertEquals(2, registry.get("ferry.call.limit").gauge().value());
    assertEquals(0.003, registry.get("ferry.call.latency.seen").gauge().value(), 1e-9);
    assertEquals(0.003, registry.get("ferry.call.latency.floor").gauge().value(), 1e-9);
  }

  /**
   * {@code ferry.calls.past.timeout} counts the calls whose callers were failed at the call timeout
   * and that are still on the wire (review AO): a hung downstream shows at the timeout, where
   * {@code ferry.call.latency} records such a call only once it ends.
   */
  @Test
  void perKeyMetersCountTheCallsPastTheirTimeoutStillOnTheWire() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<String, String> down = new RecordingDownstream<>(loop);
    PerKeyFerry<String, String, List<String>, String> ferry = new PerKeyFerry<>(loop,
        PerKeyConfig.builder().callTimeout(Duration.ofMillis(100)).pinnedLimit(2).build(), s -> s, null, null, down,
        (in, r) -> in);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FerryMeterBinder.bind(ferry, registry, "orders");
    loop.runPending();
    ferry.submit("a");
    ferry.submit("b");
    loop.runPending();
    assertEquals(0, registry.get("ferry.calls.past.timeout").tag("ferry", "orders").gauge().value());
    loop.advanceMillis(100);
    assertEquals(2, registry.get("ferry.calls.past.timeout").gauge().value());
    down.succeed(0);
    loop.runPending();
    assertEquals(1, registry.get("ferry.calls.past.timeout").gauge().value(), "a late answer ends its call");
    down.fail(1, new IllegalStateException("late failure"));
    loop.runPending();
    assertEquals(0, registry.get("ferry.calls.past.timeout").gauge().value());
  }

  /**
   * A binder bound while a call is already past its timeout (review AQ): it hears of that call's
   * end, and heard nothing of its timeout. Counted from the events alone, the gauge read -1 then,
   * and never 1 while the call hung. Told of the calls already past their timeout as it binds, it
   * reads what is on the wire, and every call it heard end it had heard time out.
   */
  @Test
  void aBinderBoundWhileACallIsPastItsTimeoutCountsIt() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<String, String> down = new RecordingDownstream<>(loop);
    PerKeyFerry<String, String, List<String>, String> ferry = new PerKeyFerry<>(loop,
        PerKeyConfig.builder().callTimeout(Duration.ofMillis(100)).pinnedLimit(2).build(), s -> s, null, null, down,
        (in, r) -> in);
    ferry.submit("a");
    loop.runPending();
    loop.advanceMillis(100); // past its timeout, and no one listening
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FerryMeterBinder.bind(ferry, registry, "orders");
    loop.runPending();
    assertEquals(1, registry.get("ferry.calls.past.timeout").tag("ferry", "orders").gauge().value(),
        "the call past its timeout when the binder bound is still on the wire");
    down.succeed(0);
    loop.runPending();
    assertEquals(0, registry.get("ferry.calls.past.timeout").gauge().value(), "never below zero");
  }

  @Test
  void makeMetersRecordBatchesToo() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<Void, String> down = new RecordingDownstream<>(loop);
    StreamFerry<String, List<String>, String> ferry = new StreamFerry<>(loop,
        FerryConfig.builder().maxInFlightBatches(1).build(), null, inputs -> down.call(null, inputs), (in, r) -> in);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FerryMeterBinder.bind(ferry, registry, "stream");
    loop.runPending();
    ferry.submit("a");
    ferry.submit("b");
    ferry.submit("c");
    loop.runPending();
    down.succeed(0);
    loop.runPending();
    assertEquals(2, registry.get("ferry.batch.size").summary().count());
    assertEquals(2, registry.get("ferry.batch.size").summary().max());
  }

  private static PerKeyFerry<String, String, List<String>, String> perKey(VirtualLoop loop,
      RecordingDownstream<String, String> down) {
    return new PerKeyFerry<>(loop, PerKeyConfig.defaults(), s -> s, null, null, down, (in, r) -> in);
  }

  @Test
  void aSecondFerryUnderANameBoundInTheRegistryIsRefusedAndTheFirstKeepsItsMeters() {
    VirtualLoop loop = new VirtualLoop();
    RecordingDownstream<String, String> down = new RecordingDownstream<>(loop);
    PerKeyFerry<String, String, List<String>, String> first = perKey(loop, down);
    PerKeyFerry<String, String, List<String>, String> second = perKey(loop, down);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FerryMeterBinder firstMeters = FerryMeterBinder.bind(first, registry, "orders");
    loop.runPending();
    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
        () -> FerryMeterBinder.bind(second, registry, "orders"));
    assertTrue(refused.getMessage().contains("\"orders\""), refused.getMessage());
    first.submit("a");
    second.submit("b");
    second.submit("c");
    loop.runPending();
    assertEquals(1, registry.get("ferry.submitted").tag("ferry", "orders").functionCounter().count(),
        "the first ferry's figures, not the second's");
    FerryMeterBinder.bind(second, registry, "other").close(); // another name is free

    firstMeters.close();
    FerryMeterBinder secondMeters = FerryMeterBinder.bind(second, registry, "orders"); // free again
    assertEquals(2, registry.get("ferry.submitted").tag("ferry", "orders").functionCounter().count());
    secondMeters.close();
    assertEquals(0, registry.getMeters().size());
  }

  @Test
  void aRegistryThatRefusesAMeterLeavesNoMeterOfTheFerryBehind() {
    VirtualLoop loop = new VirtualLoop();
    PerKeyFerry<String, String, List<String>, String> ferry = perKey(loop, new RecordingDownstream<>(loop));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    boolean[] broken = {true};
    registry.config().meterFilter(new MeterFilter() {
      @Override
      public Meter.Id map(Meter.Id id) {
        if (broken[0] && id.getName().equals("ferry.batches")) {
          throw new IllegalStateException("the registry refuses " + id.getName());
        }
        return id;
      }
    });
    assertThrows(IllegalStateException.class, () -> FerryMeterBinder.bind(ferry, registry, "orders"));
    assertEquals(List.of(), registry.getMeters().stream().map(m -> m.getId().getName()).toList(),
        "the meters registered before the refusal are removed (they would hold the ferry)");
    broken[0] = false;
    FerryMeterBinder.bind(ferry, registry, "orders").close(); // and the name is free
  }

  @Test
  void aClosedFerrysMetersLeaveTheRegistryWithoutAClose() {
    VirtualLoop loop = new VirtualLoop();
    PerKeyFerry<String, String, List<String>, String> ferry = perKey(loop, new RecordingDownstream<>(loop));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FerryMeterBinder.bind(ferry, registry, "orders");
    loop.runPending();
    assertTrue(registry.getMeters().size() > 0);
    ferry.close();
    loop.runPending();
    assertEquals(0, registry.getMeters().size(), "the gauges would keep the closed ferry alive");
    PerKeyFerry<String, String, List<String>, String> next = perKey(loop, new RecordingDownstream<>(loop));
    FerryMeterBinder.bind(next, registry, "orders"); // its name is free for the next ferry
    loop.runPending();
    assertEquals(0, registry.get("ferry.submitted").tag("ferry", "orders").functionCounter().count());
    // Bound once closed: nothing stays registered either.
    FerryMeterBinder.bind(ferry, registry, "late");
    loop.runPending();
    assertEquals(0, registry.find("ferry.submitted").tag("ferry", "late").meters().size());
  }

  @Test
  void keyedRejectionsAreCountedByTheRejectedMeterAsInTheSnapshot() {
    VirtualLoop loop = new VirtualLoop();
    List<io.vertx.core.Promise<java.util.Map<String, String>>> calls = new java.util.ArrayList<>();
    dev.ferry.internal.KeyedFerry<String, String> ferry = new dev.ferry.internal.KeyedFerry<>(loop,
        FerryConfig.builder().maxInFlightBatches(1).maxQueueing(1).build(), keys -> {
          io.vertx.core.Promise<java.util.Map<String, String>> p = io.vertx.core.Promise.promise();
          calls.add(p);
          return p.future();
        });
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FerryMeterBinder.bind(ferry, registry, "lookups");
    loop.runPending();
    ferry.submit("x"); // in flight
    ferry.submit("a"); // waits: the room is full
    ferry.submit("b"); // refused
    ferry.submit("a"); // refused too: sharing a's entry would take room as well
    loop.runPending();
    assertEquals(2, ferry.metrics().rejected());
    assertEquals(2, registry.get("ferry.rejected").tag("reason", "queueing").counter().count(),
        "the meter agrees with the snapshot");
  }

  @Test
  void aFerryBoundOnceItsVertxIsClosedLeavesNoMeterAndItsNameFree() throws Exception {
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    dev.ferry.Ferry<String, String> ferry = dev.ferry.Ferry.perKey(vertx.getOrCreateContext(), PerKeyConfig.defaults(),
        s -> s, null, null, (k, in) -> io.vertx.core.Future.succeededFuture(in), (in, r) -> in);
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FerryMeterBinder.bind(ferry, registry, "orders");
    // Its loop is gone: nothing will ever be recorded, and the gauges would hold the closed ferry.
    assertEquals(List.of(), registry.getMeters().stream().map(m -> m.getId().getName()).toList());
    FerryMeterBinder.bind(ferry, registry, "orders").close(); // the name is free
  }

  /**
   * A registry whose removal fails (a meter-removed listener that throws) still loses every meter
   * of the ferry and frees its name, whether the binding is closed or the ferry: the close stopped
   * at the first throw, leaving the meters after it (the gauges holding the ferry) and the name
   * taken for good.
   */
  @Test
  void aRegistryWhoseRemovalThrowsStillLosesEveryMeterAndFreesTheName() {
    VirtualLoop loop = new VirtualLoop();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    registry.config().onMeterRemoved(m -> {
      if (m.getId().getName().equals("ferry.batches")) {
        throw new IllegalStateException("the registry's listener is broken");
      }
    });
    FerryMeterBinder meters = FerryMeterBinder.bind(perKey(loop, new RecordingDownstream<>(loop)), registry, "orders");
    loop.runPending();
    IllegalStateException told = assertThrows(IllegalStateException.class, meters::close);
    assertEquals("the registry's listener is broken", told.getMessage());
    assertEquals(List.of(), registry.getMeters().stream().map(m -> m.getId().getName()).toList());

    PerKeyFerry<String, String, List<String>, String> ferry = perKey(loop, new RecordingDownstream<>(loop));
    FerryMeterBinder.bind(ferry, registry, "orders"); // the name was freed
    loop.runPending();
    ferry.close(); // the ferry's close removes them, its throw reported to the loop
    loop.runPending();
    assertEquals(List.of(), registry.getMeters().stream().map(m -> m.getId().getName()).toList());
    assertEquals(1, loop.reported.size(), loop.reported.toString());
    FerryMeterBinder.bind(perKey(loop, new RecordingDownstream<>(loop)), registry, "orders"); // free again
  }
}
