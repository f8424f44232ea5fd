package dev.ferry.internal;

import java.util.List;
import java.util.stream.LongStream;

/** The seeds of the hostile schedulers: {@code -Dferry.hostile.seed=N} reruns one, {@code -Dferry.hostile.seeds=N} runs 1..N. */
final class HostileSeeds {
  private HostileSeeds() {}

  static List<Long> of(int byDefault) {
    String one = System.getProperty("ferry.hostile.seed");
    if (one != null) {
      return List.of(Long.parseLong(one));
    }
    return LongStream.rangeClosed(1, Integer.getInteger("ferry.hostile.seeds", byDefault)).boxed().toList();
  }
}
