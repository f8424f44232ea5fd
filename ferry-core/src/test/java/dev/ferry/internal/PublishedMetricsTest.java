package dev.ferry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryMetrics;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The published metrics read from another thread: never a mix of two transitions, never older than
 * one already read, and exactly the last published state once the loop is quiet (ADR 0074).
 */
class PublishedMetricsTest {
  /** Every figure of state {@code n} is derived from n, so a read mixing two states shows. */
  private static FerryMetrics state(long n) {
    return new FerryMetrics((int) n, (int) (n + 1), n + 2, (int) (n + 3), n + 4, n + 5, n + 6, n + 7, n + 8, n + 9,
        (int) (n + 10), (int) (n + 11), n + 12, n + 13, n + 14);
  }

  private static final class OneThreadLoop implements Loop {
    volatile Thread owner;
    @Override public boolean inLoop() { return Thread.currentThread() == owner; }
    @Override public void execute(Runnable task) { throw new UnsupportedOperationException(); }
    @Override public long nanoTime() { return System.nanoTime(); }
    @Override public long schedule(long delayNanos, Runnable task) { throw new UnsupportedOperationException(); }
    @Override public void cancel(long timerId) {}
  }

  @Test
  void readsFromAnotherThreadAreWholeStatesInOrder() throws Exception {
    OneThreadLoop loop = new OneThreadLoop();
    long[] now = {0};
    PublishedMetrics published = new PublishedMetrics(loop, () -> state(now[0]));
    assertEquals(new FerryMetrics(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), published.get(), "nothing published yet: zeros");

    long last = 2_000_000;
    AtomicBoolean done = new AtomicBoolean();
    AtomicReference<String> wrong = new AtomicReference<>();
    long[] reads = {0};
    Thread reader = new Thread(() -> {
      long seen = -1;
      while (!done.get() && wrong.get() == null) {
        FerryMetrics m = published.get();
        long n = m.inFlightBatches();
        if (!m.equals(state(n)) && !(n == 0 && m.submitted() == 0)) {
          wrong.set("a mixed read: " + m);
        } else if (n < seen) {
          wrong.set("went back from state " + seen + " to " + n);
        }
        seen = n;
        reads[0]++;
      }
    });
    Thread writer = new Thread(() -> {
      for (long n = 1; n <= last; n++) {
        now[0] = n;
        published.publish();
      }
    });
    loop.owner = writer;
    reader.start();
    writer.start();
    writer.join();
    done.set(true);
    reader.join();
    assertEquals(null, wrong.get());
    assertTrue(reads[0] > 0, "the reader read");
    assertEquals(state(last), published.get(), "quiet loop: the last state published");
  }

  @Test
  void onTheLoopTheReadIsExact() {
    OneThreadLoop loop = new OneThreadLoop();
    loop.owner = Thread.currentThread();
    long[] now = {7};
    PublishedMetrics published = new PublishedMetrics(loop, () -> state(now[0]));
    now[0] = 9; // not published yet
    assertEquals(state(9), published.get());
  }
}
