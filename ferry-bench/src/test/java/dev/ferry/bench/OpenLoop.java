package dev.ferry.bench;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.function.IntFunction;

/**
 * An open-loop load generator: input {@code i} is due at {@code start + i / rate}, whether or not
 * earlier inputs were answered. It runs on a Vert.x context, woken by a 1 ms periodic timer that
 * sends every input that has come due since the last tick, so arrivals stay on schedule at any rate
 * without a timer per input. Nothing here blocks or locks: it is event-loop code.
 */
final class OpenLoop {
  /** Sends input {@code i}; the returned Future completes when that input is answered. */
  interface Sender {
    Future<?> send(int i);
  }

  private OpenLoop() {}

  /**
   * Sends {@code count} inputs at {@code ratePerSecond} from {@code context}, recording each into
   * {@code latencies}. Completes once the last input is sent (not answered), with the start time.
   */
  static Future<Long> run(Context context, double ratePerSecond, int count, Latencies latencies, Sender sender) {
    Promise<Long> sent = Promise.promise();
    context.runOnContext(v -> {
      long start = System.nanoTime();
      double gapNanos = 1e9 / ratePerSecond;
      int[] next = {0};
      IntFunction<Long> dueAt = i -> start + (long) (i * gapNanos);
      Runnable tick = () -> {
        long now = System.nanoTime();
        while (next[0] < count && dueAt.apply(next[0]) <= now) {
          int i = next[0]++;
          latencies.begin(i, dueAt.apply(i));
          sender.send(i).onComplete(ar -> latencies.end(i, ar.succeeded()));
        }
      };
      tick.run();
      context.owner().setPeriodic(1, id -> {
        tick.run();
        if (next[0] >= count) {
          context.owner().cancelTimer(id);
          sent.complete(start);
        }
      });
    });
    return sent.future();
  }
}
