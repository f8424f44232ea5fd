package dev.ferry;

import static dev.ferry.MakeTest.kind;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.ferry.internal.PerKeyFerry;
import dev.ferry.internal.StreamFerry;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Review T: the in-process API against hostile downstreams and callers. */
class ReviewTTest {
  private final VirtualLoop loop = new VirtualLoop();

  /** An AsyncResult that says it failed and names no cause (its contract says it has one). */
  private static <T> AsyncResult<T> failedWithoutCause() {
    return new AsyncResult<>() {
      @Override public T result() { return null; }
      @Override public Throwable cause() { return null; }
      @Override public boolean succeeded() { return false; }
      @Override public boolean failed() { return true; }
    };
  }

  /** A hand-rolled Future whose onComplete hands its listener {@code ar}, at once. */
  @SuppressWarnings("unchecked")
  private static <T> Future<T> completingWith(AsyncResult<T> ar) {
    return (Future<T>) java.lang.reflect.Proxy.newProxyInstance(Future.class.getClassLoader(),
        new Class<?>[] {Future.class}, (proxy, method, args) -> {
          if (method.getName().equals("onComplete") && args != null && args.length == 1) {
            ((Handler<AsyncResult<T>>) args[0]).handle(ar);
            return proxy;
          }
          throw new UnsupportedOperationException(method.getName());
        });
  }

  /**
   * A call whose Future fails without a cause (a hand-rolled one) failed: its callers must hear
   * FAILED. They were answered with success, the call's result taken as null: with an extract
   * that does not read the result (a call answering {@code Future<Void>}), each caller was told
   * its input was written, and the failed batch was not counted.
   */
  @Test
  void aCallWhoseFutureFailsWithoutACauseFailsItsCallers() {
    List<List<String>> calls = new ArrayList<>();
    Ferry<String, String> perKey = new PerKeyFerry<String, String, Void, String>(loop, PerKeyConfig.defaults(),
        in -> in, null, null, (key, inputs) -> {
          calls.add(inputs);
          return completingWith(failedWithoutCause());
        },
        (in, nothing) -> in + " stored");
    Future<String> a = perKey.submit("a");
    loop.runPending();
    assertEquals(1, calls.size());
    assertEquals(FerryError.FAILED, kind(a), "the caller of a failed call: " + a);
    assertNotNull(a.cause().getCause(), "FAILED carries a cause (ADR 0141)");
    assertEquals(1, perKey.metrics().failedBatches());

    Ferry<String, String> make = new StreamFerry<String, Void, String>(loop, FerryConfig.defaults(), null,
        inputs -> completingWith(failedWithoutCause()), (in, nothing) -> in + " appended");
    Future<String> b = make.submit("b");
    loop.runPending();
    assertEquals(FerryError.FAILED, kind(b), "the caller of a failed call: " + b);
    assertEquals(1, make.metrics().failedBatches());
  }
}
