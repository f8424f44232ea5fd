package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.FerryConfig;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.internal.StreamFerry;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
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
}
