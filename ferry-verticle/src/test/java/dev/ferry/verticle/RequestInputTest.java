package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An input's {@code {"id", "input"}} object in a batch request is a plain JSON object to whoever
 * receives it: the same lookups, encoding, copy and equality as one built with {@code put}, and a
 * downstream in this JVM may change it like any {@code JsonObject}.
 */
class RequestInputTest {

  private static JsonObject wrapped(String id, Object body) throws Exception {
    MultiMap headers = MultiMap.caseInsensitiveMultiMap().add("key", "k");
    if (id != null) {
      headers.add("id", id);
    }
    return Submission.parse(headers, body).toRequestInput();
  }

  @Test
  void readsEncodesCopiesAndComparesLikeAnOrdinaryObject() throws Exception {
    JsonObject body = new JsonObject().put("amount", 5);
    JsonObject w = wrapped("i-1", body);
    JsonObject plain = new JsonObject().put("id", "i-1").put("input", body);
    assertEquals("i-1", w.getString("id"));
    assertEquals(body, w.getJsonObject("input"));
    assertTrue(w.containsKey("id") && w.containsKey("input") && !w.containsKey("other"));
    assertNull(w.getValue("other"));
    assertEquals(2, w.size());
    assertEquals("{\"id\":\"i-1\",\"input\":{\"amount\":5}}", w.encode());
    assertEquals(plain, w);
    assertEquals(plain, w.copy());
    assertEquals(plain.hashCode(), w.hashCode());
    assertEquals(List.of("id", "input"), List.copyOf(w.fieldNames()));
    // Inside a request, as a downstream receives it.
    JsonObject request = new JsonObject().put("key", "k").put("inputs", new JsonArray().add(w));
    assertEquals(new JsonObject(request.encode()), request);
  }

  @Test
  void aMissingIdIsJsonNullAndTheObjectCanBeChanged() throws Exception {
    JsonObject w = wrapped(null, 7);
    assertTrue(w.containsKey("id"));
    assertNull(w.getString("id"));
    assertEquals("{\"id\":null,\"input\":7}", w.encode());
    w.put("seen", true).remove("id");
    assertEquals(new JsonObject().put("input", 7).put("seen", true), w);
    assertFalse(w.containsKey("id"));
    assertEquals("{\"input\":7,\"seen\":true}", w.encode());
    w.clear();
    assertTrue(w.isEmpty());
  }
}
