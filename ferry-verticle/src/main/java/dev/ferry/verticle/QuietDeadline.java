package dev.ferry.verticle;

import io.vertx.core.Vertx;
import java.util.concurrent.TimeUnit;

/**
 * Ends a connection that brought nothing whole for {@code limitMs}: counted from its creation, then
 * from each {@link #touch()} (a whole bridge frame, a whole monitoring request). Bytes alone do not
 * touch it, so a client trickling a message a byte at a time is as quiet as one that sends nothing
 * (ADRs 0166, 0169). A touch only reads the clock; one timer checks the time since the last touch
 * and sets itself again for what is left, so a busy connection costs no timer per message.
 *
 * <p>Runs only on the connection's event loop, where its timer runs too.
 */
final class QuietDeadline {
  private final Vertx vertx;
  private final long limitMs;
  private final Runnable expired;
  private long lastNanos = System.nanoTime();
  private long timer;
  private boolean stopped;

  /** Starts the watch; {@code expired} runs once, when the limit passes with no touch. */
  QuietDeadline(Vertx vertx, long limitMs, Runnable expired) {
    this.vertx = vertx;
    this.limitMs = limitMs;
    this.expired = expired;
    this.timer = vertx.setTimer(limitMs, this::check);
  }

  /** Something whole arrived: the connection is not quiet. */
  void touch() {
    lastNanos = System.nanoTime();
  }

  /** The connection closed (or is watched otherwise now): no more checks. */
  void stop() {
    stopped = true;
    vertx.cancelTimer(timer);
  }

  private void check(long id) {
    if (stopped) {
      return;
    }
    long left = limitMs - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastNanos);
    if (left > 0) {
      timer = vertx.setTimer(left, this::check);
      return;
    }
    stopped = true;
    expired.run();
  }
}
