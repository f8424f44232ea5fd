package dev.ferry.cluster;

import java.util.ArrayList;
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
  /** Views seen since the last settled one, that one first: anyone owning a key in them may hold it. */
  private final List<List<String>> unsettled = new ArrayList<>();
  /** Nodes whose release of the current view has not arrived; keys gained since settling wait for it. */
  private Set<String> awaiting = Set.of();
  /** Releases received, per view id (kept for views not seen yet; bounded). */
  private final Map<String, Set<String>> releases = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Set<String>> eldest) {
      return size() > 64;
    }
  };

  Views(String self) {
    this.self = self;
  }

  /**
   * Takes a membership snapshot (at {@code now}, System.nanoTime()); returns true when the view
   * changed. The view is the announced nodes that are live members, sorted.
   */
  boolean adopt(Set<String> liveMembers, Set<String> announced, long now) {
    members = Set.copyOf(liveMembers);
    TreeSet<String> live = new TreeSet<>(announced);
    live.retainAll(members);
    List<String> next = List.copyOf(live);
    boolean changed = !known || !next.equals(view);
    if (changed) {
      if (!known) {
        // Before this node joined, the others owned every key: wait for all of them.
        List<String> before = new ArrayList<>(next);
        before.remove(self);
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

  /** Records {@code from}'s release of view {@code forView}; true when it is the current view. */
  boolean released(String from, String forView) {
    releases.computeIfAbsent(forView, v -> new HashSet<>()).add(from);
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
    relevant.remove(self);
    relevant.removeAll(releases.getOrDefault(id, Set.of()));
    awaiting = relevant;
    if (awaiting.isEmpty() && unsettled.size() > 1) {
      unsettled.clear();
      unsettled.add(view);
    }
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

  /** The nodes that may wait for this node's release: live nodes of the current and unsettled views. */
  Set<String> releaseTargets() {
    Set<String> to = new TreeSet<>(view);
    unsettled.forEach(to::addAll);
    to.retainAll(members);
    to.remove(self);
    return to;
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
