package dev.ferry.cluster;

import dev.ferry.PerKeyConfig;
import dev.ferry.internal.Loop;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.verticle.Submission;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.List;

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
    MultiMap h = MultiMap.caseInsensitiveMultiMap().add(Submission.KEY, key);
    if (timeoutMs > 0) {
      h.add(Submission.TIMEOUT_MS, Long.toString(timeoutMs));
    }
    Promise<Object> answer = Promise.promise();
    router.accept(Submission.parse(h, body), 0, false, null, null, answer);
    return answer.future();
  }
}
