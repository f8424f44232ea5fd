package dev.ferry.testing;

import io.vertx.core.Future;

/** Hand-rolled Futures that break the Future contract, as a careless downstream's might. */
public final class HostileFutures {
  private HostileFutures() {}

  /** The methods that take a listener or a function to run on completion. */
  private static final java.util.Set<String> LISTENING = java.util.Set.of("onComplete", "onSuccess", "onFailure",
      "andThen", "compose", "transform", "map", "flatMap", "recover", "otherwise", "eventually");

  /**
   * A Future over {@code inner} whose every way of listening ({@code onComplete}, {@code compose},
   * ...) registers on {@code inner}, then throws {@code thrown}: a listener the caller cannot know
   * was taken. Any other method is {@code inner}'s.
   */
  @SuppressWarnings("unchecked")
  public static <T> Future<T> throwingOnListen(Future<T> inner, RuntimeException thrown) {
    return (Future<T>) java.lang.reflect.Proxy.newProxyInstance(Future.class.getClassLoader(),
        new Class<?>[] {Future.class}, (proxy, method, args) -> {
          Object result = method.invoke(inner, args);
          if (LISTENING.contains(method.getName())) {
            throw thrown;
          }
          return result;
        });
  }

  /**
   * A Future over {@code inner} that hands {@code answer} to each {@code onComplete} handler when
   * {@code inner} completes, instead of {@code inner}'s outcome: a hand-rolled Future that calls
   * back with a null result, or with an {@link io.vertx.core.AsyncResult} of its own whose methods
   * throw. Any other method is {@code inner}'s.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static <T> Future<T> answering(Future<T> inner, io.vertx.core.AsyncResult<T> answer) {
    return (Future<T>) java.lang.reflect.Proxy.newProxyInstance(Future.class.getClassLoader(),
        new Class<?>[] {Future.class}, (proxy, method, args) -> {
          if (method.getName().equals("onComplete") && args != null && args.length == 1
              && args[0] instanceof io.vertx.core.Handler handler) {
            inner.onComplete(ignored -> handler.handle(answer));
            return proxy;
          }
          return method.invoke(inner, args);
        });
  }

  /** An {@link io.vertx.core.AsyncResult} every method of which throws {@code thrown}. */
  @SuppressWarnings("unchecked")
  public static <T> io.vertx.core.AsyncResult<T> throwingResult(RuntimeException thrown) {
    return (io.vertx.core.AsyncResult<T>) java.lang.reflect.Proxy.newProxyInstance(
        Future.class.getClassLoader(), new Class<?>[] {io.vertx.core.AsyncResult.class},
        (proxy, method, args) -> {
          throw thrown;
        });
  }
}
