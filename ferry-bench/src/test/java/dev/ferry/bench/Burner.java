package dev.ferry.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * A CPU hog for the contention scenario, run as a process of its own: {@code threads} threads that
 * spin for {@code seconds} and exit. It also exits as soon as its standard input closes (the
 * harness that started it is gone), so it never outlives a run. Plain Java, no dependency.
 */
public final class Burner {
  private Burner() {}

  static volatile long sink;

  public static void main(String[] args) throws Exception {
    int threads = Integer.parseInt(args[0]);
    long seconds = Long.parseLong(args[1]);
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    Thread watchdog = new Thread(() -> {
      try {
        while (System.in.read() >= 0) {
          // keep reading until the harness closes the pipe
        }
      } catch (Exception ignored) {
        // a broken pipe means the same
      }
      System.exit(0);
    });
    watchdog.setDaemon(true);
    watchdog.start();
    List<Thread> spinners = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        long x = 1;
        while (System.nanoTime() < end) {
          for (int k = 0; k < 10_000; k++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
          }
        }
        sink = x;
      });
      t.start();
      spinners.add(t);
    }
    for (Thread t : spinners) {
      t.join();
    }
    System.exit(0);
  }
}
