package dev.ferry.cluster;

import java.util.List;

/**
 * Rendezvous (highest random weight) hashing: the owner of a key is the node with the highest
 * weight for (node, key). Every node computes the same owner from the same view, with no shared
 * table to agree on, and a view change moves only the keys of the node that joined or left
 * (docs/adr/0050-rendezvous-ownership.md).
 *
 * <p>The hash is spelled out here (FNV-1a then a 64-bit finalizer) rather than taken from {@code
 * String.hashCode}, so that owners stay the same across JVM versions in a mixed cluster.
 */
public final class Rendezvous {
  private Rendezvous() {}

  /** The owner of {@code key} among {@code nodes}, or null when there are none. */
  public static String owner(String key, List<String> nodes) {
    String best = null;
    long bestWeight = 0;
    for (String node : nodes) {
      long w = weight(node, key);
      int c = best == null ? 1 : Long.compareUnsigned(w, bestWeight);
      // Ties (astronomically rare) go to the greater node id, so that the choice never depends on
      // the order in which a node happens to list the view.
      if (c > 0 || (c == 0 && node.compareTo(best) > 0)) {
        best = node;
        bestWeight = w;
      }
    }
    return best;
  }

  static long weight(String node, String key) {
    long h = 0xcbf29ce484222325L;
    h = fnv(h, node);
    h = (h ^ 0xff) * 0x100000001b3L; // a separator no char of node or key can fake
    h = fnv(h, key);
    // FNV alone mixes the last characters poorly; the finalizer spreads every bit.
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }

  private static long fnv(long h, String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      h = (h ^ (c & 0xff)) * 0x100000001b3L;
      h = (h ^ (c >>> 8)) * 0x100000001b3L;
    }
    return h;
  }
}
