package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A library ferry when its owner goes away: the verticle it was created in undeploys (issue 12), or
 * its Vert.x closes (issue 13, item 11). Every caller is answered; nothing waits on a call that may
 * never complete; metrics read from another thread are current (issue 13, item 12).
 */
class OwnerCloseTest {
  private Vertx vertx = Vertx.vertx();
  /** Calls the test holds open, by first input; the rest answer at once with their inputs. */
  private final Map<String, Promise<List<String>>> held = new ConcurrentHashMap<>();

  @AfterEach
  void close() throws Exception {
    await(vertx.close());
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static FerryError kind(Future<?> f) throws Exception {
    try {
      await(f);
    } catch (ExecutionException e) {
      return ((FerryException) e.getCause()).kind();
    }
    throw new AssertionError("expected a failure, got " + f.result());
  }

  /** Inputs starting with "hold" stay in flight until the test completes them (or forever). */
  private Future<List<String>> call(String key, List<String> inputs) {
    if (!inputs.get(0).startsWith("hold")) {
      return Future.succeededFuture(inputs);
    }
    Promise<List<String>> p = Promise.promise();
    held.put(inputs.get(0), p);
    return p.future();
  }

  private Ferry<String, String> ferry(io.vertx.core.Context context, PerKeyConfig config) {
    return Ferry.perKey(context, config, s -> s.substring(s.length() - 1), null, null, this::call, (in, r) -> in);
  }

  /** A verticle whose start creates a ferry on its own context, as an application would. */
  final class Owner extends VerticleBase {
    final PerKeyConfig config;
    Ferry<String, String> ferry;

    Owner(PerKeyConfig config) {
      this.config = config;
    }

    @Override
    public Future<?> start() {
      ferry = ferry(context, config);
      return Future.succeededFuture();
    }
  }

  @Test
  void closingVertxAnswersCallersInFlightFailedAndWaitingClosed() throws Exception {
    Ferry<String, String> ferry = ferry(vertx.getOrCreateContext(),
        PerKeyConfig.builder().drainTimeout(Duration.ofMillis(50)).build());
    Future<String> inFlight = ferry.submit("hold-a");
    Future<String> waiting = ferry.submit("next-a");
    await(vertx.close());
    // Sent, then given up: FAILED (may have been applied), as the verticle's call timeout answers;
    // CLOSED only for an input never sent (ADR 0064).
    assertEquals(FerryError.FAILED, kind(inFlight), "a call that never completes is not waited for");
    assertInstanceOf(java.util.concurrent.CancellationException.class, inFlight.cause().getCause(),
        "FAILED carries its cause: the call given up, its outcome unknown");
    assertEquals(FerryError.CLOSED, kind(waiting));
  }

  @Test
  void aSubmitAfterVertxClosedFailsItsFutureWithClosed() throws Exception {
    Ferry<String, String> ferry = ferry(vertx.getOrCreateContext(), PerKeyConfig.defaults());
    assertEquals("x-a", await(ferry.submit("x-a")));
    await(vertx.close());
    Future<String> late = ferry.submit("y-a"); // must not throw
    assertEquals(FerryError.CLOSED, kind(late));
    Ferry<String, java.util.Optional<Integer>> keyed = Ferry.keyed(vertx, FerryConfig.defaults(),
        keys -> Future.succeededFuture(Map.of()));
    assertEquals(FerryError.CLOSED, kind(keyed.submit("k")));
  }

  @Test
  void closingVertxSendsWhatWaitsWithinTheDrainTimeout() throws Exception {
    Ferry<String, String> ferry = ferry(vertx.getOrCreateContext(),
        PerKeyConfig.builder().drainTimeout(Duration.ofMinutes(5)).build());
    Future<String> first = ferry.submit("hold-b");
    Future<String> waiting = ferry.submit("next-b");
    Future<Void> closing = vertx.close();
    while (!held.containsKey("hold-b")) {
      Thread.onSpinWait();
    }
    held.get("hold-b").complete(List.of("hold-b"));
    assertEquals("hold-b", await(first));
    assertEquals("next-b", await(waiting), "the drain still sends what waits");
    await(closing);
  }

  @Test
  void aFerryCreatedInAVerticleDrainsAndClosesWhenTheVerticleUndeploys() throws Exception {
    Owner owner = new Owner(PerKeyConfig.builder().drainTimeout(Duration.ofMinutes(5)).build());
    String id = await(vertx.deployVerticle(owner));
    Future<String> first = owner.ferry.submit("hold-c");
    Future<String> waiting = owner.ferry.submit("next-c");
    Future<Void> undeployed = vertx.undeploy(id);
    while (!held.containsKey("hold-c")) {
      Thread.onSpinWait();
    }
    held.get("hold-c").complete(List.of("hold-c"));
    assertEquals("hold-c", await(first));
    assertEquals("next-c", await(waiting), "undeploying drains: what waits is still sent");
    await(undeployed);
    assertEquals(FerryError.CLOSED, kind(owner.ferry.submit("after-c")), "the verticle is gone, so is its ferry");
  }

  @Test
  void undeployingAnswersWhatStillWaitsClosedAndCallsInFlightFailedWhenTheDrainTimeoutPasses() throws Exception {
    Owner owner = new Owner(PerKeyConfig.builder().drainTimeout(Duration.ofMillis(50)).build());
    String id = await(vertx.deployVerticle(owner));
    Future<String> stuck = owner.ferry.submit("hold-d");
    Future<String> waiting = owner.ferry.submit("next-d");
    await(vertx.undeploy(id));
    assertEquals(FerryError.FAILED, kind(stuck), "undeploy does not wait for a call that never completes");
    assertEquals(FerryError.CLOSED, kind(waiting));
    assertTrue(owner.ferry.metrics().submitted() >= 2);
  }

  /** A config whose drain on the owner's close would outlast any test: what ends it must be something else. */
  private static PerKeyConfig drainingLong(Duration callTimeout) {
    return PerKeyConfig.builder().callTimeout(callTimeout).drainTimeout(Duration.ofMinutes(5)).build();
  }

  /**
   * Timers the ferry armed before its verticle undeploys (a call timeout, a caller's deadline) still
   * fire while it drains: Vert.x cancels a verticle's timers when its context closes, before the
   * ferry's close hook runs, and the drain lasts minutes here.
   */
  @Test
  void aCallTimeoutAndADeadlineArmedBeforeTheUndeployStillFireWhileTheFerryDrains() throws Exception {
    Owner owner = new Owner(drainingLong(Duration.ofMillis(200)));
    String id = await(vertx.deployVerticle(owner));
    Future<String> stuck = owner.ferry.submit("hold-t");
    Future<String> waiting = owner.ferry.submit("next-t", Duration.ofMillis(400));
    Future<Void> undeployed = vertx.undeploy(id);
    assertEquals(FerryError.FAILED, kind(stuck), "the call timeout answers the hung call");
    assertEquals(FerryError.TIMEOUT, kind(waiting), "the deadline answers the input behind it");
    // The key stays held until its call ends (guarantee 2); once it does, the drain is over.
    held.get("hold-t").complete(List.of("hold-t"));
    await(undeployed);
  }

  /** A drain the application began before the undeploy ends on its own, shorter, timeout. */
  @Test
  void aDrainBegunBeforeTheUndeployEndsOnItsOwnTimeout() throws Exception {
    Owner owner = new Owner(drainingLong(Duration.ofMinutes(5)));
    String id = await(vertx.deployVerticle(owner));
    Future<String> stuck = owner.ferry.submit("hold-u");
    Future<String> waiting = owner.ferry.submit("next-u");
    Future<Void> drained = owner.ferry.drain(Duration.ofMillis(200));
    Future<Void> undeployed = vertx.undeploy(id);
    assertEquals(FerryError.FAILED, kind(stuck));
    assertEquals(FerryError.CLOSED, kind(waiting));
    await(drained);
    await(undeployed);
  }

  @Test
  void theFirstMetricsReadFromAnotherThreadSeesWhatHappened() throws Exception {
    io.vertx.core.Context context = vertx.getOrCreateContext();
    Ferry<String, String> ferry = ferry(context, PerKeyConfig.defaults());
    for (int i = 0; i < 100; i++) {
      await(ferry.submit("in" + i + "-" + (i % 7)));
    }
    // Wait for the loop to finish the task that answered the last caller (never for time).
    Promise<Void> idle = Promise.promise();
    context.runOnContext(v -> idle.complete());
    await(idle.future());
    FerryMetrics m = ferry.metrics(); // from the test thread, for the first time
    assertEquals(100, m.submitted());
    assertEquals(100, m.batches());
    assertEquals(0, m.activeLanes());
  }

  /**
   * A probe (FerryMeterBinder's) added once the ferry's Vert.x is closed is told the ferry is
   * closed: the loop is gone, so nothing more will be reported. Refused silently, it was never
   * told, and a binder's meters stayed in the registry holding the closed ferry, its name taken.
   */
  @Test
  void aProbeAddedOnceTheFerrysVertxIsClosedHearsThatTheFerryIsClosed() throws Exception {
    Ferry<String, String> ferry = ferry(vertx.getOrCreateContext(), PerKeyConfig.defaults());
    assertEquals("x-a", await(ferry.submit("x-a")));
    await(vertx.close());
    int[] told = {0};
    ((dev.ferry.internal.Probe.Observable) ferry).observe(new dev.ferry.internal.Probe() {
      @Override
      public void closed() {
        told[0]++;
      }
    });
    assertEquals(1, told[0], "told once, at once: its loop is gone");
  }

  /**
   * A ferry made on a Vert.x already closed refuses every input CLOSED; its close and drain
   * complete at once. Its loop refusing the close, they never completed.
   */
  @Test
  void theCloseOfAFerryMadeOnAClosedVertxCompletes() throws Exception {
    await(vertx.close());
    Ferry<String, String> ferry = ferry(vertx.getOrCreateContext(), PerKeyConfig.defaults());
    assertEquals(FerryError.CLOSED, kind(ferry.submit("x-a")));
    assertTrue(ferry.close().succeeded(), "closed, at once");
    Ferry<String, String> drained = ferry(vertx.getOrCreateContext(), PerKeyConfig.defaults());
    assertTrue(drained.drain(Duration.ofSeconds(1)).succeeded(), "drained, at once");
    Ferry<String, java.util.Optional<Integer>> keyed = Ferry.keyed(vertx, FerryConfig.defaults(),
        keys -> Future.succeededFuture(Map.of()));
    assertTrue(keyed.close().succeeded(), "keyed too");
  }

  /**
   * Once the ferry's Vert.x is closed, a hand-off completes at once with nothing to forward, as
   * one asked after any close does (ADR 0127: the ferry claims nothing of the key), and the active
   * keys are none. Refused by the gone loop, neither ever completed, and a caller moving keys
   * between ferries waited for ever.
   */
  @Test
  void aHandOffAskedOnceTheFerrysVertxIsClosedCompletesAtOnce() throws Exception {
    Ferry<String, String> ferry = ferry(vertx.getOrCreateContext(), PerKeyConfig.defaults());
    assertEquals("x-a", await(ferry.submit("x-a")));
    await(vertx.close());
    @SuppressWarnings("unchecked")
    dev.ferry.internal.PerKeyFerry<String, String, ?, String> perKey = (dev.ferry.internal.PerKeyFerry<String, String, ?, String>) ferry;
    Future<Void> done = perKey.handOff("a", (in, remaining) -> Future.succeededFuture("elsewhere"));
    assertTrue(done.succeeded(), "nothing held, nothing to forward");
    assertEquals(List.of(), perKey.activeKeys().result());
  }
}
