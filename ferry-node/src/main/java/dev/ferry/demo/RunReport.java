package dev.ferry.demo;

import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * What one run of the main job's load did (the warm-up, the run through Ferry, the run without
 * it), as counted by the callers, by the store's side of the event bus and by the database.
 *
 * @param label the run's name in the table: {@code Ferry}, {@code fixed slots}, {@code unbatched}, or
 *     {@code warm-up, Ferry} and {@code warm-up, fixed slots}
 * @param busyInputs submissions to hot accounts
 * @param quietInputs submissions to quiet accounts
 * @param acknowledged inputs applied and acknowledged with the new balance
 * @param refused inputs the store refused on their own (overdrafts; 422 INPUT_REJECTED)
 * @param rejected inputs the ferry refused because its waiting room was full (429 REJECTED)
 * @param failed inputs whose call failed (502 FAILED; written or not, unknown)
 * @param other inputs answered CLOSED, TIMEOUT or BAD_INPUT (never written)
 * @param unanswered submissions still without a reply when the job gave up waiting (should be 0)
 * @param calls calls to the store: the ferry's own {@code batches} count, or one per input without it
 * @param busyCalls calls for hot accounts, seen on the event bus
 * @param busyCarried inputs those calls carried
 * @param quietCalls calls for quiet accounts
 * @param quietCarried inputs those calls carried
 * @param busyP50Ms median latency of a hot account's operation, send to reply (NaN if none)
 * @param busyP99Ms 99th percentile of the same
 * @param quietP50Ms median latency of a quiet account's operation
 * @param quietP99Ms 99th percentile of the same
 * @param storeP50Ms median of one-input calls made straight to the store during the run, beside
 *     its load (50 a second, never through Ferry): the store's round trip under this load
 * @param storeP99Ms 99th percentile of the same
 * @param storeProbes how many such calls were made (their accounts are checked like the others)
 * @param seconds from the first submission to the last reply
 * @param plannedInputs what the schedule offered over the duration
 * @param accountsChecked accounts whose row was compared with the acknowledged operations
 * @param accountsUnverifiable accounts skipped because a FAILED call may or may not be in them
 * @param mismatches accounts whose database row disagrees with the acknowledged operations
 * @param jvmCpuSeconds CPU time this JVM used during the run (every thread: load, Ferry, store, GC)
 * @param serverCpuSeconds CPU time the database server's processes used (0 for H2, which runs in the JVM)
 * @param jitSeconds time the JVM's JIT compilers spent compiling during the run (part of {@code
 *     jvmCpuSeconds}): a run that still compiles competes with its own threads for the cores
 * @param timeline the run over time ({@link Timeline#toJson()}), for the HTML report
 */
public record RunReport(
    String label,
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
    double storeP50Ms,
    double storeP99Ms,
    long storeProbes,
    double seconds,
    long plannedInputs,
    int accountsChecked,
    int accountsUnverifiable,
    List<String> mismatches,
    double jvmCpuSeconds,
    double serverCpuSeconds,
    double jitSeconds,
    JsonObject timeline) {

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

  public boolean ok() {
    return consistent() && everyInputAccountedFor();
  }

  /** Inputs carried to the store (sent in a call), whatever the answer. */
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

  public double busyMeanBatch() {
    return busyCalls == 0 ? Double.NaN : busyCarried / (double) busyCalls;
  }

  public double quietMeanBatch() {
    return quietCalls == 0 ? Double.NaN : quietCarried / (double) quietCalls;
  }

  /** Cores kept busy on average by the JVM and the database server together. */
  public double coresUsed() {
    return seconds <= 0 ? 0 : (jvmCpuSeconds + serverCpuSeconds) / seconds;
  }

  public double inputsPerSecond() {
    return seconds <= 0 ? 0 : (inputs() - unanswered) / seconds;
  }
}
