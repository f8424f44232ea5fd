package dev.ferry.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.EntryEvent;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryRemovedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * {@link Membership} over Hazelcast: live members from the cluster's member list (Vert.x node id
 * from the member attribute {@code __vertx.nodeId}), announced Ferry nodes from a Hazelcast map
 * named after the submit address, and each announced ferry's life ({@link Router#life}) from a
 * second map beside it (ADR 0142; a second map, so that a node of an earlier version reads the
 * first as before). Every Hazelcast call blocks, so each runs in {@code
 * executeBlocking} (ordered: snapshots are read, and delivered, one after the other); Hazelcast's
 * listener threads only hop to the context and ask for a fresh snapshot.
 *
 * <p>Hazelcast's own MembershipListener is used, not {@code ClusterManager.nodeListener}, which
 * holds a single listener that Vert.x HA already takes.
 *
 * <p>Events only say when to look; the snapshot is read again every {@link #REREAD_MS} too, so a
 * lost event (Hazelcast's map events are not highly available: one can go missing while a joining
 * member takes its partitions) or a failed read delays a view by a second instead of leaving it
 * stale until the next change (ADR 0113).
 *
 * <p>Reaches the cluster manager through {@link ClusterAccess}, the module's one adapter to Vert.x
 * internal API. Loaded only once OptionalJars found vertx-hazelcast
 * (docs/adr/0091-optional-integrations-fail-by-name.md).
 */
final class HazelcastMembership implements Membership {
  private static final String NODE_ID = "__vertx.nodeId";
  private static final System.Logger LOG = System.getLogger(HazelcastMembership.class.getName());
  /** How often the snapshot is read again whatever the events say (ADR 0113). */
  static final long REREAD_MS = 1000;

  private final Vertx vertx;
  private final Context context;
  private final HazelcastInstance hz;
  private final String self;
  private final String mapName;
  private final String livesName;
  /** Set in start(), off the loop (creating a map proxy may wait for the cluster); volatile: workers and the loop read it. */
  private volatile IMap<String, Boolean> announced;
  /** Per Ferry node, its ferry's life; set in start() like {@link #announced}. */
  private volatile IMap<String, String> lives;
  /** This node's ferry's life, announced with it (null: a watcher). */
  private volatile String life;
  private Consumer<Snapshot> listener;
  private volatile UUID membersListenerId;
  private volatile UUID mapListenerId;
  private boolean closed;
  /** False for a routing client: it watches the view and never joins it. */
  private final boolean announce;
  /**
   * Announced and neither withdrawn nor closed: an announcement found missing then is put back
   * (see {@link #refresh}); volatile: set on the loop, read by the workers that read the snapshot.
   */
  private volatile boolean announcedSelf;
  /** The periodic re-read (on the context), -1 before start and after close. */
  private long rereads = -1;
  /** A re-read is being read: the next tick skips (a slow Hazelcast must not pile them up). */
  private boolean rereading;
  /** The last read failed: said once, not every second. */
  private boolean readFailing;

  HazelcastMembership(Vertx vertx, Context context, String address) {
    this(vertx, context, address, true);
  }

  HazelcastMembership(Vertx vertx, Context context, String address, boolean announce) {
    this.announce = announce;
    ClusterManager cm = ClusterAccess.clusterManager(vertx);
    if (!(cm instanceof HazelcastClusterManager hcm)) {
      throw new IllegalStateException("clustered FerryVerticle needs the Hazelcast cluster manager, got "
          + (cm == null ? "none" : cm.getClass().getName()));
    }
    this.vertx = vertx;
    this.context = context;
    this.hz = hcm.getHazelcastInstance();
    this.self = hcm.getNodeId();
    this.mapName = "__ferry.nodes." + address;
    this.livesName = "__ferry.lives." + address;
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public Future<Void> start(String life, Consumer<Snapshot> listener) {
    this.listener = listener;
    this.life = life;
    return vertx.<Void>executeBlocking(() -> {
      announced = hz.getMap(mapName);
      lives = hz.getMap(livesName);
      // Listen before announcing and reading, so that no change falls between the two.
      membersListenerId = hz.getCluster().addMembershipListener(new MembershipListener() {
        @Override
        public void memberAdded(MembershipEvent event) {
          changed(null);
        }

        @Override
        public void memberRemoved(MembershipEvent event) {
          changed(event.getMember().getAttribute(NODE_ID));
        }
      });
      mapListenerId = announced.addEntryListener(new Changes(), false);
      if (announce) {
        // The life first: whoever reads this node announced reads its life too.
        putLife();
        announced.put(self, Boolean.TRUE);
        announcedSelf = true;
      }
      return null;
    }).compose(v -> refresh()).onSuccess(v -> context.runOnContext(x -> {
      if (!closed) {
        rereads = vertx.setPeriodic(REREAD_MS, id -> reread());
      }
    }));
  }

  /** On the context: the snapshot again, unless the last re-read has not come back yet. */
  private void reread() {
    if (closed || rereading) {
      return;
    }
    rereading = true;
    refresh().onComplete(ar -> rereading = false);
  }

  /** Off the loop: this node's ferry's life, in place before its announcement. */
  private void putLife() {
    if (life != null) {
      lives.put(self, life);
    }
  }

  /**
   * For a test: stops listening to the announcement map, as if Hazelcast dropped every later event
   * of it; blocks (call it off the loop).
   */
  void dropMapEvents() {
    announced.removeEntryListener(mapListenerId);
  }

  /** Entry listener for the announcement map; a named class since it implements two interfaces. */
  private final class Changes implements EntryAddedListener<String, Boolean>, EntryRemovedListener<String, Boolean>,
      EntryUpdatedListener<String, Boolean> {
    @Override
    public void entryAdded(EntryEvent<String, Boolean> event) {
      changed(null);
    }

    @Override
    public void entryUpdated(EntryEvent<String, Boolean> event) {
      changed(null); // announced -> leaving
    }

    @Override
    public void entryRemoved(EntryEvent<String, Boolean> event) {
      changed(null);
    }
  }

  /** On a Hazelcast thread: hop to the context; a crashed node's announcement is cleared there. */
  private void changed(String removedNode) {
    context.runOnContext(v -> {
      if (closed) {
        return;
      }
      if (removedNode != null) {
        // A crashed node cannot withdraw its own entry; any survivor may (removing twice is harmless).
        // Its life first: were the entry put back in between (a member taken for crashed, still
        // running: see refresh), its next read finds the announcement gone and puts both back.
        vertx.executeBlocking(() -> {
          lives.remove(removedNode);
          return announced.remove(removedNode);
        });
      }
      refresh();
    });
  }

  /** Reads a snapshot off the loop and delivers it on the context. */
  private Future<Void> refresh() {
    Promise<Void> delivered = Promise.promise();
    vertx.executeBlocking(() -> {
      Set<String> members = new HashSet<>();
      for (Member m : hz.getCluster().getMembers()) {
        String id = m.getAttribute(NODE_ID);
        if (id != null) {
          members.add(id);
        }
      }
      // TRUE: announced; FALSE: withdrawn, leaving (ADR 0095).
      Set<String> on = new HashSet<>();
      Set<String> leaving = new HashSet<>();
      for (Map.Entry<String, Boolean> e : announced.entrySet()) {
        (Boolean.TRUE.equals(e.getValue()) ? on : leaving).add(e.getKey());
      }
      if (announcedSelf && members.contains(self) && !on.contains(self) && !leaving.contains(self)) {
        // Announced, never withdrawn, and no entry: a survivor removed it when Hazelcast took this
        // member for crashed (a partition that healed, a pause past the heartbeat timeout; the
        // Vert.x node id stays). Put back, this node joins the view again as any joining node
        // does; left out, it stayed out of every view, handing every input on, until its ferry was
        // deployed again (ADR 0134). putIfAbsent: a withdrawal racing this read wins.
        putLife();
        if (announced.putIfAbsent(self, Boolean.TRUE) == null) {
          LOG.log(System.Logger.Level.WARNING, "ferry: this node's announcement was gone (taken for crashed?); announced again");
        }
        (Boolean.TRUE.equals(announced.get(self)) ? on : leaving).add(self);
      }
      // Read after the announcements: a ferry's life is put before it announces (putLife), so every
      // ferry read above has its life here, or a later one's. A routing client never uses them.
      Map<String, String> ferryLives = new HashMap<>();
      for (Map.Entry<String, String> e : announce ? lives.entrySet() : Set.<Map.Entry<String, String>>of()) {
        if (on.contains(e.getKey()) || leaving.contains(e.getKey())) {
          ferryLives.put(e.getKey(), e.getValue());
        }
      }
      if (announcedSelf && life != null && !life.equals(ferryLives.get(self)) && on.contains(self)) {
        // Announced and running, but its life gone: a survivor that took this member for crashed
        // removed it, late, after this node had announced itself again (above). Put back, read
        // without it once (its releases then count as an earlier version's do). No read of its
        // own: every read reads the lives anyway.
        putLife();
        ferryLives.put(self, life);
      }
      return new Snapshot(Set.copyOf(members), Set.copyOf(on), Set.copyOf(leaving), Map.copyOf(ferryLives));
    }).onComplete(ar -> {
      if (ar.succeeded() && !closed) {
        readFailing = false;
        listener.accept(ar.result());
      } else if (ar.failed() && !closed && !readFailing) {
        readFailing = true; // read again at the next tick
        // Not a warning while this member shuts down (Vert.x closing): nothing to act on.
        System.Logger.Level level = ar.cause() instanceof com.hazelcast.core.HazelcastInstanceNotActiveException
            ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING;
        LOG.log(level, "ferry: could not read the membership of the cluster (read again every {0} ms): {1}",
            REREAD_MS, ar.cause().toString());
      }
      delivered.handle(ar.mapEmpty());
    });
    return delivered.future();
  }

  @Override
  public Future<Void> withdraw() {
    if (announced == null || !announce) {
      return Future.succeededFuture(); // never started
    }
    announcedSelf = false;
    return vertx.<Void>executeBlocking(() -> {
      // Still listed, as leaving: a node joining now must wait for this one's release too.
      announced.put(self, Boolean.FALSE);
      return null;
    }).compose(v -> refresh());
  }

  @Override
  public Future<Void> close() {
    closed = true;
    announcedSelf = false;
    if (rereads >= 0) {
      vertx.cancelTimer(rereads);
      rereads = -1;
    }
    return vertx.executeBlocking(() -> {
      // Withdraw too (a no-op after a graceful leave): a node whose start failed must not stay
      // announced, or the others would keep routing its share of keys to a node address with no
      // handler.
      if (announced != null && announce) {
        announced.remove(self);
        if (lives != null && life != null) {
          lives.remove(self, life); // not a later ferry's (one deployed again before this close ended)
        }
      }
      if (membersListenerId != null) {
        hz.getCluster().removeMembershipListener(membersListenerId);
      }
      if (mapListenerId != null && announced != null) {
        announced.removeEntryListener(mapListenerId);
      }
      return null;
    });
  }
}
