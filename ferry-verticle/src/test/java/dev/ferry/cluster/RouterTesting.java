package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.internal.Loop;
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
import java.util.Map;
import java.util.Queue;

/** Links, a ferry and inputs for tests that drive one {@link Router} by hand, in virtual time. */
final class RouterTesting {
  private RouterTesting() {}

  /** A ferry on {@code loop} whose downstream records each call's inputs in {@code calls} and succeeds. */
  static PerKeyFerry<String, Submission, List<Object>, Object> recordingFerry(Loop loop, long callTimeoutMs,
      List<List<Object>> calls) {
    return new PerKeyFerry<>(loop, PerKeyConfig.builder().callTimeout(Duration.ofMillis(callTimeoutMs)).build(),
        (Submission s) -> s.key, null, null, (key, inputs) -> {
          calls.add(inputs.stream().map(s -> s.body).toList());
          return Future.succeededFuture(List.of());
        }, (in, ok) -> in.body);
  }

  /** Links that keep every forward in {@code forwards} (the test answers them) and drop releases. */
  static Router.Links recording(List<Router.Forward> forwards) {
    return new Router.Links() {
      @Override
      public void forward(Router.Forward f) {
        forwards.add(f);
      }

      @Override
      public void release(String node, String viewId) {
      }
    };
  }

  /**
   * A router at {@code self} whose ferry records its calls and succeeds, whose forwards are kept in
   * {@code out} for the test to answer (releases dropped), and whose inputs are held at most as at
   * a node with {@code callTimeoutMs} and a drain of 1 s.
   */
  static Router routerKeepingForwards(Loop loop, String self, long callTimeoutMs, List<Router.Forward> out) {
    return new Router(loop, self, recordingFerry(loop, callTimeoutMs, new ArrayList<>()), callTimeoutMs,
        ClusterNode.maxHoldMs(callTimeoutMs, 1_000), recording(out));
  }

  /** Links for a router that owns every key it is sent: a forward fails the test. */
  static Router.Links noForward() {
    return new Router.Links() {
      @Override
      public void forward(Router.Forward f) {
        throw new AssertionError("nothing is forwarded here: this node owns the key");
      }

      @Override
      public void release(String node, String viewId) {
      }
    };
  }

  /** A caller's input entering at {@code router}, with {@code timeoutMs} (0 for none); its answer. */
  static Future<Object> submit(Router router, String key, String body, long timeoutMs) throws Submission.BadInput {
    return submit(router, key, body, timeoutMs, null);
  }

  /** As {@link #submit(Router, String, String, long)}, stamped with {@code origin} (null: none). */
  static Future<Object> submit(Router router, String key, String body, long timeoutMs, String origin)
      throws Submission.BadInput {
    MultiMap h = MultiMap.caseInsensitiveMultiMap().add(Submission.KEY, key);
    if (timeoutMs > 0) {
      h.add(Submission.TIMEOUT_MS, Long.toString(timeoutMs));
    }
    Promise<Object> answer = Promise.promise();
    router.accept(Submission.parse(h, body), 0, false, null, origin, answer);
    return answer.future();
  }

  /**
   * A ferry like {@link #recordingFerry}, but each call stays open until the test completes it:
   * its promise is added to {@code open}, in call order.
   */
  static PerKeyFerry<String, Submission, List<Object>, Object> ferryWithOpenCalls(Loop loop, long callTimeoutMs,
      List<List<Object>> calls, List<Promise<List<Object>>> open) {
    return new PerKeyFerry<>(loop, PerKeyConfig.builder().callTimeout(Duration.ofMillis(callTimeoutMs)).build(),
        (Submission in) -> in.key, null, null, (key, inputs) -> {
          calls.add(inputs.stream().map(in -> in.body).toList());
          Promise<List<Object>> call = Promise.promise();
          open.add(call);
          return call.future();
        }, (in, ok) -> in.body);
  }

  /** An input of {@code key} with {@code body} and no deadline. */
  static Submission input(String key, String body) throws Submission.BadInput {
    return Submission.parse(MultiMap.caseInsensitiveMultiMap().add(Submission.KEY, key), body);
  }

  /** Input {@code body} forwarded to {@code r} by node {@code from}, which lets it be held {@code holdMs}; its answer. */
  static Future<Object> forwarded(Router r, String from, String key, String body, String origin, long holdMs)
      throws Exception {
    Promise<Object> answer = Promise.promise();
    r.accept(input(key, body), 1, false, from, origin, holdMs, answer);
    return answer.future();
  }

  /** A forward's outcome when its target handed it back (ADR 0109). */
  static Future<Object> returned() {
    return Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, Router.RETURNED, "handed back"));
  }

  /** {@code answer} is a hand-back: not delivered, never applied. */
  static void assertReturned(Future<Object> answer) {
    assertTrue(answer.failed(), () -> answer.isComplete() ? "applied, not handed back" : "not answered");
    ReplyException re = (ReplyException) answer.cause();
    assertEquals(ReplyFailure.NO_HANDLERS, re.failureType(), "handed back, never applied: " + re);
    assertEquals(Router.RETURNED, re.failureCode());
  }

  /** {@code answer} is a 503, never applied. */
  static boolean closed(Future<Object> answer) {
    return answer.failed() && answer.cause() instanceof FerryException fe && fe.kind() == FerryError.CLOSED;
  }

  /** {@code answer} is the 503 of an input given up behind a later one of its client (ADR 0115). */
  static boolean overtaken(Future<Object> answer) {
    return closed(answer) && answer.cause().getMessage().startsWith(Router.OVERTAKEN);
  }

  /**
   * Delivers {@code f} from {@code from} to {@code to} now; the answer goes back at once, as the
   * event bus carries it (a FerryException becomes a recipient failure with its code, as {@code
   * ClusterNode} replies), so {@code from} reads it as it would in a cluster. Its deadline counts
   * from arrival, as the forward's timeout-ms does.
   */
  static void deliver(Router from, Router to, Router.Forward f) {
    Promise<Object> answer = Promise.promise();
    answer.future().onComplete(ar -> from.forwarded(f,
        ar.succeeded() ? ar : Future.failedFuture(RouterSimulationTest.Sim.onTheWire(ar.cause()))));
    to.accept(RouterSimulationTest.Sim.resubmit(f.pending.input, f.remainingMs), f.hop, f.handOff, f.visited, f.origin,
        f.holdMs, answer);
  }

  /** Delivers each of {@code forwards} in order, as {@link #deliver} (a copy: delivering may add to the list). */
  static void deliverAll(Router from, Router to, List<Router.Forward> forwards) {
    for (Router.Forward f : List.copyOf(forwards)) {
      deliver(from, to, f);
    }
  }

  /**
   * Runs {@code loop}, then each message on {@code wire} in the order sent, running {@code loop}
   * after each, until neither has anything left (messages sent meanwhile go too).
   */
  static void drain(VirtualLoop loop, Queue<Runnable> wire) {
    loop.runPending();
    while (!wire.isEmpty()) {
      wire.poll().run();
      loop.runPending();
    }
  }

  /** When both {@code earlier} and {@code later} were applied, {@code earlier} was first (a client's order per key). */
  static void assertAppliedInOrder(List<Object> applied, Object earlier, Object later, String detail) {
    assertTrue(!applied.contains(earlier) || !applied.contains(later) || applied.indexOf(earlier) < applied.indexOf(later),
        "applied " + applied + ": " + later + " before " + earlier + " (" + detail + ")");
  }

  /** Nothing held or open at {@code r}, nothing left in ADR 0115's tables. */
  static void assertClean(Router r) throws ReflectiveOperationException {
    assertEquals(0, r.heldCount(), r.self() + ": held");
    assertEquals(0, r.openForwards(), r.self() + ": open forwards");
    for (String table : List.of("openByOrigin", "behindSent")) {
      java.lang.reflect.Field field = Router.class.getDeclaredField(table);
      field.setAccessible(true);
      assertEquals(Map.of(), field.get(r), r.self() + ": " + table + " left behind");
    }
  }

  /** {@code n} keys that {@code node} owns by {@code view}. */
  static List<String> keysOf(String node, List<String> view, int n) {
    List<String> keys = new ArrayList<>();
    for (int k = 0; keys.size() < n; k++) {
      if (Rendezvous.owner("k" + k, view).equals(node)) {
        keys.add("k" + k);
      }
    }
    return keys;
  }
}
