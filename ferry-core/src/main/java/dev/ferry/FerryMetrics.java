package dev.ferry;

import io.vertx.core.json.JsonObject;

/**
 * A snapshot of one ferry's state and running counters.
 *
 * @param inFlightBatches calls on the wire now, direct calls included
 * @param queuedInputs inputs waiting (not in flight)
 * @param queuedWeight total weight of the waiting inputs
 * @param activeLanes keys with inputs waiting or a call in flight (always 0 for {@code make} and {@code keyed}, which have no lanes)
 * @param submitted inputs submitted so far (accepted or not)
 * @param rejected inputs refused with {@link FerryError#REJECTED}
 * @param batches calls started, direct calls included
 * @param directCalls calls that carried an idle key's input at once, as a batch of one
 * @param failedBatches calls that failed, timed out or answered malformed
 * @param timedOut inputs dropped because their caller's deadline passed while they waited
 * @param callLimit the limit in force on calls in flight: per key, the learned (or pinned) limit
 *     with adaptive dispatch, {@code maxInFlightBatches} otherwise; 0 when not reported
 * @param callsWaiting per key, the keys ready to call but held back by the call limit; for {@code
 *     make} and {@code keyed}, 1 while their queue has a batch ready to leave and every slot is
 *     busy, else 0
 * @param seenLatencyMicros mean latency of the calls the adaptive limit judged last (0 before)
 * @param seenFloorMicros the floor it compared them with: their latency without queueing (0 before)
 * @param seenLoopLagMicros how late the ferry's own event loop ran those calls' completions, on
 *     average: latency the limit did not count as the downstream's (ADR 0015; 0 before)
 * @param callsPastTimeout calls whose callers were failed at the call timeout and that are still
 *     on the wire, each holding its key or call slot until it ends (ADR 0170): the one count the
 *     gauge {@code ferry.calls.past.timeout}, {@code ferry.metrics} and the verticle's health read;
 *     0 once the ferry's owner closed and gave those calls up
 */
public record FerryMetrics(
    int inFlightBatches,
    int queuedInputs,
    long queuedWeight,
    int activeLanes,
    long submitted,
    long rejected,
    long batches,
    long directCalls,
    long failedBatches,
    long timedOut,
    int callLimit,
    int callsWaiting,
    long seenLatencyMicros,
    long seenFloorMicros,
    long seenLoopLagMicros,
    int callsPastTimeout) {

  /** All zeros: a ferry that has seen nothing yet. */
  public static final FerryMetrics EMPTY = new FerryMetrics(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

  /** A snapshot with no call-limit figures (0). */
  public FerryMetrics(int inFlightBatches, int queuedInputs, long queuedWeight, int activeLanes, long submitted,
      long rejected, long batches, long directCalls, long failedBatches, long timedOut) {
    this(inFlightBatches, queuedInputs, queuedWeight, activeLanes, submitted, rejected, batches, directCalls,
        failedBatches, timedOut, 0, 0, 0, 0, 0, 0);
  }

  /**
   * A snapshot without {@code callsPastTimeout} (0): the components before it was added (ADR 0170),
   * so that code built against them still compiles.
   */
  public FerryMetrics(int inFlightBatches, int queuedInputs, long queuedWeight, int activeLanes, long submitted,
      long rejected, long batches, long directCalls, long failedBatches, long timedOut, int callLimit,
      int callsWaiting, long seenLatencyMicros, long seenFloorMicros, long seenLoopLagMicros) {
    this(inFlightBatches, queuedInputs, queuedWeight, activeLanes, submitted, rejected, batches, directCalls,
        failedBatches, timedOut, callLimit, callsWaiting, seenLatencyMicros, seenFloorMicros, seenLoopLagMicros, 0);
  }

  /** The snapshot as JSON, with the field names of the record (what {@code ferry.metrics} replies). */
  public JsonObject toJson() {
    return new JsonObject()
        .put("inFlightBatches", inFlightBatches)
        .put("queuedInputs", queuedInputs)
        .put("queuedWeight", queuedWeight)
        .put("activeLanes", activeLanes)
        .put("submitted", submitted)
        .put("rejected", rejected)
        .put("batches", batches)
        .put("directCalls", directCalls)
        .put("failedBatches", failedBatches)
        .put("timedOut", timedOut)
        .put("callLimit", callLimit)
        .put("callsWaiting", callsWaiting)
        .put("seenLatencyMicros", seenLatencyMicros)
        .put("seenFloorMicros", seenFloorMicros)
        .put("seenLoopLagMicros", seenLoopLagMicros)
        .put("callsPastTimeout", callsPastTimeout);
  }
}
