package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.MultiMap;
import org.junit.jupiter.api.Test;

/**
 * Review BG: the submit headers attacked after ADRs 0186 and 0189. {@code ferry-origin}, the one
 * {@code ferry-*} header a client may send, had no bound: clustered, the router keeps its text
 * with the input until it is answered, so small bodies with long origins made a node hold any
 * amount, the hole ADR 0189 closed for the id (ADR 0191). Names in any case are the same header.
 */
class ReviewBgHeadersTest {

  private static String refusal(MultiMap headers) {
    return assertThrows(Submission.BadInput.class, () -> Submission.parseFromClient(headers, 1)).getMessage();
  }

  @Test
  void anOriginOverTheIdsBoundIsRefusedUnderAnySpellingOfItsName() {
    String longOrigin = "o".repeat(Submission.MAX_ID_LENGTH) + "#1";
    for (String name : new String[] {"ferry-origin", "Ferry-Origin", "FERRY-ORIGIN"}) {
      assertEquals("the \"ferry-origin\" header is " + longOrigin.length() + " characters long: at most "
          + Submission.MAX_ID_LENGTH + " are accepted (a routing client's is under 64)",
          refusal(MultiMap.caseInsensitiveMultiMap().add("key", "k").add(name, longOrigin)), name);
    }
  }

  @Test
  void anOriginWithinTheBoundAndTheSameKeyGivenTwiceInTwoCasesAreTaken() throws Exception {
    String origin = "o".repeat(Submission.MAX_ID_LENGTH - 2) + "#1";
    Submission.parseFromClient(MultiMap.caseInsensitiveMultiMap().add("key", "k").add("ferry-origin", origin), 1);
    Submission s = Submission.parseFromClient(MultiMap.caseInsensitiveMultiMap().add("Key", "a").add("key", "a"), 1);
    assertEquals("a", s.key);
    assertEquals("a", Submission.parseFromClient(MultiMap.caseInsensitiveMultiMap().add("KEY", "a"), 1).key);
  }
}
