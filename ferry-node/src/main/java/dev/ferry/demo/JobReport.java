package dev.ferry.demo;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * What one run of the main job did, as counted by the callers, by the store's side of the event
 * bus and by the database itself.
 *
 * @param options the options of the run
 * @param busyInputs submissions to hot accounts
 * @param quietInputs submissions to quiet accounts
 * @param acknowledged inputs applied and acknowledged with the new balance
 * @param refused inputs the store refused on their own (overdrafts; 422 INPUT_REJECTED)
 * @param rejected inputs the ferry refused because its waiting room was full (429 REJECTED)
 * @param failed inputs whose batch failed (502 FAILED; written or not, unknown)
 * @param other inputs answered CLOSED, TIMEOUT or BAD_INPUT (never written)
 * @param unanswered submissions still without a reply when the job gave up waiting (should be 0)
 * @param calls downstream calls, as the ferry counts them ({@code batches} in its metrics)
 * @param busyCalls calls for hot accounts, seen on the event bus
 * @param busyCarried inputs those calls carried
 * @param quietCalls calls for quiet accounts
 * @param quietCarried inputs those calls carried
 * @param busyP50Ms median latency of a hot account's operation, submit to reply (NaN if none)
 * @param busyP99Ms 99th percentile of the same
 * @param quietP50Ms median latency of a quiet account's operation
 * @param quietP99Ms 99th percentile of the same
 * @param seconds from the first submission to the last reply
 * @param plannedInputs what the schedule offered over the duration
 * @param accountsChecked accounts whose row was compared with the acknowledged operations
 * @param accountsUnverifiable accounts skipped because a FAILED batch may or may not be in them
 * @param mismatches accounts whose database row disagrees with the acknowledged operations
 */
public record JobReport(
    JobOptions options,
    long busyInputs,
    long quietInputs,
    long acknowledged,
    long refused,
    long rejected,
    long failed,
    long other,
    long unanswered,
    long calls,
    long busyCalls,
    long busyCarried,
    long quietCalls,
    long quietCarried,
    double busyP50Ms,
    double busyP99Ms,
    double quietP50Ms,
    double quietP99Ms,
    double seconds,
    long plannedInputs,
    int accountsChecked,
    int accountsUnverifiable,
    List<String> mismatches) {

  public long inputs() {
    return busyInputs + quietInputs;
  }

  /** Every submission got exactly one of the replies counted here. */
  public boolean everyInputAccountedFor() {
    return unanswered == 0 && acknowledged + refused + rejected + failed + other == inputs();
  }

  /** The database holds exactly what the callers were told was applied. */
  public boolean consistent() {
    return mismatches.isEmpty();
  }

  /** The job's verdict: exit code 0 when true. */
  public boolean ok() {
    return consistent() && everyInputAccountedFor();
  }

  /** Inputs carried to the store (sent in a batch), whatever the answer. */
  public long carried() {
    return busyCarried + quietCarried;
  }

  /** Round trips saved against one call per input. */
  public long saved() {
    return carried() - calls;
  }

  public double meanBatch() {
    return calls == 0 ? 0 : carried() / (double) calls;
  }

  public double inputsPerSecond() {
    return seconds <= 0 ? 0 : (inputs() - unanswered) / seconds;
  }

  /** Prints the summary table. */
  public void print(PrintStream out) {
    out.println();
    out.printf(Locale.ROOT, "%-18s %10s %9s %11s %8s %8s%n", "", "inputs", "calls", "mean batch", "p50 ms", "p99 ms");
    row(out, "busy keys (" + options.hot() + ")", busyInputs, busyCalls, busyCarried, busyP50Ms, busyP99Ms);
    row(out, "quiet keys (" + options.quiet() + ")", quietInputs, quietCalls, quietCarried, quietP50Ms, quietP99Ms);
    out.printf(Locale.ROOT, "%-18s %,10d %,9d %11.1f%n", "all", inputs(), calls, meanBatch());
    out.println();
    out.printf(Locale.ROOT, "round trips saved  %,d of %,d (%.1f%%) against one call per input%n",
        saved(), carried(), carried() == 0 ? 0.0 : 100.0 * saved() / carried());
    out.printf(Locale.ROOT, "throughput         %,.0f inputs/s (%,d answered in %.2f s; %,d offered of %,d planned)%n",
        inputsPerSecond(), inputs() - unanswered, seconds, inputs(), plannedInputs);
    out.printf(Locale.ROOT, "acknowledged       %,d%n", acknowledged);
    if (refused > 0) {
      out.printf(Locale.ROOT, "refused            %,d overdrafts (422 INPUT_REJECTED; the rest of their batches applied)%n", refused);
    }
    if (rejected > 0) {
      out.printf(Locale.ROOT, "rejected           %,d (429 REJECTED: the ferry's waiting room was full)%n", rejected);
    }
    if (failed > 0) {
      out.printf(Locale.ROOT, "failed             %,d (502 FAILED: the batch call failed)%n", failed);
    }
    if (other > 0) {
      out.printf(Locale.ROOT, "other failures     %,d (CLOSED, TIMEOUT or BAD_INPUT)%n", other);
    }
    if (unanswered > 0) {
      out.printf(Locale.ROOT, "UNANSWERED         %,d%n", unanswered);
    }
    if (consistent()) {
      out.printf(Locale.ROOT, "consistent: yes (%,d accounts: each balance and event count in the database matches its acknowledged operations%s)%n",
          accountsChecked, accountsUnverifiable == 0 ? "" : "; " + accountsUnverifiable + " with a FAILED batch not checked");
    } else {
      out.printf(Locale.ROOT, "consistent: NO (%d of %,d accounts differ), e.g. %s%n",
          mismatches.size(), accountsChecked, mismatches.subList(0, Math.min(5, mismatches.size())));
    }
  }

  private static void row(PrintStream out, String label, long inputs, long calls, long carried, double p50, double p99) {
    out.printf(Locale.ROOT, "%-18s %,10d %,9d %11.1f %8s %8s%n",
        label, inputs, calls, calls == 0 ? 0.0 : carried / (double) calls, ms(p50), ms(p99));
  }

  private static String ms(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.1f", v);
  }
}
