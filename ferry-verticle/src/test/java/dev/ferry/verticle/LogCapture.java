package dev.ferry.verticle;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;

/**
 * What an operator would read in the log, for a test to look at: a java.util.logging handler that
 * keeps one line per record at {@code least} or above. A test adds it to a logger before it acts
 * and removes it after.
 */
final class LogCapture extends Handler {
  /** The lines kept, in the order logged. */
  final List<String> lines = new CopyOnWriteArrayList<>();
  private final Level least;
  private final Function<LogRecord, String> line;

  /** Keeps each record's message with its parameters filled in, as the log shows it. */
  LogCapture(Level least) {
    this(least, new SimpleFormatter()::formatMessage);
  }

  /** Keeps {@code line} of each record. */
  LogCapture(Level least, Function<LogRecord, String> line) {
    this.least = least;
    this.line = line;
  }

  @Override
  public void publish(LogRecord record) {
    if (record.getLevel().intValue() >= least.intValue()) {
      lines.add(line.apply(record));
    }
  }

  @Override
  public void flush() {}

  @Override
  public void close() {}
}
