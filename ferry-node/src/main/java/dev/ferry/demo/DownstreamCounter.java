package dev.ferry.demo;

import io.vertx.core.Handler;
import io.vertx.core.eventbus.DeliveryContext;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts the calls the ferry makes to the store, and the inputs they carry, apart for busy and
 * quiet keys: an outbound event-bus interceptor that watches requests to the store's address and
 * passes every message on untouched. The ferry's own metrics count batches for all keys together;
 * this splits them, to show that busy keys batch while quiet keys go alone.
 */
final class DownstreamCounter implements Handler<DeliveryContext<Object>>, Timeline.Calls {
  private final String address;
  private final String busyPrefix;
  // written by whichever event loop sends the request, read by the load's context
  private final AtomicLong busyCalls = new AtomicLong();
  private final AtomicLong busyInputs = new AtomicLong();
  private final AtomicLong quietCalls = new AtomicLong();
  private final AtomicLong quietInputs = new AtomicLong();

  DownstreamCounter(String address, String busyPrefix) {
    this.address = address;
    this.busyPrefix = busyPrefix;
  }

  @Override
  public long busyCalls() {
    return busyCalls.get();
  }

  @Override
  public long busyCarried() {
    return busyInputs.get();
  }

  @Override
  public long quietCalls() {
    return quietCalls.get();
  }

  @Override
  public long quietCarried() {
    return quietInputs.get();
  }

  long calls() {
    return busyCalls.get() + quietCalls.get();
  }

  long carried() {
    return busyInputs.get() + quietInputs.get();
  }

  @Override
  public void handle(DeliveryContext<Object> ctx) {
    try {
      if (address.equals(ctx.message().address()) && ctx.body() instanceof JsonObject request) {
        String key = request.getString("key");
        JsonArray inputs = request.getJsonArray("inputs");
        int n = inputs == null ? 0 : inputs.size();
        if (key != null && key.startsWith(Load.PROBE_PREFIX)) {
          // the job's own yardstick, sent straight to the store: neither the load's nor Ferry's
        } else if (key != null && key.startsWith(busyPrefix)) {
          busyCalls.incrementAndGet();
          busyInputs.addAndGet(n);
        } else {
          quietCalls.incrementAndGet();
          quietInputs.addAndGet(n);
        }
      }
    } catch (RuntimeException ignored) {
      // counting is best effort; the message must go on whatever happens here
    }
    ctx.next();
  }
}
