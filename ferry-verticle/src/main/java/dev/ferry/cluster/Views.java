package dev.ferry.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One node's ownership view and what it still waits for after a change (ADR 0051): the views seen
 * since the last settled one, and the nodes whose release of the current view has not arrived.
 * Plain state, no Vert.x and no clock of its own, so that it can be tested step by step; used on
 * the verticle's context only.
 */
final class Views {
  private final String self;
  private boolean known;
  private List<String> view = List.of();
  private List<String> previous = List.of();
  private String id = "";
  private long since;
  private Set<String> members = Set.of();
  /** Ferry nodes that have not closed: announced or leaving. Only they can still hold a call. */
  private Set<String> ferries = Set.of();
  /** Views seen since the last settled one, that one first: anyone owning a key in them may hold it. */
  private final List<List<String>> unsettled = new ArrayList<>();
  /** Nodes whose release of the current view has not arrived; keys gained since settling wait for it. */
  private Set<String> awaiting = Set.of();
  /**
   * Releases received, per view id (kept for views not seen yet; bounded): per node, the life of
   * the ferry that sent it ("" when not said).
   */
  private final Map<String, Map<String, String>> releases = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Map<String, String>> eldest) {
      return size() > 64;
    }
  };
  /**
   * Per node, the life of its open ferry as the last membership snapshot announced it (ADR 0142):
   * only that ferry's releases count. Nodes that announce no life (an earlier version) are absent.
   */
  private Map<String, String> announcedLives = Map.of();

  /**
   * Per node, the ferry its last release came from (its life, {@link Router#life}): a ferry
   * deployed again on the same Vert.x node has the same id, and what the closed one released says
   * nothing of the new one's calls (ADR 0131). Bounded by the members: a node gone from them needs
   * no entry (its ferry closed with its Vert.x, or it comes back into the view, which sends it this
   * node's release anew). Not by a count: a node that releases to this one seldom (nothing changes
   * in its view) would lose its entry to the short-lived nodes of a long churn, and the next ferry
   * deployed under its id would look like one heard for the first time (review P).
   */
  private final Map<String, String> lives = new HashMap<>();

  Views(String self) {
    this.self = self;
  }

  /** {@link #adopt(Set, Set, Set, long)} with no node leaving. */
  boolean adopt(Set<String> liveMembers, Set<String> announced, long now) {
    return adopt(liveMembers, announced, Set.of(), now);
  }

  /** {@link #adopt(Set, Set, Set, Map, long)} with no lives announced. */
  boolean adopt(Set<String> liveMembers, Set<String> announced, Set<String> leaving, long now) {
    return adopt(liveMembers, announced, leaving, Map.of(), now);
  }

  /**
   * Takes a membership snapshot (at {@code now}, System.nanoTime()); returns true when the view
   * changed. The view is the announced nodes that are live members, sorted; {@code leaving} are
   * nodes that withdrew but have not closed (they may still hold calls for keys they owned).
   * {@code lives}: per node, the life its open ferry announced (ADR 0142).
   */
  boolean adopt(Set<String> liveMembers, Set<String> announced, Set<String> leaving, Map<String, String> lives,
      long now) {
    members = Set.copyOf(liveMembers);
    this.lives.keySet().retainAll(members);
    announcedLives = Map.copyOf(lives);
    Set<String> open = new HashSet<>(announced);
    open.addAll(leaving);
    ferries = Set.copyOf(open);
    TreeSet<String> live = new TreeSet<>(announced);
    live.retainAll(members);
    List<String> next = List.copyOf(live);
    boolean changed = !known || !next.equals(view);
    if (changed) {
      if (!known) {
        // Before this node joined, the others owned every key: wait for all of them, the ones
        // leaving too (a leaving node may still have a call for a key this node now owns).
        TreeSet<String> others = new TreeSet<>(next);
        for (String n : leaving) {
          if (members.contains(n)) {
            others.add(n);
          }
        }
        others.remove(self);
        List<String> before = new ArrayList<>(others);
        unsettled.add(List.copyOf(before));
      }
      known = true;
      previous = view;
      view = next;
      since = now;
      id = String.join(",", next);
      unsettled.add(next);
    }
    recompute();
    return changed;
  }

  /**
   * The ferry {@code life} at node {@code from} sent a release; true when releases of another ferry
   * at {@code from} came before (one deployed again under its id, after the first closed). The
   * first release of a new ferry voids every release of the one before it: a new owner that counted
   * them would call keys the new ferry still has calls in flight for once it leaves in turn and the
   * view comes back to one its predecessor released (ADR 0131). Releases of one node arrive in the
   * order sent, the closed ferry's first.
   */
  boolean newLife(String from, String life) {
    String before = lives.put(from, life);
    if (before == null || before.equals(life)) {
      return false;
    }
    for (Map<String, String> released : releases.values()) {
      released.remove(from);
    }
    return true;
  }

  /** {@link #released(String, String, String)}, the life not said. */
  boolean released(String from, String forView) {
    return released(from, null, forView);
  }

  /**
   * Records the release of view {@code forView} by the ferry {@code life} (null: not said) at node
   * {@code from}; true when it is the current view.
   */
  boolean released(String from, String life, String forView) {
    releases.computeIfAbsent(forView, v -> new HashMap<>()).put(from, life == null ? "" : life);
    if (known && forView.equals(id)) {
      recompute();
      return true;
    }
    return false;
  }

  private void recompute() {
    Set<String> relevant = new HashSet<>();
    for (List<String> v : unsettled) {
      relevant.addAll(v);
    }
    relevant.retainAll(members); // a crashed node is not waited for
    relevant.retainAll(ferries); // nor one whose ferry closed (it holds nothing)
    relevant.remove(self);
    Map<String, String> released = releases.getOrDefault(id, Map.of());
    relevant.removeIf(n -> counts(n, released.get(n)));
    awaiting = relevant;
    if (awaiting.isEmpty() && unsettled.size() > 1) {
      unsettled.clear();
      unsettled.add(view);
    }
  }

  /**
   * Whether node {@code n}'s release, sent by the ferry {@code life} ("" when not said; null: no
   * release), counts. A release of another ferry than the one the membership announces at {@code
   * n} says nothing of that one's calls: its predecessor's, heard before the new ferry's first
   * release arrived (ADR 0142), or the new ferry's while the membership read here is older than it
   * (it counts at the next read, within a second). Either side unsaid: it counts (a node of an
   * earlier version).
   */
  private boolean counts(String n, String life) {
    if (life == null) {
      return false;
    }
    String announced = announcedLives.get(n);
    return announced == null || life.isEmpty() || announced.equals(life);
  }

  /** The key's owner by the current view, or null when no node serves. */
  String owner(String key) {
    return Rendezvous.owner(key, view);
  }

  /** True when another node may still hold a call for {@code key}, which this node owns now. */
  boolean gated(String key) {
    if (awaiting.isEmpty()) {
      return false;
    }
    for (List<String> v : unsettled) {
      if (!self.equals(Rendezvous.owner(key, v))) {
        return true;
      }
    }
    return false;
  }

  /** This node owned {@code key} in the view before the current one, adopted less than {@code windowNanos} ago. */
  boolean ownedJustBefore(String key, long now, long windowNanos) {
    return now - since < windowNanos && self.equals(Rendezvous.owner(key, previous));
  }

  /**
   * The nodes that may wait for this node's release: live nodes of the current and unsettled
   * views, and leaving nodes (a leaving node waits for every other node to route by a view without
   * it, whichever views came since: ADR 0099).
   */
  Set<String> releaseTargets() {
    Set<String> to = new TreeSet<>(view);
    unsettled.forEach(to::addAll);
    to.addAll(ferries);
    to.retainAll(members);
    to.remove(self);
    return to;
  }

  /** The nodes whose release of the current view has not arrived. */
  Set<String> awaiting() {
    return awaiting;
  }

  boolean known() {
    return known;
  }

  boolean settled() {
    return known && awaiting.isEmpty();
  }

  List<String> view() {
    return view;
  }

  String id() {
    return id;
  }

  Set<String> members() {
    return members;
  }
}
