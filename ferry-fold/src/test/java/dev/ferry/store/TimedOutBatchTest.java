package dev.ferry.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Ferry;
import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.FoldWrite;
import dev.ferry.PerKeyConfig;
import dev.ferry.examples.Accounts;
import dev.ferry.internal.Deadlines;
import dev.ferry.internal.Loop;
import dev.ferry.internal.PerKeyFerry;
import dev.ferry.internal.VertxLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A batch whose caller gave up (the ferry's call timeout, or the event-bus send timeout that the
 * verticle's downstream sets to it) while its write still runs: the key's next batch must not
 * reach the store before that write is over, or two writers race for one key and the later batch
 * can land first. Each test holds the first write until a read of another key, sent after the
 * second batch, shows that the second batch has had its chance to reach the store: the log then
 * says whether it did. Timeouts here end waits; nothing is asserted about time.
 */
class TimedOutBatchTest {
  private static final String ADDRESS = "test.timed-out";
  private Vertx vertx;
  private HookedStore<String, JsonObject, Object> hooked;
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());
  private final Promise<Void> releaseFirstWrite = Promise.promise();
  /** Completed once the key's first write reached the store and is held there. */
  private final Promise<Void> firstWriteHeld = Promise.promise();
  private volatile boolean probeReleases = true;
  private final AtomicInteger writesOfK = new AtomicInteger();
  /** Real milliseconds each read of k after the first takes (a store slowed by load); 0: none. */
  private volatile long laterReadsOfKMs;
  private final AtomicInteger readsOfK = new AtomicInteger();

  @BeforeEach
  void start() throws Exception {
    vertx = Vertx.vertx();
    Pool pool = JdbcStore.h2Pool(vertx, "jdbc:h2:mem:timed-out-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1", 4);
    JdbcStore store = JdbcStore.withEvents(pool, "accounts", "account_events");
    store.createTables().await(120, TimeUnit.SECONDS);
    hooked = new HookedStore<>(store)
        .onRead((key, read) -> {
          log.add("read " + key);
          if (key.equals("probe") && probeReleases) {
            releaseFirstWrite.tryComplete();
          }
          if (key.equals("k") && readsOfK.incrementAndGet() > 1 && laterReadsOfKMs > 0) {
            Promise<dev.ferry.Versioned<JsonObject>> slow = Promise.promise();
            vertx.setTimer(laterReadsOfKMs, t -> read.get().onComplete(slow));
            return slow.future();
          }
          return read.get();
        })
        .onWrite((key, expected, write) -> {
          if (!key.equals("k")) {
            return write.get();
          }
          log.add("write k at " + expected);
          boolean first = writesOfK.incrementAndGet() == 1;
          if (first) {
            firstWriteHeld.tryComplete();
          }
          Future<Boolean> done = first ? releaseFirstWrite.future().compose(v -> write.get()) : write.get();
          return done.andThen(ar -> log.add("wrote k at " + expected + ": " + (ar.succeeded() ? ar.result() : ar.cause())));
        });
  }

  @AfterEach
  void stop() throws Exception {
    releaseFirstWrite.tryComplete();
    vertx.close().await(120, TimeUnit.SECONDS);
  }

  @Test
  void inProcessTheKeysNextBatchWaitsForTheTimedOutWrite() throws Exception {
    // Accounts.ferry's engine and FoldWrite on the ferry's own event loop, but with a clock the
    // test moves: the call timeout applies to every call of the ferry, and in real time it also
    // ran out for the key's next batch when its H2 round trips took over 100 ms under load
    // (answered FAILED instead of 15, once in 12 runs beside two busy loops). The clock moves
    // once, past the first call's timeout while its write is held; the later calls then take the
    // time they take, the key's next read 150 ms of real time here, as a loaded store's did.
    ManualClock clock = new ManualClock(VertxLoop.forCaller(vertx));
    FoldWrite<String, JsonObject, Object, Long> foldWrite = Accounts.foldWrite(hooked);
    Ferry<Object, Long> ferry = new PerKeyFerry<>(clock,
        PerKeyConfig.builder().callTimeout(Duration.ofMillis(100)).pinnedLimit(4).build(),
        op -> op instanceof JsonObject o ? Accounts.accountOf(o) : null, null, null, foldWrite, foldWrite::extract);

    Future<Long> first = ferry.submit(Accounts.deposit("k", 10));
    firstWriteHeld.future().await(120, TimeUnit.SECONDS);
    clock.advance(Duration.ofMillis(100)).await(120, TimeUnit.SECONDS);
    assertFailed(failure(first));
    laterReadsOfKMs = 150;
    Future<Long> second = ferry.submit(Accounts.deposit("k", 5));
    Future<Long> probe = ferry.submit(Accounts.deposit("probe", 1));

    assertEquals(15L, second.await(120, TimeUnit.SECONDS), "the later batch applies after the earlier one: " + log);
    probe.await(120, TimeUnit.SECONDS);
    assertOneWriterAtATime();
  }

  @Test
  void throughStoreServiceTheKeysNextBatchWaitsForTheTimedOutWrite() throws Exception {
    StoreService.start(vertx, ADDRESS, Accounts.foldWrite(hooked), Object.class).await(120, TimeUnit.SECONDS);
    nextBatchWaitsForTheTimedOutWrite();
  }

  @Test
  void spreadOverSeveralContextsAKeysNextBatchStillWaitsForTheTimedOutWrite() throws Exception {
    // Keys spread over four contexts (this thread is not Vert.x's: four event loops); a key stays
    // on one, so its batches still run one at a time.
    StoreService.start(vertx, ADDRESS, Accounts.foldWrite(hooked), Object.class, Duration.ofSeconds(30), 4)
        .await(120, TimeUnit.SECONDS);
    nextBatchWaitsForTheTimedOutWrite();
  }

  private void nextBatchWaitsForTheTimedOutWrite() throws Exception {

    Future<Message<JsonObject>> first = vertx.eventBus().request(ADDRESS, request("k", Accounts.deposit("k", 10)),
        new DeliveryOptions().setSendTimeout(100));
    ReplyException gaveUp = assertInstanceOf(ReplyException.class, failure(first));
    assertEquals(ReplyFailure.TIMEOUT, gaveUp.failureType());

    // What the verticle's lane does once its call timed out: the key's next batch, at once.
    Future<Message<JsonObject>> second = vertx.eventBus().request(ADDRESS, request("k", Accounts.deposit("k", 5)));
    Future<Message<JsonObject>> probe = vertx.eventBus().request(ADDRESS, request("probe", Accounts.deposit("probe", 1)));

    JsonArray outcomes = second.await(120, TimeUnit.SECONDS).body().getJsonArray("outcomes");
    probe.await(120, TimeUnit.SECONDS);
    assertOneWriterAtATime();
    assertEquals(new JsonObject().put("ok", 15L), outcomes.getJsonObject(0),
        "the later batch must apply after the earlier one, which its caller gave up on: " + log);
  }

  @Test
  void stoppingTheServiceAnswersTheBatchesWaitingForTheirKeyAndLetsTheRunningOneFinish() throws Exception {
    probeReleases = false;
    StoreService service = StoreService.start(vertx, ADDRESS, Accounts.foldWrite(hooked), Object.class)
        .await(120, TimeUnit.SECONDS);
    Future<Message<JsonObject>> first = vertx.eventBus().request(ADDRESS, request("k", Accounts.deposit("k", 10)));
    Future<Message<JsonObject>> waiting = vertx.eventBus().request(ADDRESS, request("k", Accounts.deposit("k", 5)));
    Future<Message<JsonObject>> probe = vertx.eventBus().request(ADDRESS, request("probe", Accounts.deposit("probe", 1)));
    probe.await(120, TimeUnit.SECONDS); // answered after both k batches arrived
    Future<Void> stopped = service.stop(); // while the first batch is still writing
    releaseFirstWrite.complete();
    stopped.await(120, TimeUnit.SECONDS); // once it is over (ADR 0156)

    ReplyException refused = assertInstanceOf(ReplyException.class, failure(waiting));
    assertEquals(503, refused.failureCode(), refused.getMessage());
    assertEquals(new JsonObject().put("ok", 10L), first.await(120, TimeUnit.SECONDS).body().getJsonArray("outcomes").getJsonObject(0));
    assertEquals(1, List.copyOf(log).stream().filter(e -> e.equals("read k")).count(), "the waiting batch was run: " + log);
  }

  @Test
  void aBatchThatWaitedBehindItsKeyPastMaxWaitIsAnswered503AndNeverWritten() throws Exception {
    probeReleases = false;
    StoreService.start(vertx, ADDRESS, Accounts.foldWrite(hooked), Object.class, Duration.ofMillis(1), 1)
        .await(120, TimeUnit.SECONDS);
    Future<Message<JsonObject>> first = vertx.eventBus().request(ADDRESS, request("k", Accounts.deposit("k", 10)));
    Future<Message<JsonObject>> waiting = vertx.eventBus().request(ADDRESS, request("k", Accounts.deposit("k", 5)));
    vertx.eventBus().request(ADDRESS, request("probe", Accounts.deposit("probe", 1))).await(120, TimeUnit.SECONDS);
    // The waiting batch has arrived (the probe, sent after it, was answered); the first write ends
    // 50 ms later at the earliest, so the batch waited more than its 1 ms by then.
    vertx.setTimer(50, t -> releaseFirstWrite.tryComplete());

    assertEquals(new JsonObject().put("ok", 10L), first.await(120, TimeUnit.SECONDS).body().getJsonArray("outcomes").getJsonObject(0));
    ReplyException refused = assertInstanceOf(ReplyException.class, failure(waiting));
    assertEquals(503, refused.failureCode(), refused.getMessage());
    assertTrue(refused.getMessage().startsWith("batch not written"), refused.getMessage());
    assertEquals(1, writesOfK.get(), "the overdue batch was written: " + log);
  }

  @Test
  void maxWaitMustBePositive() {
    for (Duration bad : new Duration[] {null, Duration.ZERO, Duration.ofMillis(-1)}) {
      IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
          () -> StoreService.start(vertx, ADDRESS, Accounts.foldWrite(hooked), Object.class, bad, 1));
      assertTrue(e.getMessage().startsWith("maxWait must be a positive duration"), e.getMessage());
    }
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> StoreService.start(vertx, ADDRESS, Accounts.foldWrite(hooked), Object.class, Duration.ofSeconds(1), 0));
    assertTrue(e.getMessage().startsWith("contexts must be at least 1"), e.getMessage());
  }

  /**
   * A ferry's loop on a real event loop (tasks, close hooks and reports go to {@code loop}) whose
   * clock and timers move only when the test calls {@link #advance}: every timer the engine sets
   * is kept here, on the loop, and runs in its order when the test moves the clock past it.
   */
  private static final class ManualClock implements Loop {
    private record Timer(long at, long id, Runnable task) {}

    private final VertxLoop loop;
    private final TreeSet<Timer> timers =
        new TreeSet<>(Comparator.comparingLong(Timer::at).thenComparingLong(Timer::id));
    private final Map<Long, Timer> live = new HashMap<>();
    /** Moved on the loop only; volatile since a caller's deadline is read from its own thread. */
    private volatile long now;
    private long nextId;

    ManualClock(VertxLoop loop) {
      this.loop = loop;
    }

    @Override
    public boolean inLoop() {
      return loop.inLoop();
    }

    @Override
    public void execute(Runnable task) {
      loop.execute(task);
    }

    @Override
    public long nanoTime() {
      return now;
    }

    @Override
    public long schedule(long delayNanos, Runnable task) {
      Timer t = new Timer(Deadlines.after(now, Math.max(0, delayNanos)), nextId++, task);
      timers.add(t);
      live.put(t.id(), t);
      return t.id();
    }

    @Override
    public void cancel(long timerId) {
      Timer t = live.remove(timerId);
      if (t != null) {
        timers.remove(t);
      }
    }

    @Override
    public Runnable onOwnerClose(java.util.function.Consumer<Runnable> hook) {
      return loop.onOwnerClose(hook);
    }

    @Override
    public void report(Throwable failure) {
      loop.report(failure);
    }

    /** Moves the clock by {@code by} on the loop, running the timers that fall due in their order. */
    Future<Void> advance(Duration by) {
      Promise<Void> moved = Promise.promise();
      loop.execute(() -> {
        long until = Deadlines.after(now, by.toNanos());
        while (!timers.isEmpty() && timers.first().at() <= until) {
          Timer t = timers.pollFirst();
          live.remove(t.id());
          now = Math.max(now, t.at());
          t.task().run();
        }
        now = until;
        moved.complete();
      });
      return moved.future();
    }
  }

  /** The key's second read (its next batch's) comes only after its first write is over. */
  private void assertOneWriterAtATime() {
    List<String> k = List.copyOf(log);
    int secondRead = -1;
    for (int i = k.indexOf("read k") + 1; i > 0 && i < k.size() && secondRead < 0; i++) {
      secondRead = k.get(i).equals("read k") ? i : -1;
    }
    int firstWritten = k.indexOf("wrote k at 0: true");
    assertTrue(firstWritten >= 0 && firstWritten < secondRead,
        "the key's next batch reached the store while its timed-out write still ran: " + log);
  }

  private static JsonObject request(String key, Object... inputs) {
    JsonArray list = new JsonArray();
    for (int i = 0; i < inputs.length; i++) {
      list.add(new JsonObject().put("id", "i" + i).put("input", inputs[i]));
    }
    return new JsonObject().put("key", key).put("inputs", list);
  }

  /** How {@code f} failed, once it did. */
  private static Throwable failure(Future<?> f) throws Exception {
    f.otherwiseEmpty().await(120, TimeUnit.SECONDS);
    assertTrue(f.failed(), "succeeded: " + f.result());
    return f.cause();
  }

  private static FerryException ferryFailure(Throwable e) {
    return assertInstanceOf(FerryException.class, e);
  }

  private static void assertFailed(Throwable e) {
    assertEquals(FerryError.FAILED, ferryFailure(e).kind(), String.valueOf(e));
  }
}
