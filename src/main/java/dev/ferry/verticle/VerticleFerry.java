package dev.ferry.verticle;

import dev.ferry.BatchCall;
import dev.ferry.Ferry;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.internal.VertxLoop;
import io.vertx.core.Context;
import io.vertx.core.json.JsonArray;
import java.util.Comparator;

/**
 * Builds the verticle's per-key ferry on its context. It is what {@code Ferry.perKey(context, ...)}
 * builds, except for the {@link FlushingLoop} workaround, which needs the loop injected.
 */
public final class VerticleFerry {
  private VerticleFerry() {}

  public static Ferry<Submission, Object> create(
      Context context, VerticleConfig settings, BatchCall<String, Submission, JsonArray> call) {
    FlushingLoop loop = new FlushingLoop(new VertxLoop(context));
    Comparator<Submission> order = settings.headerOrder() ? Comparator.comparingLong(s -> s.order) : null;
    // Every input is weighed (one JSON encoding, done at parse): the bounds need it when set, and
    // queuedWeight in the metrics stays meaningful when they are not (docs/adr/0022).
    Ferry<Submission, Object> ferry = new PerKeyFerry<String, Submission, JsonArray, Object>(
        loop, settings.perKey(), s -> s.key, s -> s.weight, order, call, BatchOutcomes::extract);
    // The sentinel has no key: the ferry refuses it without touching any state, and on the way
    // out runs whatever effects the timer task queued.
    loop.flushWith(() -> ferry.submit(Submission.FLUSH));
    return ferry;
  }
}
