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
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * {@link Membership} over Hazelcast: live members from the cluster's member list (Vert.x node id
 * from the member attribute {@code __vertx.nodeId}), announced Ferry nodes from a Hazelcast map
 * named after the submit address. Every Hazelcast call blocks, so each runs in {@code
 * executeBlocking} (ordered: snapshots are read, and delivered, one after the other); Hazelcast's
 * listener threads only hop to the context and ask for a fresh snapshot.
 *
 * <p>Hazelcast's own MembershipListener is used, not {@code ClusterManager.nodeListener}, which
 * holds a single listener that Vert.x HA already takes.
 *
 * <p>Reaches the cluster manager through {@link ClusterAccess}, the module's one adapter to Vert.x
 * internal API. Loaded only once OptionalJars found vertx-hazelcast
 * (docs/adr/0091-optional-integrations-fail-by-name.md).
 */
final class HazelcastMembership implements Membership {
  private static final String NODE_ID = "__vertx.nodeId";

  private final Vertx vertx;
  private final Context context;
  private final HazelcastInstance hz;
  private final String self;
  private final String mapName;
  /** Set in start(), off the loop (creating a map proxy may wait for the cluster); volatile: workers and the loop read it. */
  private volatile IMap<String, Boolean> announced;
  private Consumer<Snapshot> listener;
  private volatile UUID membersListenerId;
  private volatile UUID mapListenerId;
  private boolean closed;
  /** False for a routing client: it watches the view and never joins it. */
  private final boolean announce;

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
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public Future<Void> start(Consumer<Snapshot> listener) {
    this.listener = listener;
    return vertx.<Void>executeBlocking(() -> {
      announced = hz.getMap(mapName);
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
        announced.put(self, Boolean.TRUE);
      }
      return null;
    }).compose(v -> refresh());
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
        vertx.executeBlocking(() -> announced.remove(removedNode));
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
      return new Snapshot(Set.copyOf(members), Set.copyOf(on), Set.copyOf(leaving));
    }).onComplete(ar -> {
      if (ar.succeeded() && !closed) {
        listener.accept(ar.result());
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
    return vertx.<Void>executeBlocking(() -> {
      // Still listed, as leaving: a node joining now must wait for this one's release too.
      announced.put(self, Boolean.FALSE);
      return null;
    }).compose(v -> refresh());
  }

  @Override
  public Future<Void> close() {
    closed = true;
    return vertx.executeBlocking(() -> {
      // Withdraw too (a no-op after a graceful leave): a node whose start failed must not stay
      // announced, or the others would keep routing its share of keys to a node address with no
      // handler.
      if (announced != null && announce) {
        announced.remove(self);
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
