package dev.ferry.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded server's data folder while the server is set up: gone on a failure or a JVM stopped meanwhile. */
class SetUpFolderTest {
  @TempDir
  Path parent;

  /** Records the hooks instead of giving them to the JVM. */
  private static final class Recorded implements SetUpFolder.Hooks {
    final List<Thread> added = new ArrayList<>();
    final List<Thread> live = new ArrayList<>();

    @Override
    public void add(Thread hook) {
      added.add(hook);
      live.add(hook);
    }

    @Override
    public void remove(Thread hook) {
      live.remove(hook);
    }
  }

  private static Path fill(Path folder) throws Exception {
    Files.writeString(Files.createDirectories(folder.resolve("base/1")).resolve("PG_VERSION"), "14");
    Files.writeString(folder.resolve("postmaster.pid"), "1");
    return folder;
  }

  @Test
  void aSetUpThatFailsTakesItsFolderAndItsHookAway() throws Exception {
    Recorded hooks = new Recorded();
    Path path;
    try (SetUpFolder folder = SetUpFolder.create(parent, "pg", hooks)) {
      path = fill(folder.path());
      assertEquals(1, hooks.live.size(), "no hook while the set-up is under way");
    }
    assertFalse(Files.exists(path), "the folder of a failed set-up is still there");
    assertEquals(List.of(), hooks.live);
  }

  @Test
  void aJvmStoppedDuringTheSetUpDeletesTheFolder() throws Exception {
    Recorded hooks = new Recorded();
    try (SetUpFolder folder = SetUpFolder.create(parent, "pg", hooks)) {
      Path path = fill(folder.path());
      hooks.live.get(0).run(); // SIGTERM or Ctrl-C now: the JVM runs its shutdown hooks
      assertFalse(Files.exists(path), "the folder outlives a JVM stopped during the set-up");
    }
  }

  @Test
  void aSetUpThatSucceededKeepsItsFolderWithoutAHook() throws Exception {
    Recorded hooks = new Recorded();
    Path path;
    try (SetUpFolder folder = SetUpFolder.create(parent, "pg", hooks)) {
      path = fill(folder.path());
      folder.keep();
    }
    assertTrue(Files.exists(path.resolve("base/1/PG_VERSION")), "the running server's folder was deleted");
    assertEquals(1, hooks.added.size());
    assertEquals(List.of(), hooks.live, "the hook outlives the set-up: it would delete a running server's data");
  }
}
