package dev.ferry.internal;

import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import dev.ferry.testing.RecordingDownstream;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.function.BiFunction;

/** A per-key ferry in virtual time over a recording downstream, for deterministic tests. */
final class PerKeyHarness {
  /** A test input: its key, a label, a weight and an order value. */
  record In(String key, String label, long weight, long order) {
    static In of(String key, String label) {
      return new In(key, label, 1, 0);
    }

    static In weighing(String key, String label, long weight) {
      return new In(key, label, weight, 0);
    }

    @Override
    public String toString() {
      return label;
    }
  }

  final VirtualLoop loop = new VirtualLoop();
  final RecordingDownstream<String, In> down = new RecordingDownstream<>(loop);
  final PerKeyFerry<String, In, List<In>, String> ferry;

  PerKeyHarness(PerKeyConfig config) {
    this(config, null, (in, result) -> in.label());
  }

  PerKeyHarness(PerKeyConfig config, Comparator<In> order, BiFunction<In, List<In>, String> extract) {
    ferry = new PerKeyFerry<>(loop, config, In::key, In::weight, order, down, extract);
  }

  Future<String> submit(String key, String label) {
    Future<String> f = ferry.submit(In.of(key, label));
    loop.runPending();
    return f;
  }

  Future<String> submit(In in) {
    Future<String> f = ferry.submit(in);
    loop.runPending();
    return f;
  }

  Future<String> submit(In in, Duration timeout) {
    Future<String> f = ferry.submit(in, timeout);
    loop.runPending();
    return f;
  }

  void succeed(int call) {
    down.succeed(call);
    loop.runPending();
  }

  void fail(int call, Throwable cause) {
    down.fail(call, cause);
    loop.runPending();
  }

  /** Labels of call {@code i}'s inputs, e.g. "[a1, a2]". */
  String call(int i) {
    return down.calls.get(i).key + down.calls.get(i).inputs;
  }

  List<String> calls() {
    return down.calls.stream().map(c -> c.key + c.inputs).toList();
  }

  static FerryException failure(Future<?> f) {
    if (!f.failed()) {
      throw new AssertionError("expected a failed future, got " + (f.isComplete() ? "success " + f.result() : "pending"));
    }
    return (FerryException) f.cause();
  }

  PerKeyEngine<String, In> engine() {
    return ferry.engine();
  }
}
