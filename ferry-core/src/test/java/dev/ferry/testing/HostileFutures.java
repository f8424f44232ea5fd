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
}
