package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A hand-off (or an input that came along a path or back) that follows its key's earlier inputs
 * to a node other than the owner keeps its hand-off class (ADR 0101). Found by the membership-storm
 * simulation (seed 875): node a sent a handed-off input x1 along the path to b without the class,
 * the view changed so that b owned the key, and a sent the same sender's next handed-off input x2
 * to b with it; b held both for the key's release and put x2 first (hand-offs go first): x2
 * reached the downstream before x1.
 */
class RouterHandOffAlongPathTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Router.Forward> forwards = new ArrayList<>();
  private final Router router;

  RouterHandOffAlongPathTest() {
    PerKeyConfig config = PerKeyConfig.builder().callTimeout(Duration.ofMillis(1_000)).build();
    PerKeyFerry<String, Submission, List<Object>, Object> ferry = new PerKeyFerry<>(loop, config,
        (Submission s) -> s.key, null, null, (key, inputs) -> Promise.<List<Object>>promise().future(), (in, ok) -> in.body);
    router = new Router(loop, "a", ferry, 1_000, ClusterNode.maxHoldMs(1_000, 1_000), RouterTesting.recording(forwards));
  }

  /** A key that b owns among a and b, and c owns among a, b, c and d. */
  private static String key() {
    for (int k = 0; ; k++) {
      if (Rendezvous.owner("k" + k, List.of("a", "b")).equals("b")
          && Rendezvous.owner("k" + k, List.of("a", "b", "c", "d")).equals("c")) {
        return "k" + k;
      }
    }
  }

  private void accept(String key, String body, boolean handedOff, String visited) throws Exception {
    MultiMap headers = MultiMap.caseInsensitiveMultiMap().add(Submission.KEY, key);
    router.accept(Submission.parse(headers, body), visited == null ? 0 : 1, handedOff, visited, "s#" + body.substring(1),
        Promise.promise());
    loop.runPending();
  }

  @Test
  void aHandOffFollowingThePathToAnotherNodeKeepsItsClass() throws Exception {
    String key = key();
    router.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    accept(key, "x0", false, null); // to b, its owner: the key's path is b while it is open
    assertEquals("b", forwards.get(0).target);

    router.snapshot(Set.of("a", "b", "c", "d"), Set.of("a", "b", "c", "d"), Set.of()); // c owns it now
    accept(key, "x1", true, "d"); // handed off to a by d
    accept(key, "x2", false, null); // a caller's, entering here
    assertEquals(3, forwards.size());
    Router.Forward handOff = forwards.get(1);
    Router.Forward plain = forwards.get(2);
    assertEquals("b", handOff.target, "it follows the key's earlier input");
    assertTrue(handOff.handOff, "a hand-off sent along the path is still a hand-off at b");
    assertEquals("b", plain.target);
    assertFalse(plain.handOff, "a new input behind them is not");
  }
}
