package dev.ferry.demo;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.PrintStream;
import java.util.Locale;

/**
 * The live progress line: the callers' counts from {@link Load} and the store's calls as the
 * {@link DownstreamCounter} sees them on the event bus. On a terminal it is one line rewritten with
 * {@code \r} every 500 ms; when the output is not a terminal (a pipe, a CI log) it prints a plain
 * line every 2 s instead. Lives on the load's context.
 */
final class Progress {
  private final Vertx vertx;
  private final String label;
  private final Load load;
  private final DownstreamCounter counter;
  private final PrintStream out;
  private final boolean enabled;
  private final boolean terminal;
  private long timer = -1;
  private int width;

  private final long callsAtStart;
  private final long carriedAtStart;

  Progress(Vertx vertx, String label, Load load, DownstreamCounter counter, PrintStream out, boolean enabled) {
    this.vertx = vertx;
    this.label = label;
    this.load = load;
    this.counter = counter;
    this.callsAtStart = counter.calls();
    this.carriedAtStart = counter.carried();
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
    show(line());
    if (terminal) {
      out.println();
    }
    out.flush();
    return Future.succeededFuture();
  }

  private void print() {
    show(line());
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

  private String line() {
    double elapsed = (System.nanoTime() - load.startNanos()) / 1e9;
    long calls = counter.calls() - callsAtStart;
    long carried = counter.carried() - carriedAtStart;
    StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
        "%-10s %6.1f s  acknowledged %,d  in flight %,d  calls %,d  mean batch %.1f",
        label, elapsed, load.acked, load.inFlight, calls, calls == 0 ? 0.0 : carried / (double) calls));
    if (load.refused > 0) {
      s.append(String.format(Locale.ROOT, "  refused %,d", load.refused));
    }
    long failures = load.rejected + load.failed + load.other;
    if (failures > 0) {
      s.append(String.format(Locale.ROOT, "  failed %,d", failures));
    }
    return s.toString();
  }
}
