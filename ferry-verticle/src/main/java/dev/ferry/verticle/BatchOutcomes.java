package dev.ferry.verticle;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.downstream.Downstream;
import dev.ferry.downstream.OutgoingBatch;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * Turns one key's batch of {@link Submission}s into a downstream call, and the validated outcomes
 * back into each caller's result. Runs on the verticle's event loop.
 *
 * <p>An input leaves its lane when its batch is handed to the downstream, but it is sent only when
 * the downstream writes the request (an HTTP batch may first wait for a pooled connection). Until
 * then its caller's deadline still holds: the batch arms one timer for its earliest deadline, and
 * answers 504 to each input whose deadline passes before the request is sealed; sealing leaves
 * those inputs out (docs/adr/0062-deadline-holds-until-written.md).
 */
public final class BatchOutcomes {
  private BatchOutcomes() {}

  /**
   * Calls the downstream with {@code batch}; the request is built when the downstream seals it.
   * {@code timedOut} runs once for each input answered 504 before then (the ferry counts it).
   */
  public static Future<JsonArray> call(Vertx vertx, Downstream downstream, String key, List<Submission> batch,
      Runnable timedOut) {
    Outgoing outgoing = new Outgoing(vertx, key, batch, timedOut);
    Future<JsonArray> outcomes = downstream.call(outgoing);
    if (!outgoing.sealed && outgoing.earliestDeadline() != Long.MAX_VALUE && !outcomes.isComplete()) {
      outgoing.armExpiry();
      outcomes.onComplete(ar -> outgoing.disarm());
    }
    return outcomes;
  }

  /**
   * The caller's own outcome: the {@code ok} value, or a {@link FerryException} INPUT_REJECTED
   * with the downstream's reason (which fails only this caller); TIMEOUT for an input left out of
   * the request because its deadline passed first, or because its body could not be encoded (its
   * caller was answered then, 504 or 400, and this answer is dropped).
   */
  public static Object extract(Submission input, JsonArray outcomes) {
    if (input.slot < 0) {
      throw new FerryException(FerryError.TIMEOUT, "the caller's deadline passed before the input was sent");
    }
    JsonObject outcome = outcomes.getJsonObject(input.slot);
    // Validated (Outcomes.validate): exactly one of "ok" and a string "error", so a non-null "ok"
    // settles it in one lookup; only a null one needs the second.
    Object ok = outcome.getValue("ok");
    if (ok != null || !outcome.containsKey("error")) {
      return ok;
    }
    String reason = outcome.getString("error");
    // An empty reason reached the caller as a 422 with an empty message, which says nothing in a log
    // line or an exception (ADR 0177): it is said for the downstream instead.
    throw FerryException.inputRejected(reason.isEmpty() ? NO_REASON : reason);
  }

  /** A 422's message when the downstream's {@code "error"} was the empty string (ADR 0177). */
  public static final String NO_REASON = "the downstream rejected this input and gave no reason (its \"error\" was \"\")";

  /** One batch between its lane and the wire. */
  private static final class Outgoing implements OutgoingBatch {
    private final Vertx vertx;
    private final String key;
    private final List<Submission> inputs;
    private final Runnable timedOut;
    private final long earliest;
    private boolean sealed;
    private int sealedSize;
    private long timer = -1;

    Outgoing(Vertx vertx, String key, List<Submission> inputs, Runnable timedOut) {
      this.vertx = vertx;
      this.key = key;
      this.inputs = inputs;
      this.timedOut = timedOut;
      long e = Long.MAX_VALUE;
      for (int i = 0; i < inputs.size(); i++) {
        e = Math.min(e, inputs.get(i).deadline);
      }
      this.earliest = e;
    }

    @Override
    public String key() {
      return key;
    }

    @Override
    public long earliestDeadline() {
      return earliest;
    }

    @Override
    public JsonObject seal() {
      if (sealed) {
        throw new IllegalStateException("a batch is sealed once");
      }
      sealed = true;
      disarm();
      boolean deadlines = earliest != Long.MAX_VALUE;
      long now = deadlines ? System.nanoTime() : 0;
      JsonArray request = new JsonArray(new java.util.ArrayList<>(inputs.size()));
      for (int i = 0; i < inputs.size(); i++) {
        Submission s = inputs.get(i);
        if (deadlines && s.expiredAt(now)) {
          expire(s); // no-op if the expiry timer answered it already
          continue;
        }
        s.slot = request.size();
        request.add(s.toRequestInput());
      }
      sealedSize = request.size();
      return sealedSize == 0 ? null : Downstream.request(key, request);
    }

    @Override
    public int sealedSize() {
      return sealedSize;
    }

    @Override
    public Buffer sealEncoded() {
      JsonObject request = seal();
      if (request == null) {
        return null;
      }
      try {
        return request.toBuffer();
      } catch (RuntimeException unencodable) {
        return withoutUnencodable();
      }
    }

    /**
     * The sealed request again, without each input whose body JSON cannot encode (deeper than
     * Jackson's nesting bound, or holding a value of no JSON type): those callers get 400 now, as
     * bad input, and are never sent; the rest of the batch goes as usual. Only after the whole
     * request failed to encode, so a batch that encodes costs one encoding, as before. Bodies are
     * checked whole on arrival (ADR 0128): this finds one changed since by a sender that kept it.
     */
    private Buffer withoutUnencodable() {
      JsonArray kept = new JsonArray(new java.util.ArrayList<>(sealedSize));
      for (int i = 0; i < inputs.size(); i++) {
        Submission s = inputs.get(i);
        if (s.slot < 0) {
          continue; // left out by seal(): its deadline had passed
        }
        JsonObject one = s.toRequestInput();
        try {
          // Inside a request of its own: the same nesting as in the batch's.
          Downstream.request(key, new JsonArray().add(one)).toBuffer();
        } catch (RuntimeException e) {
          s.slot = -1;
          s.reject(Submission.UNENCODABLE + e.getMessage());
          continue;
        }
        s.slot = kept.size();
        kept.add(one);
      }
      sealedSize = kept.size();
      return sealedSize == 0 ? null : Downstream.request(key, kept).toBuffer();
    }

    /** Answers 504, at its deadline, each input still unsent; one timer at a time, for the earliest. */
    void armExpiry() {
      long now = System.nanoTime();
      long next = Long.MAX_VALUE;
      for (int i = 0; i < inputs.size(); i++) {
        Submission s = inputs.get(i);
        if (s.expiredAt(now)) {
          expire(s);
        } else {
          next = Math.min(next, s.deadline);
        }
      }
      if (next != Long.MAX_VALUE) {
        // Round up to whole ms: a deadline is never reported early.
        long ms = Math.max(1, (next - now + 999_999) / 1_000_000);
        timer = vertx.setTimer(ms, t -> {
          timer = -1;
          if (!sealed) {
            armExpiry();
          }
        });
      }
    }

    /** Answers {@code s} 504, counting it once (timedOut), as the ferry counts the inputs it drops. */
    private void expire(Submission s) {
      if (s.expire()) {
        timedOut.run();
      }
    }

    void disarm() {
      if (timer != -1) {
        vertx.cancelTimer(timer);
        timer = -1;
      }
    }
  }
}
