package dev.ferry.cluster;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The nodes that refused a send (NO_HANDLERS), each with when its last refusal came (loop time).
 * A node's consumer can be missing for one send and there for the next (a ferry deployed again
 * under its id, a join whose registration reached this event bus late), and a view change may never
 * come to say so: a refused node counts as refused until its handler answers a send made after its
 * last refusal (ADR 0148 for the routing client, ADR 0159 for a node's forwards), or a new view
 * clears the mark. A reply to a send made before the refusal, or at that instant, tells nothing.
 *
 * <p>Plain state of its owner ({@link Router} or {@link ClientRouter}), touched on the owner's loop
 * only.
 */
final class Refusals {
  private final Map<String, Long> refusedAt = new HashMap<>();

  /** {@code node} refused a send, the answer coming at {@code now}. */
  void refused(String node, long now) {
    refusedAt.put(node, now);
  }

  /** {@code node}'s handler answered a send made at {@code sentAt}: after its last refusal, the mark ends. */
  void answered(String node, long sentAt) {
    Long at = refusedAt.get(node);
    if (at != null && sentAt > at) {
      refusedAt.remove(node);
    }
  }

  boolean contains(String node) {
    return refusedAt.containsKey(node);
  }

  boolean isEmpty() {
    return refusedAt.isEmpty();
  }

  void clear() {
    refusedAt.clear();
  }

  /** The nodes refused now, for descriptions. */
  Set<String> nodes() {
    return refusedAt.keySet();
  }
}
