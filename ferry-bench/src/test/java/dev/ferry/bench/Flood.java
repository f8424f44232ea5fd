package dev.ferry.bench;

import dev.ferry.Ferry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Closed-loop flooding of hot keys: each key keeps {@code window} inputs outstanding, and every
 * answer is replaced at once by a new input for the same key. Runs on the ferry's own context, so
 * the flag and the re-submission need no locks; {@link #answered} is atomic only for the harness
 * thread that reads it.
 */
final class Flood {
  final AtomicLong answered = new AtomicLong();
  private final Context context;
  private final Ferry<String, ?> ferry;
  private boolean running = true;

  private Flood(Context context, Ferry<String, ?> ferry) {
    this.context = context;
    this.ferry = ferry;
  }

  /** Starts keeping {@code window} inputs outstanding on each of {@code keys} keys named {@code prefix + n}. */
  static Flood start(Context context, Ferry<String, ?> ferry, String prefix, int keys, int window) {
    Flood flood = new Flood(context, ferry);
    context.runOnContext(v -> {
      for (int k = 0; k < keys; k++) {
        for (int i = 0; i < window; i++) {
          flood.keepSending(prefix + k);
        }
      }
    });
    return flood;
  }

  private void keepSending(String key) {
    ferry.submit(key).onComplete(ar -> {
      if (ar.succeeded()) {
        answered.incrementAndGet();
      }
      if (running) {
        keepSending(key);
      }
    });
  }

  /** Stops replacing answered inputs; those outstanding still complete. */
  Future<Void> stop() {
    Promise<Void> stopped = Promise.promise();
    context.runOnContext(v -> {
      running = false;
      stopped.complete();
    });
    return stopped.future();
  }
}
