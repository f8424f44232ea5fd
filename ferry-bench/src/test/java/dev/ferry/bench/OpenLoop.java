package dev.ferry.bench;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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

  /** Wakes at each input's due time to the microsecond, for {@link #runOnTime}. */
  private static final ScheduledExecutorService ARRIVALS = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "open-loop-arrivals");
    t.setDaemon(true);
    return t;
  });

  private OpenLoop() {}

  /**
   * Like {@link #run}, but each input reaches the context at its own due time, as a request from
   * outside would: a thread of its own wakes at the due time and hands the input to the context
   * (which runs it as soon as it is free), instead of a 1 ms tick that sends whatever came due
   * since the last one. The tick makes an input wait up to a millisecond before anyone sees it,
   * and that wait counts in its latency (its clock starts when it was due): fine for comparing
   * contenders under one generator, wrong for a figure judged against an absolute target. The
   * clock still starts at the due time, so a late wake-up, a busy or stalled context counts, as
   * before. One scheduled task per input: meant for low rates (hundreds a second).
   */
  static Future<Long> runOnTime(Context context, double ratePerSecond, int count, Latencies latencies, Sender sender) {
    Promise<Long> sent = Promise.promise();
    long start = System.nanoTime() + 1_000_000;
    double gapNanos = 1e9 / ratePerSecond;
    for (int n = 0; n < count; n++) {
      int i = n;
      long due = start + (long) (i * gapNanos);
      ARRIVALS.schedule(() -> context.runOnContext(v -> {
        latencies.begin(i, due);
        sender.send(i).onComplete(ar -> latencies.end(i, ar.succeeded()));
        if (i == count - 1) {
          sent.complete(start);
        }
      }), due - System.nanoTime(), TimeUnit.NANOSECONDS);
    }
    return sent.future();
  }

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
