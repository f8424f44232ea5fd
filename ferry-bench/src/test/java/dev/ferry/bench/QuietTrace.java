package dev.ferry.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import dev.ferry.Ferry;
import dev.ferry.FerryMetrics;
import io.vertx.core.json.JsonObject;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * Where a quiet input's time goes in scenario 2, from its due time to its answer, recorded with
 * timestamps at each hop: the generator submitting it (its clock starts when it was due; the
 * loop may be busy or stalled then, and the generator's own wake-up may be late), the ferry granting its call, the store's hop onto its context,
 * the store's timer (the call itself), and the answer reaching the generator's callback. Also the
 * ferry's limit and calls in flight when each input was sent, every call's time on the wire by
 * size, and the JVM's collections over the window.
 *
 * <p>The generator, the flood, the store and the ferry share one context: everything recorded on
 * the loop is written there; GC notifications arrive on a JMX thread and are read after the run.
 */
final class QuietTrace implements SimStore.Trace {
  private final String prefix;
  /** Quiet key number to input index (keys are unique within a run). */
  private final int[] indexOfKey;
  private final long[] sent;
  private final long[] called;
  private final long[] wireStart;
  private final long[] wireEnd;
  private final int[] limitAtSend;
  private final int[] inFlightAtSend;
  private final int[] waitingAtSend;
  private long[] batchWire = new long[1 << 16];
  private long[] batchEnd = new long[1 << 16];
  private int batchCalls;
  private final List<long[]> pauses = java.util.Collections.synchronizedList(new ArrayList<>());
  private final List<Runnable> unhook = new ArrayList<>();

  QuietTrace(String prefix, int keys, int count) {
    this.prefix = prefix;
    indexOfKey = new int[keys];
    Arrays.fill(indexOfKey, -1);
    sent = new long[count];
    called = new long[count];
    wireStart = new long[count];
    wireEnd = new long[count];
    limitAtSend = new int[count];
    inFlightAtSend = new int[count];
    waitingAtSend = new int[count];
    listenToCollections();
  }

  /** On the loop, just before quiet input {@code i} for key number {@code key} is submitted. */
  void sending(int i, int key, Ferry<?, ?> ferry) {
    indexOfKey[key] = i;
    FerryMetrics m = ferry.metrics();
    limitAtSend[i] = m.callLimit();
    inFlightAtSend[i] = m.inFlightBatches();
    waitingAtSend[i] = m.callsWaiting();
    sent[i] = System.nanoTime();
  }

  /** On the loop, as the ferry's batch call starts for {@code key}. */
  void called(String key) {
    int i = quietIndex(key);
    if (i >= 0) {
      called[i] = System.nanoTime();
    }
  }

  @Override
  public void ended(Object result, int inputs, long calledAt, long startedAt, long doneAt) {
    int i = quietIndex((String) result);
    if (i >= 0) {
      wireStart[i] = startedAt;
      wireEnd[i] = doneAt;
    } else {
      if (batchCalls == batchWire.length) {
        batchWire = Arrays.copyOf(batchWire, 2 * batchCalls);
        batchEnd = Arrays.copyOf(batchEnd, 2 * batchCalls);
      }
      batchWire[batchCalls] = doneAt - startedAt;
      batchEnd[batchCalls++] = doneAt;
    }
  }

  private int quietIndex(String key) {
    if (!key.startsWith(prefix)) {
      return -1;
    }
    return indexOfKey[Integer.parseInt(key, prefix.length(), key.length(), 10)];
  }

  private void listenToCollections() {
    long uptimeOrigin = System.nanoTime() - ManagementFactory.getRuntimeMXBean().getUptime() * 1_000_000L;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (!(gc instanceof NotificationEmitter emitter)) {
        continue;
      }
      NotificationListener listener = (Notification n, Object handback) -> {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
          return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
        long start = uptimeOrigin + info.getGcInfo().getStartTime() * 1_000_000L;
        long end = uptimeOrigin + info.getGcInfo().getEndTime() * 1_000_000L;
        pauses.add(new long[] {start, Math.max(end, start + 1)});
      };
      emitter.addNotificationListener(listener, null, null);
      unhook.add(() -> {
        try {
          emitter.removeNotificationListener(listener);
        } catch (Exception ignored) {
          // already gone
        }
      });
    }
  }

  /**
   * The breakdown over the inputs due in {@code [from, to)}: each hop's p50 / p99 / max, the mean of
   * each hop over the slowest 1% (at or above the p99), how many of those overlapped a collection,
   * and what the ferry's limit looked like when they were sent. Call after the run, off the loop.
   */
  JsonObject summary(Latencies lat, long from, long to) {
    unhook.forEach(Runnable::run);
    int n = lat.issued();
    List<long[]> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long due = lat.scheduledAt(i);
      long done = lat.doneAt(i);
      if (due < from || due >= to || done == 0 || wireEnd[i] == 0 || called[i] == 0) {
        continue;
      }
      rows.add(new long[] {done - due, sent[i] - due, called[i] - sent[i], wireStart[i] - called[i],
          wireEnd[i] - wireStart[i], done - wireEnd[i], due, done, i,
          done - due - (called[i] - sent[i]), done - sent[i]});
    }
    String[] names = {"total", "generator", "ferry", "hop", "wire", "answer"};
    // Two what-ifs from the same inputs: the latency less the wait for a call (as if the limit had
    // always had room), and the latency from the submit (as if the input had been submitted when due).
    String[] without = {"totalLessFerryWait", "fromSubmit"};
    JsonObject hops = new JsonObject();
    for (int c = 0; c < names.length; c++) {
      long[] v = column(rows, c);
      hops.put(names[c], new JsonObject().put("p50Ms", ms(pct(v, 0.5))).put("p99Ms", ms(pct(v, 0.99)))
          .put("maxMs", ms(v.length == 0 ? 0 : v[v.length - 1])));
    }
    for (int c = 0; c < without.length; c++) {
      long[] v = column(rows, 9 + c);
      hops.put(without[c], new JsonObject().put("p50Ms", ms(pct(v, 0.5))).put("p99Ms", ms(pct(v, 0.99))));
    }
    long p99 = pct(column(rows, 0), 0.99);
    List<long[]> tail = rows.stream().filter(r -> r[0] >= p99).toList();
    JsonObject tailMeans = new JsonObject().put("inputs", tail.size());
    for (int c = 0; c < names.length; c++) {
      int col = c;
      tailMeans.put(names[c] + "MeanMs", ms((long) tail.stream().mapToLong(r -> r[col]).average().orElse(0)));
    }
    List<long[]> inWindow;
    synchronized (pauses) {
      inWindow = pauses.stream().filter(p -> p[1] > from && p[0] < to).toList();
    }
    tailMeans.put("overlappingACollection", tail.stream().filter(r -> overlaps(inWindow, r[6], r[7])).count());
    int sentWhileFull = 0;
    int[] limits = new int[rows.size()];
    int minLimit = Integer.MAX_VALUE;
    int maxInFlight = 0;
    int maxWaiting = 0;
    for (long[] r : rows) {
      int i = (int) r[8];
      limits[rows.indexOf(r)] = limitAtSend[i];
      sentWhileFull += inFlightAtSend[i] >= limitAtSend[i] ? 1 : 0;
      minLimit = Math.min(minLimit, limitAtSend[i]);
      maxInFlight = Math.max(maxInFlight, inFlightAtSend[i]);
      maxWaiting = Math.max(maxWaiting, waitingAtSend[i]);
    }
    long[] batches = Arrays.copyOf(batchWire, batchCalls);
    long[] batchesInWindow = new long[batchCalls];
    int b = 0;
    for (int k = 0; k < batchCalls; k++) {
      if (batchEnd[k] >= from && batchEnd[k] < to) {
        batchesInWindow[b++] = batches[k];
      }
    }
    long[] hot = Arrays.copyOf(batchesInWindow, b);
    Arrays.sort(hot);
    long pauseTotal = inWindow.stream().mapToLong(p -> p[1] - p[0]).sum();
    long pauseMax = inWindow.stream().mapToLong(p -> p[1] - p[0]).max().orElse(0);
    return new JsonObject().put("samples", rows.size()).put("hops", hops).put("slowestOnePercent", tailMeans)
        .put("limitAtSendMin", rows.isEmpty() ? 0 : minLimit).put("limitAtSendMedian", median(limits)).put("inFlightAtSendMax", maxInFlight)
        .put("callsWaitingAtSendMax", maxWaiting).put("sentWithTheLimitFull", sentWhileFull)
        .put("otherCallsWireP50Ms", ms(pct(hot, 0.5))).put("otherCallsWireP99Ms", ms(pct(hot, 0.99)))
        .put("collections", inWindow.size()).put("collectionMsTotal", ms(pauseTotal)).put("collectionMsMax", ms(pauseMax));
  }

  private static int median(int[] v) {
    if (v.length == 0) {
      return 0;
    }
    int[] sorted = v.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  private static boolean overlaps(List<long[]> pauses, long from, long to) {
    for (long[] p : pauses) {
      if (p[1] > from && p[0] < to) {
        return true;
      }
    }
    return false;
  }

  private static long[] column(List<long[]> rows, int c) {
    long[] v = rows.stream().mapToLong(r -> r[c]).toArray();
    Arrays.sort(v);
    return v;
  }

  private static long pct(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int idx = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, idx))];
  }

  private static double ms(long nanos) {
    return Math.round(nanos / 1e3) / 1e3;
  }

  /** One line for the summary table: each hop's p99, and the slowest 1%'s mean hops. */
  static String line(JsonObject s) {
    JsonObject h = s.getJsonObject("hops");
    JsonObject t = s.getJsonObject("slowestOnePercent");
    return String.format("p99 less the wait for a call %.2f ms; loop busy %.0f%%; p99 generator %.2f, ferry %.2f, hop %.2f, wire %.2f, answer %.2f ms; slowest 1%%: %.2f / %.2f / %.2f / %.2f / %.2f ms, %d of %d in a GC",
        h.getJsonObject("totalLessFerryWait").getDouble("p99Ms"), 100 * s.getDouble("loopCpuShare", 0.0), h.getJsonObject("generator").getDouble("p99Ms"), h.getJsonObject("ferry").getDouble("p99Ms"),
        h.getJsonObject("hop").getDouble("p99Ms"), h.getJsonObject("wire").getDouble("p99Ms"),
        h.getJsonObject("answer").getDouble("p99Ms"), t.getDouble("generatorMeanMs"), t.getDouble("ferryMeanMs"),
        t.getDouble("hopMeanMs"), t.getDouble("wireMeanMs"), t.getDouble("answerMeanMs"),
        t.getLong("overlappingACollection"), t.getInteger("inputs"));
  }
}
