package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Rendezvous ownership: agreement regardless of listing order, minimal movement, balance. */
class ClusterRendezvousTest {
  private static final List<String> NODES = List.of("a1f0", "b2e9", "c3d8", "d4c7");

  @Test
  void theOwnerDoesNotDependOnTheOrderOfTheView() {
    Random random = new Random(1);
    for (int k = 0; k < 2000; k++) {
      String key = "key-" + k;
      List<String> shuffled = new ArrayList<>(NODES);
      Collections.shuffle(shuffled, random);
      assertEquals(Rendezvous.owner(key, NODES), Rendezvous.owner(key, shuffled), key);
    }
    assertNull(Rendezvous.owner("k", List.of()));
  }

  @Test
  void aJoinMovesOnlyKeysToTheNewNodeAndALeaveOnlyTheLeaversKeys() {
    List<String> three = NODES.subList(0, 3);
    int moved = 0;
    for (int k = 0; k < 10_000; k++) {
      String key = "key-" + k;
      String before = Rendezvous.owner(key, three);
      String after = Rendezvous.owner(key, NODES);
      if (!before.equals(after)) {
        assertEquals("d4c7", after, "a join moved " + key + " between old nodes");
        moved++;
      }
      // Leaving is the same change backwards: only the leaver's keys move.
    }
    // About a quarter of the keys go to the fourth node.
    assertTrue(moved > 2200 && moved < 2800, "moved " + moved);
  }

  @Test
  void keysSpreadEvenly() {
    Map<String, Integer> count = new HashMap<>();
    for (int k = 0; k < 40_000; k++) {
      count.merge(Rendezvous.owner("order-" + k, NODES), 1, Integer::sum);
    }
    for (String n : NODES) {
      int c = count.getOrDefault(n, 0);
      assertTrue(c > 9_400 && c < 10_600, n + " owns " + c);
    }
  }

  @Test
  void weightsAreFixedAcrossRuns() {
    // Owners must agree between JVMs and versions: the hash is pinned, not String.hashCode.
    assertEquals(Rendezvous.weight("node", "key"), Rendezvous.weight("node", "key"));
    assertTrue(Rendezvous.weight("ab", "c") != Rendezvous.weight("a", "bc"), "the separator must matter");
  }
}
