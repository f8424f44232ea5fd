package dev.ferry.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToIntFunction;

/**
 * Scenario 4's event-bus comparison for a shared machine: the same {@link EventBusCost} benchmarks
 * (hot key), run in one JVM in short slices taken in turn, in rotating order, so that every
 * contender meets the same neighbours at nearly the same moment. On a quiet machine JMH's forks and
 * iterations are the measure; on a busy one an iteration is either undisturbed or many times
 * slower, and which contender a neighbour's compile hits decides a ratio of medians. Here each
 * round gives one slice to each contender, and the ratio is taken per round (ferry over echo in
 * the same round) before the median over rounds.
 *
 * <p>Run with {@code exec:java -Dexec.mainClass=dev.ferry.bench.EventBusInterleaved
 * -Dexec.classpathScope=test [-Dexec.args="rounds"]}. Not part of the harness run: a diagnostic
 * beside scenario 4, reported with scenario 4 in docs/performance.md. With {@code
 * -Dferry.bench.only=<contender>} it runs one contender alone, for a profiler.
 */
public final class EventBusInterleaved {
  /** Invocations (of {@link EventBusCost#N} inputs each) per slice: about 50 ms on a quiet machine. */
  static final int INVOCATIONS = 48;

  private record Contender(String name, ToIntFunction<EventBusCost.LoopCpu> run) {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    EventBusCost bench = new EventBusCost();
    bench.keys = 1;
    bench.setUp();
    List<Contender> contenders = List.of(
        new Contender("bareEcho", bench::bareEcho),
        new Contender("ferrySubmit", bench::ferrySubmit),
        new Contender("ferrySubmitUncopiedReply", bench::ferrySubmitUncopiedReply),
        new Contender("downstreamShare", bench::downstreamShare),
        new Contender("downstreamShareUncopiedReply", bench::downstreamShareUncopiedReply),
        new Contender("bareEchoWithKey", bench::bareEchoWithKey),
        new Contender("downstreamShareFresh", bench::downstreamShareFresh),
        new Contender("downstreamShareFreshUncopiedReply", bench::downstreamShareFreshUncopiedReply));
    int n = contenders.size();
    String only = System.getProperty(ONLY);
    if (only != null) {
      profileOne(bench, contenders, only, rounds);
      return;
    }
    try {
      // Warm-up: every contender until the JIT has settled (the same slices, not recorded).
      for (int r = 0; r < Math.max(40, rounds / 4); r++) {
        for (Contender c : contenders) {
          slice(c);
        }
      }
      double[][] wall = new double[n][rounds];
      double[][] cpu = new double[n][rounds];
      double[][] alloc = new double[n][rounds];
      for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < n; k++) {
          int i = (k + r) % n; // rotate the order: none always follows the same one
          double[] m = slice(contenders.get(i));
          wall[i][r] = m[0];
          cpu[i][r] = m[1];
          alloc[i][r] = m[2];
        }
      }
      System.out.printf(Locale.ROOT, "%d rounds of %d x %d inputs per contender; load average now %.2f%n", rounds,
          INVOCATIONS, EventBusCost.N, java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
      for (int i = 0; i < n; i++) {
        System.out.printf(Locale.ROOT, "%-34s wall median %7.0f ns/input (q25 %7.0f)   loop CPU median %7.0f (q25 %7.0f)   allocated %5.0f B/input%n",
            contenders.get(i).name(), median(wall[i]), quantile(wall[i], 0.25), median(cpu[i]), quantile(cpu[i], 0.25),
            median(alloc[i]));
      }
      for (int i = 1; i < 3; i++) {
        double[] wallRatio = new double[rounds];
        double[] cpuRatio = new double[rounds];
        double[] cpuOwn = new double[rounds];
        double[] cpuOwnFresh = new double[rounds];
        for (int r = 0; r < rounds; r++) {
          wallRatio[r] = wall[i][r] / wall[0][r];
          cpuRatio[r] = cpu[i][r] / cpu[0][r];
          // minus the echo with the key header the protocol needs, and the matching downstream share
          cpuOwn[r] = cpu[i][r] - cpu[5][r] - cpu[i + 2][r];
          // the same with the downstream's share on fresh inputs, as the ferry's are
          cpuOwnFresh[r] = cpu[i][r] - cpu[5][r] - cpu[i + 5][r];
        }
        System.out.printf(Locale.ROOT,
            "%-30s over bareEcho, per round: wall median %.3fx (q25 %.3f, q75 %.3f)   CPU median %.3fx (q25 %.3f, q75 %.3f)"
                + "   ferry's own CPU (minus the echo with a key header and the matching downstream share) median %.0f ns"
                + " (with the share on fresh inputs: %.0f ns)%n",
            contenders.get(i).name(), median(wallRatio), quantile(wallRatio, 0.25), quantile(wallRatio, 0.75),
            median(cpuRatio), quantile(cpuRatio, 0.25), quantile(cpuRatio, 0.75), median(cpuOwn), median(cpuOwnFresh));
      }
    } finally {
      bench.tearDown();
    }
  }

  /**
   * {@code -Dferry.bench.only=<contender>}: runs that one contender alone, {@code rounds} slices
   * after the same warm-up, for a profiler attached to the JVM (async-profiler as an agent, or JFR
   * with {@code -XX:StartFlightRecording}), and prints its figures. Nothing is compared.
   */
  static final String ONLY = "ferry.bench.only";

  private static void profileOne(EventBusCost bench, List<Contender> contenders, String name, int rounds)
      throws Exception {
    Contender c = contenders.stream().filter(x -> x.name().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no contender " + name + "; one of "
            + contenders.stream().map(Contender::name).toList()));
    try {
      for (int r = 0; r < Math.max(40, rounds / 4); r++) {
        slice(c);
      }
      double[] sum = new double[3];
      for (int r = 0; r < rounds; r++) {
        double[] m = slice(c);
        for (int i = 0; i < 3; i++) {
          sum[i] += m[i] / rounds;
        }
      }
      System.out.printf(Locale.ROOT, "%s alone, %d rounds: wall %.0f ns/input, loop CPU %.0f ns, allocated %.0f B/input%n",
          name, rounds, sum[0], sum[1], sum[2]);
    } finally {
      bench.tearDown();
    }
  }

  /** One slice: wall-clock and loop-CPU ns per input, and bytes the loop allocated per input. */
  private static double[] slice(Contender c) {
    EventBusCost.LoopCpu cpu = new EventBusCost.LoopCpu();
    long t0 = System.nanoTime();
    int inputs = 0;
    for (int k = 0; k < INVOCATIONS; k++) {
      inputs += c.run().applyAsInt(cpu);
    }
    return new double[] {(System.nanoTime() - t0) / (double) inputs, cpu.loopCpuNs / (double) cpu.inputs,
        cpu.loopAllocBytes / (double) cpu.inputs};
  }

  private static double median(double[] v) {
    return quantile(v, 0.5);
  }

  private static double quantile(double[] v, double q) {
    List<Double> all = new ArrayList<>();
    for (double x : v) {
      all.add(x);
    }
    all.sort(Double::compare);
    return all.get((int) Math.round(q * (all.size() - 1)));
  }
}
