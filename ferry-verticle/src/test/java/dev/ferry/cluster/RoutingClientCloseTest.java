package dev.ferry.cluster;

import static dev.ferry.cluster.ClusterHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.verticle.FerryClient;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Closing the routing client (ADR 0136), on an unclustered Vert.x with a fake membership and a
 * consumer at n0's node address standing in for the node: it records what reaches it and keeps
 * each message for the test to answer. Nothing sleeps.
 */
class RoutingClientCloseTest {
  private static final String SUBMIT = "ferry.submit";

  private Vertx vertx;
  private Context context;
  /** What reached n0, not answered yet, in arrival order. */
  private final List<Message<Object>> atN0 = new CopyOnWriteArrayList<>();
  /** Completed by the next arrival at n0. */
  private volatile Promise<Void> arrived = Promise.promise();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    await(vertx.eventBus().consumer(FerryClient.nodeAddress(SUBMIT, "n0"), m -> {
      atN0.add(m);
      arrived.tryComplete();
    }).completion());
    context = vertx.getOrCreateContext();
  }

  @AfterEach
  void stop() {
    if (vertx != null) {
      await(vertx.close());
    }
  }

  private RoutingClient client(Membership membership) {
    Promise<RoutingClient> made = Promise.promise();
    context.runOnContext(v -> made.complete(RoutingClient.create(vertx, SUBMIT, membership)));
    RoutingClient client = await(made.future());
    await(client.started());
    return client;
  }

  private static Future<Object> submit(RoutingClient client, String key, Object body) {
    return client.submit(key, body, new DeliveryOptions().addHeader(FerryClient.KEY_HEADER, key), 0, 10_000);
  }

  private static void assertClosed(Future<Object> answer) {
    FerryException e = (FerryException) ClusterHarness.failure(answer);
    assertEquals(FerryError.CLOSED, e.kind(), e.getMessage());
  }

  /**
   * Before the fix, the closed client routed by the last view it had read: the input reached n0
   * and was answered there.
   */
  @Test
  void aSubmitAfterCloseIsClosedAtOnceAndNothingIsSent() {
    RoutingClient client = client(new FixedView("client", Set.of("n0")));
    await(client.close());
    Future<Object> late = submit(client, "k", "late");
    assertTrue(late.isComplete(), "answered before submit returned");
    assertClosed(late);
    // From the client's own loop too.
    Promise<Future<Object>> onLoop = Promise.promise();
    context.runOnContext(v -> onLoop.complete(submit(client, "k", "late on the loop")));
    assertClosed(await(onLoop.future()));
    // n0 still answers: an input sent now would be seen here.
    Future<Object> probe = vertx.eventBus().request(FerryClient.nodeAddress(SUBMIT, "n0"), "probe").map(Message::body);
    await(arrived.future());
    atN0.get(0).reply("ok");
    assertEquals("ok", await(probe));
    assertEquals(List.of("probe"), atN0.stream().map(Message::body).toList());
  }

  /**
   * An input on the wire when the client closes gets its own answer (it may have been applied: a
   * CLOSED would invite a retry that applies it twice); the close completes without waiting for it.
   */
  @Test
  void anInputOnTheWireAtCloseGetsItsOwnAnswer() {
    RoutingClient client = client(new FixedView("client", Set.of("n0")));
    Future<Object> x = submit(client, "k", "x");
    await(arrived.future());
    await(client.close());
    atN0.get(0).reply("x ok");
    assertEquals("x ok", await(x));
    assertEquals(0, await(client.activeKeys()));
  }

  /** Every close completes; from a reply handler on the client's loop too. */
  @Test
  void closeIsIdempotentAndWorksFromAReplyHandler() {
    RoutingClient client = client(new FixedView("client", Set.of("n0")));
    Promise<Future<Object>> afterClose = Promise.promise();
    Promise<Future<Void>> closedInHandler = Promise.promise();
    context.runOnContext(v -> submit(client, "k", "x").onComplete(ar -> {
      Future<Void> closing = client.close();
      closedInHandler.complete(closing);
      afterClose.complete(submit(client, "k", "after close, in the handler"));
    }));
    await(arrived.future());
    atN0.get(0).reply("ok");
    Future<Void> first = await(closedInHandler.future());
    await(first);
    await(client.close());
    await(client.close());
    assertClosed(await(afterClose.future()));
    assertEquals(1, atN0.size(), "nothing sent after close");
  }

  /**
   * The view changes while the client closes (the membership delivers a last snapshot before its
   * close completes). An input that waited for a node is answered CLOSED at close; before the fix
   * it waited, then went to the node of the late view.
   */
  @Test
  void aViewThatArrivesDuringCloseRoutesNothing() {
    Promise<Void> membershipClosed = Promise.promise();
    Membership late = new Membership() {
      private Consumer<Snapshot> listener;

      @Override
      public String self() {
        return "client";
      }

      @Override
      public Future<Void> start(String life, Consumer<Snapshot> listener) {
        this.listener = listener;
        listener.accept(new Snapshot(Set.of(), Set.of(), Set.of())); // no node yet
        return Future.succeededFuture();
      }

      @Override
      public Future<Void> withdraw() {
        return Future.succeededFuture();
      }

      @Override
      public Future<Void> close() {
        listener.accept(new Snapshot(Set.of("n0"), Set.of("n0"), Set.of())); // read while closing
        return membershipClosed.future();
      }
    };
    RoutingClient client = client(late);
    Future<Object> waiting = submit(client, "k", "w");
    Future<Void> closing = client.close();
    assertClosed(waiting);
    assertEquals(false, closing.isComplete(), "not before the membership closed");
    context.runOnContext(v -> membershipClosed.complete());
    await(closing);
    assertEquals(0, await(client.activeKeys()));
    assertEquals(List.of(), atN0);
  }

  /**
   * Vert.x closed under two clients, one with an input waiting for a node, one with an input on the
   * wire: both are answered. Before the fix neither ever was: Vert.x took the waiting one's
   * deadline timer, and fails no pending request as it closes (nor does its send timeout fire).
   * The waiting one was never sent: CLOSED; the one on the wire may have been applied: FAILED.
   */
  @Test
  void aVertxClosedUnderTheClientAnswersEveryInput() {
    RoutingClient none = client(new FixedView("client", Set.of()));
    Future<Object> waiting = submit(none, "k", "w");
    RoutingClient client = client(new FixedView("client", Set.of("n0")));
    Future<Object> onTheWire = submit(client, "k", "x");
    await(arrived.future());
    Vertx closing = vertx;
    vertx = null;
    await(closing.close());
    assertClosed(waiting);
    FerryException x = (FerryException) ClusterHarness.failure(onTheWire);
    assertEquals(FerryError.FAILED, x.kind(), x.getMessage());
    assertTrue(x.getMessage().contains("may or may not have been applied"), x.getMessage());
    assertEquals(1, atN0.size());
  }

  /**
   * A client made in a verticle closes when that verticle is undeployed, as Vert.x's own clients
   * do: the undeploy takes the verticle's timers, so an input waiting for a node would never be
   * answered. It is answered CLOSED, and a later submit too.
   */
  @Test
  void aClientMadeInAVerticleClosesWithIt() {
    Promise<RoutingClient> made = Promise.promise();
    String id = await(vertx.deployVerticle(new io.vertx.core.VerticleBase() {
      @Override
      public Future<?> start() {
        made.complete(RoutingClient.create(vertx, SUBMIT, new FixedView("client", Set.of())));
        return Future.succeededFuture();
      }
    }));
    RoutingClient client = await(made.future());
    await(client.started());
    Future<Object> waiting = submit(client, "k", "w");
    await(vertx.undeploy(id));
    assertClosed(waiting);
    assertClosed(submit(client, "k", "after"));
    await(client.close());
  }

  /**
   * Submits from four threads while two others close the client: every input is answered once,
   * "ok" or CLOSED; each one answered "ok" reached the node and no CLOSED one did; once a thread
   * got CLOSED, every later input of that thread got it too (a close is for good); both closes
   * complete.
   */
  @Test
  void closesRacingSubmitsFromOtherThreadsAnswerEachInputOnce() throws Exception {
    List<String> atN1 = new CopyOnWriteArrayList<>();
    await(vertx.eventBus().consumer(FerryClient.nodeAddress(SUBMIT, "n1"), m -> {
      atN1.add((String) m.body());
      m.reply("ok");
    }).completion());
    RoutingClient client = client(new FixedView("client", Set.of("n1")));
    int threads = 4;
    int each = 300;
    List<List<Future<Object>>> answers = new java.util.ArrayList<>();
    java.util.concurrent.CountDownLatch halfway = new java.util.concurrent.CountDownLatch(threads);
    List<Thread> running = new java.util.ArrayList<>();
    for (int t = 0; t < threads; t++) {
      List<Future<Object>> mine = new java.util.ArrayList<>();
      answers.add(mine);
      int thread = t;
      running.add(new Thread(() -> {
        for (int i = 0; i < each; i++) {
          if (i == each / 2) {
            halfway.countDown();
          }
          mine.add(submit(client, "k" + thread, thread + ":" + i));
        }
      }));
    }
    List<Future<Void>> closes = new CopyOnWriteArrayList<>();
    for (int c = 0; c < 2; c++) {
      running.add(new Thread(() -> {
        try {
          halfway.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        closes.add(client.close());
      }));
    }
    running.forEach(Thread::start);
    for (Thread thread : running) {
      thread.join();
    }
    closes.forEach(ClusterHarness::await);
    java.util.Set<String> ok = new java.util.HashSet<>();
    for (int t = 0; t < threads; t++) {
      boolean closedSeen = false;
      for (int i = 0; i < each; i++) {
        Future<Object> answer = answers.get(t).get(i);
        String body = t + ":" + i;
        try {
          assertEquals("ok", answer.toCompletionStage().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS));
          assertTrue(!closedSeen, body + " answered ok after an earlier input of its thread got CLOSED");
          ok.add(body);
        } catch (java.util.concurrent.ExecutionException e) {
          FerryException fe = (FerryException) e.getCause();
          assertEquals(FerryError.CLOSED, fe.kind(), body + ": " + fe.getMessage());
          closedSeen = true;
        }
      }
    }
    assertEquals(ok, new java.util.HashSet<>(atN1), "what reached the node is what was answered ok");
    assertEquals(ok.size(), atN1.size(), "each at most once");
    assertEquals(0, await(client.activeKeys()));
  }

  /**
   * Closed with an input on the wire, then Vert.x closes before its reply came: the input is still
   * answered (FAILED, may or may not have been applied). A first version of the fix dropped the
   * close hook at close, and left this input unanswered.
   */
  @Test
  void anInputStillOnTheWireWhenVertxClosesAfterTheClientIsAnswered() {
    RoutingClient client = client(new FixedView("client", Set.of("n0")));
    Future<Object> x = submit(client, "k", "x");
    await(arrived.future());
    await(client.close());
    Vertx closing = vertx;
    vertx = null;
    await(closing.close());
    FerryException e = (FerryException) ClusterHarness.failure(x);
    assertEquals(FerryError.FAILED, e.kind(), e.getMessage());
  }

  /**
   * A close called on another event loop completes there, as a submit's answer does: its caller's
   * callbacks touch its own state on its own thread. Before, they ran where the membership's close
   * completed, the client's loop.
   */
  @Test
  void aCloseCompletesOnItsCallersContext() {
    Promise<Void> membershipClosed = Promise.promise();
    RoutingClient client = client(new FixedView("client", Set.of("n0"), membershipClosed.future()));
    Context caller = vertx.getOrCreateContext();
    Promise<Void> asked = Promise.promise();
    Promise<Boolean> onCaller = Promise.promise();
    caller.runOnContext(v -> {
      client.close().onComplete(ar -> onCaller.complete(Vertx.currentContext() == caller));
      asked.complete();
    });
    await(asked.future());
    context.runOnContext(v -> membershipClosed.complete());
    assertTrue(await(onCaller.future()), "the close's callback ran on its caller's context");
  }

  /**
   * Review AL: a caller that completes the Future its close returned (a Vert.x 5 promise's Future
   * is the promise) made the client's own completion of it throw, out of the close's task on the
   * loop (the membership here closes at once), reported as an error and ending the task before the
   * client dropped its owner's close hook.
   */
  @Test
  void aCallerThatCompletesItsCloseFutureBreaksNothing() {
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    vertx.exceptionHandler(reported::add);
    RoutingClient client = client(new FixedView("client", Set.of("n0")));
    Promise<Void> gaveUp = Promise.promise();
    context.runOnContext(v -> {
      Future<Void> closing = client.close();
      ((Promise<Void>) closing).tryComplete(); // the caller stops waiting, before the close's task ran
      gaveUp.complete();
    });
    await(gaveUp.future());
    await(client.close());
    Promise<Void> turned = Promise.promise();
    context.runOnContext(v -> turned.complete()); // a turn of the loop after the close's task
    await(turned.future());
    assertEquals(List.of(), reported);
  }
}
