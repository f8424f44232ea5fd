package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The hold-until-released rule of ADR 0051, step by step, with views arriving in different
 * orders: a node starts a key it gained only once every live node that may have owned it since
 * its last settled view released the current view.
 */
class ClusterViewsTest {
  private static final Set<String> ABC = Set.of("a", "b", "c");
  private static final Set<String> AB = Set.of("a", "b");

  /** A key owned by {@code first} in view {@code v1} and by {@code second} in view {@code v2}. */
  private static String key(String first, List<String> v1, String second, List<String> v2) {
    for (int k = 0; k < 100_000; k++) {
      String key = "k" + k;
      if (first.equals(Rendezvous.owner(key, v1)) && second.equals(Rendezvous.owner(key, v2))) {
        return key;
      }
    }
    throw new AssertionError("no such key");
  }

  private static final List<String> V_AB = List.of("a", "b");
  private static final List<String> V_ABC = List.of("a", "b", "c");

  @Test
  void aJoiningNodeHoldsEveryKeyItOwnsUntilEachOtherNodeReleased() {
    Views c = new Views("c");
    assertTrue(c.adopt(ABC, ABC, 0));
    String gained = key("a", V_AB, "c", V_ABC);
    assertTrue(c.gated(gained));
    assertTrue(c.released("a", "a,b,c"));
    assertTrue(c.gated(gained), "one release is not enough");
    c.released("b", "a,b,c");
    assertFalse(c.gated(gained));
    assertTrue(c.settled());
  }

  @Test
  void aKeyKeptThroughTheChangeIsNeverHeldAndAReleaseMayArriveBeforeTheView() {
    Views a = new Views("a");
    a.adopt(AB, AB, 0);
    a.released("b", "a,b");
    assertTrue(a.settled());
    // c's release of the next view arrives before a sees that view.
    assertFalse(a.released("c", "a,b,c"));
    a.adopt(ABC, ABC, 1);
    String kept = key("a", V_AB, "a", V_ABC);
    assertFalse(a.gated(kept), "a key a owned all along waits for nobody");
    assertFalse(a.settled(), "b's release is still missing");
    a.released("b", "a,b,c");
    assertTrue(a.settled());
  }

  @Test
  void aCrashedNodeIsNotWaitedFor() {
    Views a = new Views("a");
    a.adopt(AB, AB, 0);
    a.released("b", "a,b");
    a.adopt(ABC, ABC, 1);
    a.released("b", "a,b,c");
    assertFalse(a.settled());
    // c dies before releasing: its member is removed, and with it the wait.
    a.adopt(AB, ABC, 2);
    assertEquals(List.of("a", "b"), a.view());
    a.released("b", "a,b");
    assertTrue(a.settled());
  }

  @Test
  void aKeyLostAndRegainedBeforeSettlingWaitsForTheNodeThatHadItInBetween() {
    Views a = new Views("a");
    a.adopt(AB, AB, 0);
    a.released("b", "a,b");
    // c joins and takes one of a's keys; then c withdraws before anyone settled.
    a.adopt(ABC, ABC, 1);
    String viaC = key("a", V_AB, "c", V_ABC);
    a.adopt(ABC, AB, Set.of("c"), 2); // c is leaving, not closed: it may still have a call for the key
    assertEquals("a", a.owner(viaC));
    assertTrue(a.gated(viaC));
    assertEquals(Set.of("b", "c"), a.releaseTargets(), "c, in an unsettled view, may wait for a's release");
    a.released("b", "a,b");
    assertTrue(a.gated(viaC), "still waiting for c");
    a.released("c", "a,b");
    assertFalse(a.gated(viaC));
    assertTrue(a.settled());
  }

  @Test
  void aJoiningNodeWaitsForALeavingNodeItNeverSawAnnounced() {
    // c joins while b is leaving (withdrawn, not closed): b may still have a call for a key that
    // c owns now, so c waits for b's release too.
    Views c = new Views("c");
    c.adopt(ABC, Set.of("a", "c"), Set.of("b"), 0);
    String fromB = key("b", V_AB, "c", List.of("a", "c"));
    assertTrue(c.gated(fromB));
    c.released("a", "a,c");
    assertTrue(c.gated(fromB), "b's release is still missing");
    c.released("b", "a,c");
    assertFalse(c.gated(fromB));
    assertTrue(c.settled());
  }

  @Test
  void aNodeWhoseFerryClosedIsNotWaitedForThoughItStaysAMember() {
    Views a = new Views("a");
    a.adopt(AB, AB, 0);
    a.released("b", "a,b");
    a.adopt(ABC, ABC, 1);
    a.released("b", "a,b,c");
    a.adopt(ABC, AB, Set.of("c"), 2); // c leaving
    a.released("b", "a,b");
    assertFalse(a.settled(), "c is leaving: it may still hold a call");
    a.adopt(ABC, AB, Set.of(), 3); // c's ferry closed; its Vert.x stays in the cluster
    assertTrue(a.settled());
  }

  /**
   * Only the releases of the ferry the membership announces at a node count (ADR 0142): a release
   * of another life (its predecessor under the same node id) is not counted, nor is one of a newer
   * ferry while the snapshot read here still shows the older (it counts at the next read, which
   * shows the newer), and one sent or announced without a life (an earlier version) counts.
   */
  @Test
  void onlyTheAnnouncedFerrysReleaseCounts() {
    Views a = new Views("a");
    a.adopt(AB, AB, Set.of(), Map.of("b", "life-2"), 0);
    a.released("b", "life-1", "a,b");
    assertFalse(a.settled(), "a release of b's closed ferry does not count: " + a.awaiting());
    a.adopt(AB, AB, Set.of(), Map.of("b", "life-1"), 1); // a read older than life-2's release below
    a.released("b", "life-2", "a,b");
    assertFalse(a.settled(), "life-2's release waits for a read that shows life-2");
    a.adopt(AB, AB, Set.of(), Map.of("b", "life-2"), 2);
    assertTrue(a.settled(), "the next read shows life-2: its release counts");

    Views old = new Views("a");
    old.adopt(AB, AB, Set.of(), Map.of(), 0);
    old.released("b", "life-1", "a,b");
    assertTrue(old.settled(), "no life announced at b: its release counts");
    Views unsaid = new Views("a");
    unsaid.adopt(AB, AB, Set.of(), Map.of("b", "life-2"), 0);
    unsaid.released("b", "a,b");
    assertTrue(unsaid.settled(), "a release that says no life counts");
  }
}
