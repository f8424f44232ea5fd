package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.downstream.Downstream;
import dev.ferry.downstream.OutgoingBatch;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A batch handed to a downstream that cannot write it yet (an HTTP batch waiting for a pooled
 * connection): its inputs' deadlines still hold. Driven through a downstream that keeps the batch
 * unsealed until the test lets it write.
 */
@ExtendWith(VertxExtension.class)
class BatchOutcomesTest {

  /** Keeps each batch until {@link #write} seals it, as a pool would until a connection is free. */
  private static final class WaitingDownstream implements Downstream {
    OutgoingBatch batch;
    final Promise<JsonArray> answer = Promise.promise();
    JsonObject written;

    @Override
    public Future<JsonArray> call(OutgoingBatch batch) {
      this.batch = batch;
      return answer.future();
    }

    void write() {
      written = batch.seal();
      JsonArray outcomes = new JsonArray();
      for (int i = 0; i < batch.sealedSize(); i++) {
        outcomes.add(new JsonObject().put("ok", written.getJsonArray("inputs").getJsonObject(i).getValue("input")));
      }
      answer.complete(outcomes);
    }
  }

  private static Submission input(String body, String timeoutMs) throws Submission.BadInput {
    MultiMap headers = MultiMap.caseInsensitiveMultiMap().add("key", "k");
    if (timeoutMs != null) {
      headers.add("timeout-ms", timeoutMs);
    }
    return Submission.parse(headers, body);
  }

  @Test
  void anInputWhoseDeadlinePassesBeforeItsBatchIsWrittenGets504ThenAndIsLeftOut(Vertx vertx) throws Exception {
    WaitingDownstream downstream = new WaitingDownstream();
    CompletableFuture<Throwable> lateAnswer = new CompletableFuture<>();
    CompletableFuture<Future<JsonArray>> call = new CompletableFuture<>();
    CompletableFuture<Submission[]> inputs = new CompletableFuture<>();
    vertx.runOnContext(v -> {
      try {
        Submission late = input("late", "50").answerTo((value, failure) -> lateAnswer.complete(failure));
        Submission patient = input("patient", null);
        inputs.complete(new Submission[] {late, patient});
        call.complete(BatchOutcomes.call(vertx, downstream, "k", List.of(late, patient), () -> { }));
      } catch (Submission.BadInput e) {
        call.completeExceptionally(e);
      }
    });
    // Answered at its deadline, while the batch still waits to be written.
    Throwable t = lateAnswer.get(10, TimeUnit.SECONDS);
    assertTrue(t instanceof FerryException e && e.kind() == FerryError.TIMEOUT, "not a TIMEOUT: " + t);
    assertNull(downstream.written);
    // Written later: the request carries only the input whose caller still waits.
    CompletableFuture<JsonArray> outcomes = new CompletableFuture<>();
    vertx.runOnContext(v -> {
      downstream.write();
      call.join().onComplete(ar -> outcomes.complete(ar.result()));
    });
    assertEquals(new JsonArray().add(new JsonObject().put("ok", "patient")), outcomes.get(10, TimeUnit.SECONDS));
    assertEquals(new JsonObject().put("key", "k").put("inputs", new JsonArray()
        .add(new JsonObject().put("id", null).put("input", "patient"))), downstream.written);
    Submission[] both = inputs.join();
    // The engine still delivers both outcomes; the late one's is TIMEOUT and never reaches its caller twice.
    FerryException e = org.junit.jupiter.api.Assertions.assertThrows(FerryException.class,
        () -> BatchOutcomes.extract(both[0], outcomes.join()));
    assertEquals(FerryError.TIMEOUT, e.kind());
    assertEquals("patient", BatchOutcomes.extract(both[1], outcomes.join()));
  }
}
