package dev.ferry.bench;

import dev.ferry.demo.JobOptions;
import dev.ferry.demo.JobReport;
import dev.ferry.demo.MainJob;
import dev.ferry.demo.RunReport;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 7: the main job's workload on a loaded machine. The main job (its defaults: embedded
 * PostgreSQL, the bulk import and the quiet traffic through Ferry, after a warm-up) runs once
 * alone and once beside a {@link Burner}, a separate process with one busy thread per core at
 * nice 0, started in a session of its own when {@code setsid} exists (as another application on a
 * laptop would be). Reported: each run's throughput and quiet-key p99, and the CPU the job got
 * (its JVM and its database server) as a share of the machine.
 *
 * <p>Targets: loaded throughput at least 40% of the idle run's, loaded quiet p99 at most 3x.
 */
final class Contention implements Scenario {
  @Override
  public String id() {
    return "s7";
  }

  @Override
  public String title() {
    return "Main job beside one busy thread per core: throughput and quiet p99 against the idle run";
  }

  @Override
  public Outcome run(BenchEnv env) throws Exception {
    Duration warmup = env.pick(Duration.ofSeconds(3), Duration.ofMillis(500));
    Duration duration = env.pick(Duration.ofSeconds(8), Duration.ofSeconds(1));
    int cores = Runtime.getRuntime().availableProcessors();
    JobOptions options = JobOptions.parse("--duration", duration.toMillis() + "ms", "--warmup", warmup.toMillis() + "ms",
        "--no-compare", "--no-report", "--no-progress");

    // The harness JVM's first main job also compiles what the job's own warm-up leaves: run once
    // and discarded, so that the idle run is not the colder of the two.
    job(JobOptions.parse("--duration", warmup.toMillis() + "ms", "--warmup", "0", "--no-compare", "--no-report",
        "--no-progress"));
    double loadBefore = loadAverage();
    RunReport idle = job(options);
    RunReport loaded;
    long burnSeconds = warmup.plus(duration).toSeconds() + 120; // ends by itself even if we are killed
    Process burner = startBurner(cores, burnSeconds);
    try {
      Thread.sleep(1000); // let it reach full speed
      loaded = job(options);
    } finally {
      burner.getOutputStream().close(); // its watchdog exits on end of input
      if (!burner.waitFor(10, TimeUnit.SECONDS)) {
        burner.destroyForcibly();
      }
    }

    double throughputRatio = loaded.inputsPerSecond() / idle.inputsPerSecond();
    double p99Ratio = loaded.quietP99Ms() / idle.quietP99Ms();
    System.out.printf(Locale.ROOT, "   idle:   %,8.0f inputs/s  quiet p50 %.1f ms p99 %.1f ms  busy p99 %.1f ms  mean busy batch %.1f  CPU %.2f cores (%.0f%% of %d)%n",
        idle.inputsPerSecond(), idle.quietP50Ms(), idle.quietP99Ms(), idle.busyP99Ms(), idle.busyMeanBatch(),
        idle.coresUsed(), 100 * idle.coresUsed() / cores, cores);
    System.out.printf(Locale.ROOT, "   loaded: %,8.0f inputs/s  quiet p50 %.1f ms p99 %.1f ms  busy p99 %.1f ms  mean busy batch %.1f  CPU %.2f cores (%.0f%% of %d)%n",
        loaded.inputsPerSecond(), loaded.quietP50Ms(), loaded.quietP99Ms(), loaded.busyP99Ms(), loaded.busyMeanBatch(),
        loaded.coresUsed(), 100 * loaded.coresUsed() / cores, cores);

    List<Row> rows = new ArrayList<>();
    rows.add(new Row(id(), "job's CPU share, idle -> loaded (JVM + database server)",
        String.format(Locale.ROOT, "%.0f%% -> %.0f%% of %d cores", 100 * idle.coresUsed() / cores,
            100 * loaded.coresUsed() / cores, cores), "-",
        String.format(Locale.ROOT, "load average %.1f before the runs", loadBefore), "-"));
    rows.add(new Row(id(), "throughput loaded / idle",
        String.format(Locale.ROOT, "%.0f%% (%,.0f / %,.0f inputs/s)", 100 * throughputRatio, loaded.inputsPerSecond(),
            idle.inputsPerSecond()),
        ">= 40%", "-", Row.verdict(throughputRatio >= 0.4)));
    rows.add(new Row(id(), "quiet p99 loaded / idle",
        String.format(Locale.ROOT, "%.1fx (%.1f / %.1f ms)", p99Ratio, loaded.quietP99Ms(), idle.quietP99Ms()),
        "<= 3x", "-", Row.verdict(p99Ratio <= 3)));
    return new Outcome(new JsonObject()
        .put("cores", cores).put("burnerThreads", cores).put("ownSession", setsid() != null)
        .put("loadAverageBefore", loadBefore)
        .put("warmupMs", warmup.toMillis()).put("durationMs", duration.toMillis())
        .put("idle", summary(idle)).put("loaded", summary(loaded)), rows);
  }

  private static RunReport job(JobOptions options) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    JobReport report;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      report = MainJob.run(options, out);
    }
    if (!report.ok()) {
      throw new IllegalStateException("the main job failed its own checks:\n" + bytes.toString(StandardCharsets.UTF_8));
    }
    return report.ferry();
  }

  private static JsonObject summary(RunReport r) {
    return new JsonObject().put("inputsPerSecond", r.inputsPerSecond())
        .put("quietP50Ms", r.quietP50Ms()).put("quietP99Ms", r.quietP99Ms())
        .put("busyP50Ms", r.busyP50Ms()).put("busyP99Ms", r.busyP99Ms())
        .put("busyMeanBatch", r.busyMeanBatch()).put("jvmCpuSeconds", r.jvmCpuSeconds())
        .put("serverCpuSeconds", r.serverCpuSeconds()).put("seconds", r.seconds())
        .put("offered", r.inputs()).put("planned", r.plannedInputs());
  }

  /** The burner, from the class files this class was loaded from, with this JVM's java. */
  private static Process startBurner(int threads, long seconds) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classes = Path.of(Burner.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    List<String> command = new ArrayList<>();
    String setsid = setsid();
    if (setsid != null) {
      command.add(setsid);
    }
    command.addAll(List.of(java, "-Xmx32m", "-cp", classes, Burner.class.getName(),
        String.valueOf(threads), String.valueOf(seconds)));
    return new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  private static String setsid() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "setsid"))) {
        return Path.of(dir, "setsid").toString();
      }
    }
    return null;
  }

  private static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }
}
