package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.testing.VirtualLoop;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

/**
 * An input this node forwarded to its key's owner and then gave up on may have been applied
 * there: its caller gets 502 ("may have been applied"), never 503, which says "never sent" and
 * invites a resend (ADR 0064). Three ways to give up: the forward's own send timeout, the owner
 * leaving the members before it answered, and a leave that ran out of time.
 */
class RouterGivenUpForwardTest {
  private final VirtualLoop loop = new VirtualLoop();
  private final List<Router.Forward> forwards = new ArrayList<>();

  private Router router() {
    PerKeyConfig config = PerKeyConfig.builder().callTimeout(Duration.ofMillis(1_000)).build();
    PerKeyFerry<String, Submission, List<Object>, Object> ferry = new PerKeyFerry<>(loop, config,
        (Submission s) -> s.key, null, null, (key, inputs) -> Promise.<List<Object>>promise().future(), (in, ok) -> in.body);
    Router router = new Router(loop, "a", ferry, 1_000, ClusterNode.maxHoldMs(1_000, 1_000), RouterTesting.recording(forwards));
    router.snapshot(Set.of("a", "b"), Set.of("a", "b"), Set.of());
    return router;
  }

  /** A key node b owns. */
  private static String keyOfB() {
    for (int k = 0; ; k++) {
      if (Rendezvous.owner("k" + k, List.of("a", "b")).equals("b")) {
        return "k" + k;
      }
    }
  }

  private Future<Object> forwardedToB(Router router) throws Exception {
    MultiMap headers = MultiMap.caseInsensitiveMultiMap().add(Submission.KEY, keyOfB());
    Promise<Object> answer = Promise.promise();
    router.accept(Submission.parse(headers, "input"), 0, false, null, null, answer);
    loop.runPending();
    assertEquals(1, forwards.size(), "the input was forwarded to its owner");
    assertEquals("b", forwards.get(0).target);
    return answer.future();
  }

  private static void assertMayHaveBeenApplied(Future<Object> answer) {
    assertTrue(answer.failed(), "not answered");
    Throwable t = answer.cause();
    int code = t instanceof FerryException fe ? fe.code() : t instanceof ReplyException re ? re.failureCode() : -1;
    assertEquals(FerryError.FAILED.code(), code, String.valueOf(t));
  }

  @Test
  void aForwardThatTimedOutAnswers502() throws Exception {
    Router router = router();
    Future<Object> answer = forwardedToB(router);
    router.forwarded(forwards.get(0), Future.failedFuture(new ReplyException(ReplyFailure.TIMEOUT, "send timeout")));
    loop.runPending();
    assertMayHaveBeenApplied(answer);
  }

  @Test
  void aForwardWhoseOwnerLeftTheMembersAnswers502() throws Exception {
    Router router = router();
    Future<Object> answer = forwardedToB(router);
    router.snapshot(Set.of("a"), Set.of("a"), Set.of());
    loop.runPending();
    assertMayHaveBeenApplied(answer);
  }

  @Test
  void aForwardAbandonedAtTheEndOfALeaveAnswers502() throws Exception {
    Router router = router();
    Future<Object> answer = forwardedToB(router);
    router.abandonForwards("this node left the cluster before the key's owner answered");
    loop.runPending();
    assertMayHaveBeenApplied(answer);
  }
}
