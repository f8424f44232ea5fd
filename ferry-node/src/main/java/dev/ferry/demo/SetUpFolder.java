package dev.ferry.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A temporary folder for a server being set up (the embedded PostgreSQL server's data): deleted
 * if the set-up fails ({@link #close()} without {@link #keep()}), and by a shutdown hook if the
 * JVM stops (SIGTERM, Ctrl-C) while it is under way. Once kept, the hook is gone and the folder is
 * its server's to delete. Used from one thread, the job's main thread.
 */
final class SetUpFolder implements AutoCloseable {
  /** Where the shutdown hook goes: the JVM's {@link Runtime}, or a test's stand-in. */
  interface Hooks {
    void add(Thread hook);

    void remove(Thread hook);
  }

  static final Hooks RUNTIME = new Hooks() {
    @Override
    public void add(Thread hook) {
      Runtime.getRuntime().addShutdownHook(hook);
    }

    @Override
    public void remove(Thread hook) {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // The JVM is stopping: the hook runs (or ran) and deletes the folder.
      }
    }
  };

  private final Path path;
  private final Hooks hooks;
  private final Thread hook;
  private boolean settled;

  private SetUpFolder(Path path, Hooks hooks) {
    this.path = path;
    this.hooks = hooks;
    this.hook = new Thread(() -> delete(path), "ferry-delete-" + path.getFileName());
  }

  /** Makes a new folder named {@code prefix}... in {@code parent} (null: the system's temporary folder). */
  static SetUpFolder create(Path parent, String prefix, Hooks hooks) throws IOException {
    Path path = parent == null ? Files.createTempDirectory(prefix) : Files.createTempDirectory(parent, prefix);
    SetUpFolder folder = new SetUpFolder(path, hooks);
    try {
      hooks.add(folder.hook);
    } catch (RuntimeException e) { // the JVM is stopping already
      delete(path);
      throw e;
    }
    return folder;
  }

  Path path() {
    return path;
  }

  /** The set-up succeeded: the folder stays (its server deletes it when closed), the hook goes. */
  void keep() {
    if (!settled) {
      settled = true;
      hooks.remove(hook);
    }
  }

  /** Unless kept: the set-up failed, so the hook goes and the folder with it. */
  @Override
  public void close() {
    if (!settled) {
      settled = true;
      hooks.remove(hook);
      delete(path);
    }
  }

  /**
   * Deletes {@code folder} and everything in it, as far as it can: a server process still writing
   * there (the JVM stopping under it) may add a file as it goes, so it tries a few times.
   */
  static void delete(Path folder) {
    for (int attempt = 0; attempt < 3 && Files.exists(folder); attempt++) {
      try (Stream<Path> all = Files.walk(folder)) {
        all.sorted(Comparator.reverseOrder()).forEach(p -> {
          try {
            Files.deleteIfExists(p);
          } catch (IOException ignored) {
            // a folder not empty yet, or a file gone meanwhile: the next attempt sees it again
          }
        });
      } catch (IOException | java.io.UncheckedIOException ignored) {
        // the folder changed under the walk: tried again
      }
    }
  }
}
