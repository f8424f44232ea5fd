package dev.ferry.verticle;

import dev.ferry.Ferry;
import dev.ferry.internal.Probe;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Publishes one ferry's state and work as Micrometer meters, all tagged {@code ferry=<name>} (the
 * verticle uses its submit address as the name; never a lane key, whose cardinality is unbounded).
 *
 * <ul>
 *   <li>gauges {@code ferry.inflight.batches}, {@code ferry.queued.inputs}, {@code
 *       ferry.queued.weight}, {@code ferry.active.lanes}; and the call limit: {@code
 *       ferry.call.limit} (the limit in force), {@code ferry.calls.waiting} (keys ready to call but
 *       held back by the limit; make and keyed: 1 while a batch is ready and every slot is busy), {@code ferry.call.latency.seen} and {@code
 *       ferry.call.latency.floor} (seconds: the mean latency the adaptive limit last judged, and the
 *       latency without queueing it compared it with), {@code ferry.loop.lag.seen} (seconds: how
 *       late the ferry's loop ran those calls' completions), {@code ferry.calls.past.timeout}
 *       (calls whose callers were failed at the call timeout, still on the wire);
 *   <li>counters {@code ferry.submitted}, {@code ferry.batches}, {@code ferry.direct.calls},
 *       {@code ferry.batches.failed}, {@code ferry.timeouts}, {@code ferry.rejected} (tag {@code
 *       reason}: {@code queueing} or {@code weight});
 *   <li>distributions {@code ferry.batch.size}, {@code ferry.batch.weight}, timers {@code
 *       ferry.queue.wait} (per input, admission to departure) and {@code ferry.call.latency}.
 * </ul>
 *
 * Gauges and function counters read {@link Ferry#metrics()} when scraped: exact when the scrape
 * runs on the ferry's context, otherwise the snapshot the ferry published at the end of its last
 * transition (docs/adr/0025; the ferry's state is never read from another thread). Distributions
 * and rejections are recorded by the engine as it works, on the ferry's context.
 *
 * <p>A name is one ferry's in a registry: binding a second ferry under a name bound there is
 * refused until the first binding is closed. Micrometer would hand the second binding the first
 * one's meters (same name and tags): its gauges would read the other ferry, and closing either
 * binding would remove the other's meters. The meters are removed when the binding is closed, and
 * at the latest once the ferry is closed, so that a closed ferry is not kept alive by the registry
 * nor its name kept taken (docs/adr/0130).
 */
public final class FerryMeterBinder implements AutoCloseable {
  /**
   * The names bound in each registry (registries by identity; a registry let go of is forgotten).
   * Shared by every ferry of the process, bound from their own contexts, so guarded by its own
   * lock: taken only when a binding is made or closed, never per input, and never by the engine.
   */
  private static final Map<MeterRegistry, Set<String>> BOUND = new WeakHashMap<>();

  private final MeterRegistry registry;
  private final String name;
  private final List<Meter> meters = new ArrayList<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private Runnable stopObserving = () -> {};

  private FerryMeterBinder(Ferry<?, ?> ferry, MeterRegistry registry, String name) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.name = Objects.requireNonNull(name, "name");
    Objects.requireNonNull(ferry, "ferry");
    claim(registry, name);
    try {
      register(ferry);
    } catch (RuntimeException | Error e) {
      // A registry that refuses a meter (a filter that throws, a Prometheus name clash): what was
      // registered is removed again, or it would keep the ferry alive and the name taken.
      try {
        close();
      } catch (RuntimeException | Error cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    }
  }

  /**
   * The refusal of a name bound already: its own type, so that the verticle tells it apart from an
   * IllegalArgumentException of the registry's own (Prometheus refusing a meter, say), which has
   * nothing to do with another ferry.
   */
  static final class NameTaken extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    NameTaken(String message) {
      super(message);
    }
  }

  private static void claim(MeterRegistry registry, String name) {
    synchronized (BOUND) {
      if (!BOUND.computeIfAbsent(registry, r -> new HashSet<>()).add(name)) {
        throw new NameTaken("a ferry named \"" + name + "\" is bound in this registry already:"
            + " close its FerryMeterBinder first, or give this ferry another name");
      }
    }
  }

  private static void release(MeterRegistry registry, String name) {
    synchronized (BOUND) {
      Set<String> names = BOUND.get(registry);
      if (names != null) {
        names.remove(name);
      }
    }
  }

  private void register(Ferry<?, ?> ferry) {
    Tags tags = Tags.of("ferry", name);
    gauge("ferry.inflight.batches", "calls on the wire, direct calls included", ferry, tags, f -> f.metrics().inFlightBatches());
    gauge("ferry.queued.inputs", "inputs waiting in lanes", ferry, tags, f -> f.metrics().queuedInputs());
    gauge("ferry.queued.weight", "total weight of the waiting inputs", ferry, tags, f -> f.metrics().queuedWeight());
    gauge("ferry.active.lanes", "keys with inputs waiting or a call in flight", ferry, tags, f -> f.metrics().activeLanes());
    gauge("ferry.call.limit", "the limit in force on calls in flight", ferry, tags, f -> f.metrics().callLimit());
    gauge("ferry.calls.waiting", "keys ready to call, held back by the call limit", ferry, tags, f -> f.metrics().callsWaiting());
    gauge("ferry.call.latency.seen", "mean call latency the adaptive limit last judged, in seconds", ferry, tags,
        f -> f.metrics().seenLatencyMicros() / 1e6);
    gauge("ferry.call.latency.floor", "the call latency without queueing it was compared with, in seconds", ferry, tags,
        f -> f.metrics().seenFloorMicros() / 1e6);
    gauge("ferry.loop.lag.seen", "how late the ferry's event loop ran the calls' completions the adaptive limit last judged, in seconds",
        ferry, tags, f -> f.metrics().seenLoopLagMicros() / 1e6);
    // The engine's own count, in the snapshot (ADR 0170): a hung downstream shows here at
    // callTimeoutMs, while ferry.call.latency records such a call only when it ends. Read as every
    // gauge is, it is right for a binding made while such a call hangs, with nothing to replay.
    gauge("ferry.calls.past.timeout", "calls whose callers were failed at the call timeout, still on the wire (each holds its key)",
        ferry, tags, f -> f.metrics().callsPastTimeout());
    counter("ferry.submitted", "inputs submitted", ferry, tags, f -> f.metrics().submitted());
    counter("ferry.batches", "calls started, direct calls included", ferry, tags, f -> f.metrics().batches());
    counter("ferry.direct.calls", "idle keys' inputs called at once", ferry, tags, f -> f.metrics().directCalls());
    counter("ferry.batches.failed", "calls that failed or timed out", ferry, tags, f -> f.metrics().failedBatches());
    counter("ferry.timeouts", "inputs dropped at their caller's deadline", ferry, tags, f -> f.metrics().timedOut());

    if (ferry instanceof Probe.Observable observable) {
      Counter rejectedCount = add(Counter.builder("ferry.rejected").description("inputs refused: the waiting room was full")
          .tags(tags).tag("reason", "queueing").register(registry));
      Counter rejectedWeight = add(Counter.builder("ferry.rejected").description("inputs refused: the waiting room was full")
          .tags(tags).tag("reason", "weight").register(registry));
      DistributionSummary size = add(DistributionSummary.builder("ferry.batch.size").description("inputs per call")
          .tags(tags).publishPercentileHistogram().register(registry));
      DistributionSummary weight = add(DistributionSummary.builder("ferry.batch.weight").description("weight per call")
          .tags(tags).register(registry));
      Timer wait = add(Timer.builder("ferry.queue.wait").description("time an input waited before leaving")
          .tags(tags).publishPercentileHistogram().register(registry));
      Timer latency = add(Timer.builder("ferry.call.latency").description("time a call was on the wire")
          .tags(tags).publishPercentileHistogram().register(registry));
      Runnable stop = observable.observe(new Probe() {
        @Override
        public void batchStarted(boolean direct, int n, long w, long[] waitsNanos) {
          size.record(n);
          weight.record(w);
          for (long nanos : waitsNanos) {
            wait.record(nanos, TimeUnit.NANOSECONDS);
          }
        }

        @Override
        public void batchFinished(long latencyNanos, boolean failed) {
          latency.record(latencyNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void rejected(String reason) {
          ("weight".equals(reason) ? rejectedWeight : rejectedCount).increment();
        }

        @Override
        public void closed() {
          // The gauges hold the ferry: left in the registry, they would keep a closed ferry alive.
          close();
        }
      });
      stopObserving = stop;
    }
  }

  /**
   * Registers the meters of {@code ferry} in {@code registry} under {@code name}; {@link #close()}
   * removes them again, as the ferry's close does.
   *
   * @throws IllegalArgumentException when a ferry is bound under {@code name} in {@code registry}
   *     already (and its binding not closed)
   */
  public static FerryMeterBinder bind(Ferry<?, ?> ferry, MeterRegistry registry, String name) {
    return new FerryMeterBinder(ferry, registry, name);
  }

  /**
   * Removes the meters from the registry and stops recording; frees the name. Idempotent, any
   * thread. A registry whose removal throws (a meter-removed listener) still loses every meter and
   * the name is freed; then the first throw is thrown.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    stopObserving.run();
    Throwable first = null;
    for (Meter meter : meters) {
      // Each one, whatever the others did: a meter left behind keeps the ferry alive (its gauges).
      try {
        registry.remove(meter);
      } catch (RuntimeException | Error e) {
        if (first == null) {
          first = e;
        } else if (first != e) {
          first.addSuppressed(e);
        }
      }
    }
    release(registry, name);
    if (first instanceof RuntimeException r) {
      throw r;
    } else if (first != null) {
      throw (Error) first;
    }
  }

  private <M extends Meter> M add(M meter) {
    meters.add(meter);
    return meter;
  }

  private <F extends Ferry<?, ?>> void gauge(String name, String help, F ferry, Tags tags, ToDoubleFunction<F> read) {
    add(Gauge.builder(name, ferry, read).description(help).tags(tags).strongReference(true).register(registry));
  }

  private <F extends Ferry<?, ?>> void counter(String name, String help, F ferry, Tags tags, ToDoubleFunction<F> read) {
    add(FunctionCounter.builder(name, ferry, read).description(help).tags(tags).register(registry));
  }
}
