package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A paced retry keeps its sender's order (ADR 0106): x1 and x2, the first two inputs of sender c,
 * pass through this node to their key's owner b, which refuses x2 and then x1 (NO_HANDLERS, b has
 * stopped consuming) while another input of the key is still open there. Each is held with a
 * pause; x1's began later, so x2's ends first. x2 must not go to b before x1 (the simulation's
 * seed 1026 of membershipStorms, scripted).
 */
class RouterRetryOrderTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Router.Forward> forwards = new ArrayList<>();

  @Test
  void aRetryDoesNotPassItsSendersEarlierInputWhosePauseRestarted() throws Exception {
    PerKeyFerry<String, Submission, List<Object>, Object> ferry = RouterTesting.recordingFerry(loop, 1_000,
        new ArrayList<>());
    Router router = new Router(loop, "a", ferry, 1_000, ClusterNode.maxHoldMs(1_000, 1_000),
        RouterTesting.recording(forwards));
    router.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    loop.runPending();
    String key = keyOfB();
    RouterTesting.submit(router, key, "other", 0); // another sender's input, still open at b throughout
    fromC(router, key, "x1", 1);
    fromC(router, key, "x2", 2);
    loop.runPending();
    assertEquals(List.of("other", "x1", "x2"), bodies(), "all follow the key's path to its owner b");
    Router.Forward x1 = forwards.get(1);
    Router.Forward x2 = forwards.get(2);
    forwards.clear();

    router.forwarded(x2, Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, "b stopped consuming")));
    loop.advanceMillis(Router.RETRY_MS / 2);
    router.forwarded(x1, Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, "b stopped consuming")));
    loop.runPending();
    assertEquals(2, router.heldCount(), "both held, each with a pause");

    loop.advanceMillis(Router.RETRY_MS / 2); // x2's pause ends, x1's runs on
    loop.runPending();
    assertEquals(List.of(), bodies(), "x2 waits behind x1, held before it (same sender, same key)");

    loop.advanceMillis(4 * Router.RETRY_MS);
    loop.runPending();
    assertEquals(List.of("x1", "x2"), bodies(), "x1 goes first once its pause ends, then x2");
  }

  /** Input {@code body} of key {@code key} forwarded here by node c, the {@code n}th of its sender c. */
  private static void fromC(Router router, String key, String body, int n) throws Exception {
    MultiMap h = MultiMap.caseInsensitiveMultiMap().add(Submission.KEY, key);
    router.accept(Submission.parse(h, body), 1, false, "c", "c#" + n, Promise.promise());
  }

  private List<Object> bodies() {
    return forwards.stream().map(f -> (Object) f.pending.input.body).toList();
  }

  /** A key node b owns. */
  private static String keyOfB() {
    for (int k = 0; ; k++) {
      if (Rendezvous.owner("k" + k, List.of("a", "b")).equals("b")) {
        return "k" + k;
      }
    }
  }
}
