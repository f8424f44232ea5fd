package dev.ferry.cluster;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.internal.Deadlines;
import dev.ferry.internal.Loop;
import io.vertx.core.AsyncResult;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * A routing client's decisions (docs/adr/0057-the-routing-client.md): which node each request
 * goes to, so that it reaches its key's owner in one hop and one sender's requests of a key keep
 * their order.
 *
 * <h2>Design</h2>
 *
 * The client keeps the ownership view the nodes use (announced, live Ferry nodes; the same
 * {@link Rendezvous} function) and, per key with requests in flight, the one node they went to
 * and the requests waiting to be sent. A request goes to the node its key's earlier requests are
 * still in flight to (that node passes it on behind them, ADR 0053), otherwise to the key's owner.
 * A request answered NO_HANDLERS was not delivered: it goes back to the key's waiting requests, in
 * its place, and they are sent again, in order, once the key has nothing in flight and the view
 * names a node that takes requests (or a pause has passed), within each request's deadline;
 * unless a later request of the key may have been applied meanwhile (the node's consumer came back
 * between the two sends): then it is answered CLOSED, never applied (ADR 0148's review).
 * Nothing that may have been delivered is ever sent again. A request answered 502 by a leave that
 * gave it up may still be applied for as long as its 502 says ({@link Router#givenUpForMs}): the
 * key's later requests wait that long before they go (ADR 0115).
 *
 * <p>Each public method is one transition; sends and answers are effects run after it. Time and
 * timers come from {@link Loop}. Runs on the client's loop only (asserted).
 */
final class ClientRouter {
  /**
   * The failure code of a NO_HANDLERS refusal from a node that is leaving the cluster: not
   * delivered, and the node will not take requests again, whatever a late view says.
   */
  public static final int GONE = 410;

  /** What the client asks of the network. */
  public interface Links {
    /** Sends {@code s.request} to {@code s.target}; the outcome comes back through {@link #sent}. */
    void send(Send s);
  }

  /** One request: what to send and the deadlines it lives by. */
  public static final class Request {
    public final String key;
    public final Object payload;
    /** System.nanoTime-like instant past which the input must not be sent (timeout-ms), or Long.MAX_VALUE. */
    final long inputDeadline;
    /** Instant past which the caller stops waiting for a reply (its send timeout). */
    final long replyDeadline;
    final Promise<Object> answer;
    long seq;
    long timer = -1;

    public Request(String key, Object payload, long inputDeadline, long replyDeadline, Promise<Object> answer) {
      this.key = key;
      this.payload = payload;
      this.inputDeadline = inputDeadline;
      this.replyDeadline = replyDeadline;
      this.answer = answer;
    }
  }

  /** One send of a request to a node. */
  public static final class Send {
    public final String target;
    public final Request request;
    /** What is left of the caller's timeout-ms, 0 for none. */
    public final long timeoutMs;
    /** How long to wait for the reply, at least 1 ms. */
    public final long sendTimeoutMs;
    /** When it was sent (loop time). */
    final long sentAt;

    Send(String target, Request request, long timeoutMs, long sendTimeoutMs, long sentAt) {
      this.target = target;
      this.sentAt = sentAt;
      this.request = request;
      this.timeoutMs = timeoutMs;
      this.sendTimeoutMs = sendTimeoutMs;
    }
  }

  private static final class KeyState {
    final String key;
    String target;
    int inFlight;
    final ArrayDeque<Request> waiting = new ArrayDeque<>();
    long retryTimer = -1;
    /**
     * Until when (loop time) a request of the key that a leave gave up may still be applied
     * further on ({@link Router#givenUpForMs}): the key's later requests wait here until then, or
     * they could reach the owner first (ADR 0115). 0 when none.
     */
    long givenUpUntil;
    long givenUpTimer = -1;
    /**
     * The latest place (seq) of the key's requests answered in a way that says it may have been
     * applied, while the key was kept: an earlier request that is, or comes, back not delivered
     * is never sent again, or it would be applied after that one (ADR 0148's review).
     */
    long mayHaveApplied;

    KeyState(String key) {
      this.key = key;
    }
  }

  private final Loop loop;
  private final Links links;
  private final Map<String, KeyState> keys = new HashMap<>();
  /** The nodes that refused a request (NO_HANDLERS): their keys wait a pause before each send. */
  private final Refusals unreachable = new Refusals();
  private List<String> view = List.of();
  /** The view less the nodes that said they are leaving (see {@link #GONE}). */
  private List<String> routable = List.of();
  /**
   * The nodes that said they are leaving ({@link #GONE}), each with when that is forgotten (loop
   * time): a node refuses only for its linger, and a ferry deployed again on its Vert.x node has the
   * same id, maybe before this client's membership reads showed the old one gone (ADR 0133).
   */
  private final Map<String, Long> leaving = new HashMap<>();
  /**
   * How long after a node's last {@link #GONE} this client keeps it out of its routing, unless the
   * view drops it first: well past the linger of a leaving node ({@code ClusterNode.LINGER_MS}),
   * so a node still leaving is seldom tried again (one more 410 if it is).
   */
  static final long LEAVING_FORGOTTEN_MS = 10_000;
  /** The sends not answered yet: answered FAILED if the client's Vert.x goes ({@link #abandon}). */
  private final Set<Send> onTheWire = new HashSet<>();
  private boolean known;
  /** Closed (ADR 0136): nothing is sent any more, whatever the view says. */
  private boolean closed;
  private long arrivals;
  private final EffectQueue effects = new EffectQueue();

  ClientRouter(Loop loop, Links links) {
    this.loop = loop;
    this.links = links;
  }


  /** The view this client routes by. */
  public List<String> view() {
    return view;
  }

  /** Keys with requests in flight or waiting (for tests: 0 once everything was answered). */
  public int activeKeys() {
    int n = 0;
    for (KeyState ks : keys.values()) {
      if (ks.inFlight > 0 || !ks.waiting.isEmpty()) {
        n++; // not a key kept only for its wait behind a given-up request (givenUpUntil)
      }
    }
    return n;
  }

  /**
   * Keys the client keeps state for, those kept only for a wait behind a given-up request included
   * (for tests: a key is forgotten once nothing of it is left, so memory does not grow).
   */
  int keysKept() {
    return keys.size();
  }

  // ---------------------------------------------------------------- transitions

  public void submit(Request r) {
    step(() -> {
      if (closed) {
        fail(r, new FerryException(FerryError.CLOSED, CLOSED_TEXT));
        return;
      }
      r.seq = ++arrivals;
      KeyState ks = keys.computeIfAbsent(r.key, KeyState::new);
      String owner = owner(r.key);
      if (!ks.waiting.isEmpty()) {
        wait(ks, r);
      } else if (givenUpWait(ks)) {
        wait(ks, r);
      } else if (ks.inFlight > 0) {
        send(ks, ks.target, r); // behind the key's earlier requests, through the same node
      } else if (owner == null || unreachable.contains(owner)) {
        wait(ks, r);
        if (owner != null) {
          retryLater(ks);
        }
      } else {
        send(ks, owner, r);
      }
      forget(ks);
    });
  }

  /** A membership snapshot: live members and announced Ferry nodes. */
  public void snapshot(Set<String> members, Set<String> announced) {
    step(() -> {
      if (closed) {
        return; // a view read as the membership was closing: nothing is routed by it
      }
      TreeSet<String> live = new TreeSet<>(announced);
      live.retainAll(members);
      List<String> next = List.copyOf(live);
      long now = loop.nanoTime();
      int excluded = leaving.size();
      leaving.keySet().retainAll(next); // a node that left the view needs no exclusion any more
      // Nor one that said "leaving" a while ago and is still in the view: a ferry deployed again
      // under its id (ADR 0133). Membership is read at least every second (ADR 0113).
      leaving.values().removeIf(until -> until <= now);
      boolean changed = !known || !next.equals(view);
      if (!changed && leaving.size() == excluded) {
        return;
      }
      known = true;
      view = next;
      routable = routable();
      if (changed) {
        unreachable.clear();
      }
      resendAll();
    });
  }

  private void resendAll() {
    for (KeyState ks : List.copyOf(keys.values())) {
      sendWaiting(ks, false);
    }
  }

  /** The outcome of a send. */
  public void sent(Send s, AsyncResult<Object> ar) {
    step(() -> {
      Request r = s.request;
      KeyState ks = keys.get(r.key);
      ks.inFlight--;
      onTheWire.remove(s);
      if (closed) {
        sentAfterClose(ks, s, ar);
        return;
      }
      if (!ar.succeeded() && ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS) {
        // Not delivered: sent again, before the key's later requests, once nothing is in flight.
        unreachable.refused(s.target, loop.nanoTime());
        if (re.failureCode() == GONE
            && leaving.put(s.target, loop.nanoTime() + LEAVING_FORGOTTEN_MS * 1_000_000) == null) {
          routable = routable(); // leaving: route by the view without it, before the view says so
        }
        if (r.seq < ks.mayHaveApplied) {
          fail(r, overtaken(s.target));
        } else {
          wait(ks, r);
          retryLater(ks);
        }
      } else {
        if (ar.succeeded() || ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
          // Its handler answered a request sent after the node's last refusal: it takes requests
          // again (a ferry deployed again under its id, which the view may never show), so its
          // keys stop waiting a pause before each send. One sent before that refusal tells nothing.
          unreachable.answered(s.target, s.sentAt);
        }
        if (Router.mayHaveApplied(ar) && r.seq > ks.mayHaveApplied) {
          // Sent after the key's requests that came back not delivered (a node's consumer can be
          // missing for one request and there for the next: a ferry deployed again under its id,
          // a join whose registration reached this event bus late): those are never sent again.
          ks.mayHaveApplied = r.seq;
          overtakeWaiting(ks, s.target);
        }
        long forMs = ar.succeeded() ? -1 : Router.givenUpForMs(ar.cause());
        if (forMs > 0) {
          // Given up by a leave while it may still be held further on: the key's later requests
          // wait until that is over (counted from now, after the answer's trip: never shorter),
          // but never longer than this request's own send could have lasted (every hold on its
          // way ends before its sender gives up, ADR 0109), whatever number a peer sent.
          long waitMs = Math.min(forMs, s.sendTimeoutMs);
          // Saturated: a send timeout near the top of a long would wrap into the past.
          ks.givenUpUntil = Math.max(ks.givenUpUntil, Deadlines.after(loop.nanoTime(), TimeUnit.MILLISECONDS.toNanos(waitMs)));
          givenUpWait(ks); // its timer ends the wait, and forgets the key if nothing else came
        }
        effects.add(() -> answer(r.answer, ar));
      }
      sendWaiting(ks, false);
    });
  }

  /**
   * Closes (ADR 0136): from now on a request is answered CLOSED and nothing is sent. Requests
   * waiting to be sent (for a view, after a NO_HANDLERS, behind a give-up) are answered CLOSED now,
   * never sent; those on the wire get their own answer when it comes, since they may have been
   * applied. A second close does nothing.
   */
  public void close() {
    step(() -> {
      if (closed) {
        return;
      }
      closed = true;
      for (KeyState ks : List.copyOf(keys.values())) {
        for (Request r = ks.waiting.poll(); r != null; r = ks.waiting.poll()) {
          cancelWait(r);
          fail(r, new FerryException(FerryError.CLOSED, CLOSED_TEXT));
        }
        // Nothing of the key will be sent again: no retry, and no later request to keep behind one
        // given up. Keys with requests on the wire stay until those are answered.
        cancelTimers(ks);
        ks.givenUpUntil = 0;
        forget(ks);
      }
    });
  }

  /**
   * Closes because the client's Vert.x (or the verticle it was made in) is closing: as {@link
   * #close}, and the requests on the wire are answered FAILED now, "may or may not have been
   * applied", since their replies and send timeouts go with the event bus (Vert.x fails no pending
   * request when it closes: they would never be answered). A reply that still comes first wins.
   */
  public void abandon() {
    close();
    step(() -> {
      for (Send s : onTheWire) {
        fail(s.request, new FerryException(FerryError.FAILED, "the routing client's Vert.x closed before the reply"
            + " came from " + s.target + ": the input may or may not have been applied"));
      }
    });
  }

  /** Requests sent and not answered yet. */
  public int onTheWire() {
    return onTheWire.size();
  }

  /** Whether {@link #close} was called. */
  public boolean closed() {
    return closed;
  }

  /** What a request that the closed client never sent is answered, CLOSED. */
  static final String CLOSED_TEXT = "the routing client is closed: nothing was sent";

  // ---------------------------------------------------------------- inside transitions

  /**
   * The answer of a send that was on the wire when the client closed: the caller's own, but for a
   * NO_HANDLERS (never delivered), which the closed client does not send again: CLOSED.
   */
  private void sentAfterClose(KeyState ks, Send s, AsyncResult<Object> ar) {
    if (!ar.succeeded() && ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS) {
      fail(s.request, new FerryException(FerryError.CLOSED, "not delivered to " + s.target
          + ", and the routing client closed before it could send it again: never applied", re));
    } else {
      effects.add(() -> answer(s.request.answer, ar)); // already answered if abandoned: the first stands
    }
    forget(ks);
  }

  private String owner(String key) {
    return known ? Rendezvous.owner(key, routable) : null;
  }

  private List<String> routable() {
    List<String> r = new ArrayList<>(view);
    r.removeAll(leaving.keySet());
    return List.copyOf(r);
  }

  private void send(KeyState ks, String target, Request r) {
    long now = loop.nanoTime();
    if (now >= r.inputDeadline) {
      fail(r, new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent"));
      return;
    }
    if (now >= r.replyDeadline) {
      fail(r, new FerryException(FerryError.CLOSED, "no node of the cluster took the input before the send timeout"));
      return;
    }
    long timeoutMs = r.inputDeadline == Long.MAX_VALUE ? 0 : Math.max(1, (r.inputDeadline - now) / 1_000_000);
    long sendTimeoutMs = Math.max(1, (r.replyDeadline - now) / 1_000_000);
    ks.target = target;
    ks.inFlight++;
    Send s = new Send(target, r, timeoutMs, sendTimeoutMs, now);
    onTheWire.add(s);
    effects.add(() -> links.send(s));
  }

  /** Queues {@code r} among the key's waiting requests, in the order they were submitted. */
  private void wait(KeyState ks, Request r) {
    if (ks.waiting.isEmpty() || ks.waiting.peekLast().seq < r.seq) {
      ks.waiting.addLast(r);
    } else {
      List<Request> all = new ArrayList<>(ks.waiting);
      int i = 0;
      while (i < all.size() && all.get(i).seq < r.seq) {
        i++;
      }
      all.add(i, r);
      ks.waiting.clear();
      ks.waiting.addAll(all);
    }
    long deadline = Math.min(r.inputDeadline, r.replyDeadline);
    r.timer = loop.schedule(Math.max(1, deadline - loop.nanoTime()), () -> step(() -> {
      r.timer = -1;
      if (ks.waiting.remove(r)) {
        fail(r, loop.nanoTime() >= r.inputDeadline
            ? new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent")
            : new FerryException(FerryError.CLOSED, "no node of the cluster took the input before the send timeout"));
        forget(ks);
      }
    }));
  }

  private void retryLater(KeyState ks) {
    if (ks.retryTimer < 0) {
      ks.retryTimer = loop.schedule(Router.RETRY_MS * 1_000_000, () -> step(() -> {
        ks.retryTimer = -1;
        sendWaiting(ks, true);
      }));
    }
  }

  /**
   * Sends the key's waiting requests, in order, once none is in flight, to the owner by the
   * current view; {@code anyway} after a pause even to a node that refused one before.
   */
  private void sendWaiting(KeyState ks, boolean anyway) {
    if (ks.inFlight == 0 && !ks.waiting.isEmpty() && !givenUpWait(ks)) {
      String owner = owner(ks.key);
      if (owner == null) {
        return; // no node serves: wait for a view, within each request's deadline
      }
      if (!anyway && unreachable.contains(owner)) {
        retryLater(ks);
        return;
      }
      for (Request r = ks.waiting.poll(); r != null; r = ks.waiting.poll()) {
        cancelWait(r);
        send(ks, owner, r);
      }
    }
    forget(ks);
  }

  /**
   * Whether the key's requests wait for one given up by a leave ({@link KeyState#givenUpUntil});
   * if so, they are sent when that wait ends.
   */
  private boolean givenUpWait(KeyState ks) {
    long now = loop.nanoTime();
    if (ks.givenUpUntil <= now) {
      ks.givenUpUntil = 0;
      return false;
    }
    if (ks.givenUpTimer < 0) {
      ks.givenUpTimer = loop.schedule(ks.givenUpUntil - now, () -> step(() -> {
        ks.givenUpTimer = -1;
        sendWaiting(ks, false);
      }));
    }
    return true;
  }

  /**
   * Answers CLOSED, never applied, each of the key's waiting requests placed before {@link
   * KeyState#mayHaveApplied}: only requests that came back not delivered can be (a submitted one
   * waits behind the key's others).
   */
  private void overtakeWaiting(KeyState ks, String target) {
    for (Iterator<Request> it = ks.waiting.iterator(); it.hasNext(); ) {
      Request w = it.next();
      if (w.seq < ks.mayHaveApplied) {
        it.remove();
        cancelWait(w);
        fail(w, overtaken(target));
      }
    }
  }

  private static FerryException overtaken(String target) {
    return new FerryException(FerryError.CLOSED, Router.OVERTAKEN + " of the key, sent to " + target
        + " after this one, may have been applied before this one could be sent again");
  }

  /** Cancels the timer of a request taken out of its key's waiting requests, if set. */
  private void cancelWait(Request r) {
    if (r.timer >= 0) {
      loop.cancel(r.timer);
      r.timer = -1;
    }
  }

  /** Cancels the key's retry and give-up timers, if set. */
  private void cancelTimers(KeyState ks) {
    if (ks.retryTimer >= 0) {
      loop.cancel(ks.retryTimer);
      ks.retryTimer = -1;
    }
    if (ks.givenUpTimer >= 0) {
      loop.cancel(ks.givenUpTimer);
      ks.givenUpTimer = -1;
    }
  }

  private void forget(KeyState ks) {
    if (ks.inFlight == 0 && ks.waiting.isEmpty() && ks.givenUpUntil <= loop.nanoTime()) {
      cancelTimers(ks);
      keys.remove(ks.key, ks);
    }
  }

  private void fail(Request r, Throwable failure) {
    effects.add(() -> answer(r.answer, io.vertx.core.Future.failedFuture(failure)));
  }

  /**
   * Answers a caller unless it was answered already, shielded as the ferries answer theirs (ADR
   * 0122): a caller off Vert.x threads has a promise with no context, whose callbacks run inline
   * here and whose throw Vert.x lets out. Let out, it ended the step's effects halfway: the other
   * callers answered in that step, and its sends, waited for some later step.
   */
  private void answer(Promise<Object> answer, AsyncResult<Object> ar) {
    try {
      if (ar.succeeded()) {
        answer.tryComplete(ar.result());
      } else {
        answer.tryFail(ar.cause());
      }
    } catch (Throwable callbackThrew) {
      loop.report(callbackThrew);
    }
  }

  private void step(Runnable transition) {
    assert loop.inLoop() : "a routing client runs on its loop only";
    effects.step(transition);
  }

}
