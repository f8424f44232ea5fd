package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.downstream.DownstreamException;
import dev.ferry.downstream.Outcomes;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * Reading a request's headers in one pass, and a caller's outcome in one lookup, keep the
 * submit protocol's meaning: header names in any ASCII case, the first value of a repeated name,
 * no header mistaken for another; an outcome is {@code ok} (null included) or its {@code error}.
 */
class SubmissionTest {

  @Test
  void headersAreReadInAnyCaseAndTheFirstValueOfANameCounts() throws Exception {
    MultiMap headers = MultiMap.caseInsensitiveMultiMap()
        .add("Key", "k1").add("KEY", "k2").add("ID", "i-1").add("Timeout-MS", "250").add("oRdEr", "7")
        .add("keys", "not-the-key").add("x-other", "ignored");
    Submission s = Submission.parse(headers, 1);
    assertEquals("k1", s.key);
    assertEquals("i-1", s.id);
    assertEquals(250, s.timeoutMs);
    assertEquals(7, s.order);
    assertTrue(s.deadline != Long.MAX_VALUE);
  }

  @Test
  void onlyTheKeyIsNeeded() throws Exception {
    Submission s = Submission.parse(MultiMap.caseInsensitiveMultiMap().add("key", "k"), "body");
    assertEquals("k", s.key);
    assertNull(s.id);
    assertEquals(0, s.timeoutMs);
    assertEquals(Long.MAX_VALUE, s.order);
    assertEquals(Long.MAX_VALUE, s.deadline);
  }

  @Test
  void aMissingKeyOrABadNumberIsBadInput() {
    assertThrows(Submission.BadInput.class,
        () -> Submission.parse(MultiMap.caseInsensitiveMultiMap().add("id", "k"), 1));
    assertThrows(Submission.BadInput.class,
        () -> Submission.parse(MultiMap.caseInsensitiveMultiMap().add("key", ""), 1));
    assertThrows(Submission.BadInput.class,
        () -> Submission.parse(MultiMap.caseInsensitiveMultiMap().add("key", "k").add("timeout-ms", "soon"), 1));
    assertThrows(Submission.BadInput.class,
        () -> Submission.parse(MultiMap.caseInsensitiveMultiMap().add("key", "k").add("order", "first"), 1));
  }

  @Test
  void eachCallerGetsItsOwnOkValueNullIncludedOrItsError() throws Exception {
    JsonArray outcomes = Outcomes.validate(new JsonObject().put("outcomes", new JsonArray()
        .add(new JsonObject().put("ok", "a"))
        .add(new JsonObject().put("ok", null))
        .add(new JsonObject().put("error", "no funds"))
        .add(new JsonObject().put("ok", 4).put("took", 3))), 4);
    Submission[] inputs = new Submission[4];
    for (int i = 0; i < 4; i++) {
      inputs[i] = Submission.parse(MultiMap.caseInsensitiveMultiMap().add("key", "k"), i);
      inputs[i].slot = i;
    }
    assertEquals("a", BatchOutcomes.extract(inputs[0], outcomes));
    assertNull(BatchOutcomes.extract(inputs[1], outcomes));
    FerryException rejected = assertThrows(FerryException.class, () -> BatchOutcomes.extract(inputs[2], outcomes));
    assertEquals(FerryError.INPUT_REJECTED, rejected.kind());
    assertEquals(4, BatchOutcomes.extract(inputs[3], outcomes));
  }

  @Test
  void anOutcomeWithBothOrNeitherIsStillMalformed() {
    assertThrows(DownstreamException.class, () -> Outcomes.validate(new JsonObject().put("outcomes",
        new JsonArray().add(new JsonObject().put("ok", 1).put("error", "x"))), 1));
    assertThrows(DownstreamException.class, () -> Outcomes.validate(new JsonObject().put("outcomes",
        new JsonArray().add(new JsonObject().put("took", 1))), 1));
    assertThrows(DownstreamException.class, () -> Outcomes.validate(new JsonObject().put("outcomes",
        new JsonArray().add(new JsonObject().put("error", 5))), 1));
  }
}
