package dev.ferry.demo;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * What the main job did: the warm-up runs (apart), the store's one-input round trip measured alone, and
 * the measured runs side by side, the first through Ferry; each run also measured the store's
 * one-input round trip under its own load ({@link RunReport#storeP50Ms()}).
 *
 * @param options the options of the job
 * @param database what the store runs on
 * @param warmups the warm-up rounds: each Ferry mode measured warms up in rounds until the JIT settles (the default last), or none
 * @param storeRoundTripP50Ms median of one-input calls to the store made one at a time, no other load
 * @param storeRoundTripP99Ms 99th percentile of the same
 * @param runs the measured runs: Ferry first, then the comparisons
 * @param html where the HTML report was written, or null
 */
public record JobReport(
    JobOptions options,
    String database,
    List<RunReport> warmups,
    double storeRoundTripP50Ms,
    double storeRoundTripP99Ms,
    List<RunReport> runs,
    Path html) {

  public JobReport {
    warmups = List.copyOf(warmups);
  }

  /** The measured run through Ferry with the defaults. */
  public RunReport ferry() {
    return runs.get(0);
  }

  /** The job's verdict, exit code 0 when true: in every run each submission got exactly one reply and the database matched. */
  public boolean ok() {
    return warmups.stream().allMatch(RunReport::ok) && runs.stream().allMatch(RunReport::ok);
  }

  /** Quiet keys' p99 over their p50 in the Ferry run (target: at most 3). */
  public double quietTailRatio() {
    return ferry().quietP99Ms() / ferry().quietP50Ms();
  }

  /**
   * Quiet keys' p50 in the Ferry run over the store's one-input round trip measured alone, with
   * nothing else running (target: at most 2). It charges Ferry with what the load does to the
   * store as well as with what Ferry adds; {@link #quietToLoadedRoundTripRatio()} separates them.
   */
  public double quietToRoundTripRatio() {
    return ferry().quietP50Ms() / storeRoundTripP50Ms;
  }

  /**
   * Quiet keys' p50 in the Ferry run over the median one-input call made straight to the store
   * during that run, under the same load: what Ferry adds to a quiet key's call (two event-bus
   * hops and its lane) beyond what the load makes the store cost anyway.
   */
  public double quietToLoadedRoundTripRatio() {
    return ferry().quietP50Ms() / ferry().storeP50Ms();
  }

  /** Prints the summary: warm-up lines, store round trip, the side-by-side table, the targets. */
  public void print(PrintStream out) {
    out.println();
    for (RunReport warmup : warmups) {
      out.printf(Locale.ROOT, "%s (not in the table): %,d inputs in %.1f s, %,.0f inputs/s, quiet p50 %s ms p99 %s ms, busy p99 %s ms, JIT compiling %.1f s%n",
          warmup.label(), warmup.inputs(), warmup.seconds(), warmup.inputsPerSecond(), ms(warmup.quietP50Ms()),
          ms(warmup.quietP99Ms()), ms(warmup.busyP99Ms()), warmup.jitSeconds());
    }
    out.printf(Locale.ROOT, "store round trip (one input, one call at a time, nothing else running): p50 %s ms, p99 %s ms%n",
        ms(storeRoundTripP50Ms), ms(storeRoundTripP99Ms));
    out.println();
    StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "%-28s", ""));
    for (RunReport r : runs) {
      head.append(String.format(Locale.ROOT, " %14s", r.label()));
    }
    out.println(head);
    row(out, "throughput (inputs/s)", r -> String.format(Locale.ROOT, "%,.0f", r.inputsPerSecond()));
    row(out, "busy keys (" + options.hot() + ") p50 ms", r -> ms(r.busyP50Ms()));
    row(out, "busy keys p99 ms", r -> ms(r.busyP99Ms()));
    row(out, "quiet keys (" + options.quiet() + ") p50 ms", r -> ms(r.quietP50Ms()));
    row(out, "quiet keys p99 ms", r -> ms(r.quietP99Ms()));
    row(out, "one-input store call p50 ms", r -> ms(r.storeP50Ms()));
    row(out, "one-input store call p99 ms", r -> ms(r.storeP99Ms()));
    row(out, "calls to the store", r -> String.format(Locale.ROOT, "%,d", r.calls()));
    row(out, "mean batch, busy keys", r -> oneDecimal(r.busyMeanBatch()));
    row(out, "mean batch, quiet keys", r -> oneDecimal(r.quietMeanBatch()));
    // A run that answered nothing has no length (first submission to last reply): no figure.
    row(out, "CPU, cores (JVM + database)", r -> r.seconds() <= 0 ? "-" : String.format(Locale.ROOT, "%.2f + %.2f",
        r.jvmCpuSeconds() / r.seconds(), r.serverCpuSeconds() / r.seconds()));
    row(out, "JIT compiling, s", r -> String.format(Locale.ROOT, "%.1f", r.jitSeconds()));
    row(out, "inputs answered", r -> String.format(Locale.ROOT, "%,d", r.inputs() - r.unanswered()));
    row(out, "offered of planned", r -> String.format(Locale.ROOT, "%.0f%%", 100.0 * r.inputs() / Math.max(1, r.plannedInputs())));
    row(out, "acknowledged", r -> String.format(Locale.ROOT, "%,d", r.acknowledged()));
    row(out, "refused (overdrafts, 422)", r -> String.format(Locale.ROOT, "%,d", r.refused()));
    if (runs.stream().anyMatch(r -> r.rejected() > 0)) {
      row(out, "rejected (queue full, 429)", r -> String.format(Locale.ROOT, "%,d", r.rejected()));
    }
    if (runs.stream().anyMatch(r -> r.failed() > 0)) {
      row(out, "failed (502)", r -> String.format(Locale.ROOT, "%,d", r.failed()));
    }
    if (runs.stream().anyMatch(r -> r.other() > 0)) {
      row(out, "other failures", r -> String.format(Locale.ROOT, "%,d", r.other()));
    }
    if (runs.stream().anyMatch(r -> r.unanswered() > 0)) {
      row(out, "UNANSWERED", r -> String.format(Locale.ROOT, "%,d", r.unanswered()));
    }
    row(out, "consistent", r -> r.consistent() ? "yes" : "NO");
    out.println();
    RunReport f = ferry();
    out.printf(Locale.ROOT, "round trips saved  %,d of %,d (%.1f%%) through Ferry against one call per input%n",
        f.saved(), f.carried(), f.carried() == 0 ? 0.0 : 100.0 * f.saved() / f.carried());
    for (RunReport r : runs) {
      if (!r.consistent()) {
        out.printf(Locale.ROOT, "%s: database NOT consistent (%d of %,d accounts differ), e.g. %s%n", r.label(),
            r.mismatches().size(), r.accountsChecked(), r.mismatches().subList(0, Math.min(5, r.mismatches().size())));
      }
    }
    if (runs.stream().allMatch(RunReport::consistent)) {
      out.printf(Locale.ROOT, "consistent: yes (after each run, every balance and event count in the database matched the acknowledged operations; %,d accounts%s)%n",
          f.accountsChecked(), runs.stream().anyMatch(r -> r.accountsUnverifiable() > 0)
              ? ", less those with a 502 reply, which may or may not be written" : "");
    }
    // Without quiet traffic (--quiet 0) there is no quiet latency: "-", as in the table, not NaN.
    out.printf(Locale.ROOT, "targets (Ferry run): quiet p99 / quiet p50 = %s (at most 3 on an idle machine); quiet p50 / store round trip = %s against the round trip measured alone, %s against the one under the same load (at most 2)%n",
        oneDecimal(quietTailRatio()), oneDecimal(quietToRoundTripRatio()), oneDecimal(quietToLoadedRoundTripRatio()));
  }

  private void row(PrintStream out, String label, Function<RunReport, String> value) {
    StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-28s", label));
    for (RunReport r : runs) {
      line.append(String.format(Locale.ROOT, " %14s", value.apply(r)));
    }
    out.println(line);
  }

  /** One decimal, or "-" where there is no figure (no input of that kind: NaN, or a ratio over 0). */
  private static String oneDecimal(double v) {
    return Double.isFinite(v) ? String.format(Locale.ROOT, "%.1f", v) : "-";
  }

  static String ms(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.1f", v);
  }
}
