package dev.ferry.demo;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.Locale;

/**
 * The live progress line: the callers' counts from {@link Load} and the ferry's own, asked from
 * {@code ferry.metrics} like any monitoring tool would. On a terminal it is one line rewritten with
 * {@code \r} every 500 ms; when the output is not a terminal (a pipe, a CI log) it prints a plain
 * line every 2 s instead. Lives on the load's context.
 */
final class Progress {
  private final Vertx vertx;
  private final Load load;
  private final PrintStream out;
  private final boolean enabled;
  private final boolean terminal;
  private long timer = -1;
  private int width;

  Progress(Vertx vertx, Load load, PrintStream out, boolean enabled) {
    this.vertx = vertx;
    this.load = load;
    this.out = out;
    this.enabled = enabled;
    this.terminal = out == System.out && System.console() != null;
  }

  void start() {
    if (enabled) {
      timer = vertx.setPeriodic(terminal ? 500 : 2000, id -> print());
    }
  }

  /** Stops the timer and prints the last line, ended. */
  Future<Void> stop() {
    if (!enabled) {
      return Future.succeededFuture();
    }
    vertx.cancelTimer(timer);
    return line().map(text -> {
      show(text);
      if (terminal) {
        out.println();
      }
      out.flush();
      return null;
    });
  }

  private void print() {
    line().onSuccess(this::show);
  }

  private void show(String text) {
    if (terminal) {
      String padded = text.length() < width ? text + " ".repeat(width - text.length()) : text;
      width = text.length();
      out.print("\r" + padded);
    } else {
      out.println(text);
    }
    out.flush();
  }

  private Future<String> line() {
    return vertx.eventBus().<JsonObject>request(MainJob.METRICS_ADDRESS, new JsonObject())
        .map(Message::body)
        .otherwise(e -> new JsonObject())
        .map(m -> {
          double elapsed = (System.nanoTime() - load.startNanos()) / 1e9;
          long batches = m.getLong("batches", 0L);
          long sent = m.getLong("submitted", 0L) - m.getLong("rejected", 0L) - m.getLong("timedOut", 0L)
              - m.getLong("queuedInputs", 0L);
          StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
              "%6.1f s  acknowledged %,d  in flight %,d  batches %,d  mean batch %.1f",
              elapsed, load.acked, load.inFlight, batches, batches == 0 ? 0.0 : sent / (double) batches));
          if (load.refused > 0) {
            s.append(String.format(Locale.ROOT, "  refused %,d", load.refused));
          }
          long failures = load.rejected + load.failed + load.other;
          if (failures > 0) {
            s.append(String.format(Locale.ROOT, "  failed %,d", failures));
          }
          return s.toString();
        });
  }
}
