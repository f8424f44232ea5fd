package dev.ferry.bench;

import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * One benchmark scenario. The harness runs every scenario in one process, one after another, so
 * the figures of a run are measured side by side on the same machine under the same noise.
 *
 * <p>Cluster forwarding, measured for now by {@code ForwardingBench}, would plug in here (reported
 * under scenario 6, next to {@link RealStore}). Add the class to {@link Bench#scenarios()}.
 */
interface Scenario {
  /** Short id used on the command line ({@code --only s1,s3}) and as the results key. */
  String id();

  String title();

  /** Runs the scenario on the calling (non event-loop) thread, writing any plots under {@code env.out()}. */
  Outcome run(BenchEnv env) throws Exception;

  /** Raw data for the results file, and the lines of the summary table. */
  record Outcome(JsonObject data, List<Row> rows) {}

  /**
   * One line of the summary table: a figure, its target and the physical limit beside it.
   *
   * @param verdict "yes", "no", or "-" when the figure has no target
   */
  record Row(String scenario, String figure, String measured, String target, String limit, String verdict) {
    static String verdict(boolean met) {
      return met ? "yes" : "no";
    }
  }
}
