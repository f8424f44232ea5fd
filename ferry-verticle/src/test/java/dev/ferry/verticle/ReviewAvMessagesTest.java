package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.downstream.JsonWalk;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * Review AV: review AT named a Buffer as the user knows it, not by Vert.x's BufferImpl; other
 * Vert.x values a user may hand in by mistake were still named by their implementation classes,
 * which live in Vert.x's impl and internal packages and no user wrote (ADR 0178).
 */
class ReviewAvMessagesTest {

  /** A MultiMap (headers, say) as a body: "got HeadersMultiMap", a class of io.vertx.core.http.impl. */
  @Test
  void aVertxValueAsABodyIsNamedByItsPublicType() {
    String message = Submission.notJson(MultiMap.caseInsensitiveMultiMap());
    assertTrue(message.endsWith("got MultiMap"), message);
    assertTrue(Submission.notJson(Buffer.buffer("x")).endsWith("got Buffer"), "as review AT had it");
  }

  /** A Future put into a JSON body by mistake: "a value of type SucceededFuture", an impl class. */
  @Test
  void aVertxValueInsideABodyIsNamedByItsPublicType() {
    String message = Submission.notJson(new JsonObject().put("total", Future.succeededFuture(1)));
    assertTrue(message.contains("a value of type Future,"), message);
    assertFalse(message.contains("Succeeded") || message.contains("Impl"), message);
  }

  /** A type of the user's own, or of the JDK, keeps its simple name; an anonymous one its full name. */
  @Test
  void otherTypesKeepTheirNames() {
    assertEquals("StringBuilder", JsonWalk.typeName(new StringBuilder()));
    assertEquals("ReviewAvMessagesTest", JsonWalk.typeName(this));
    Object anonymous = new Object() { };
    assertEquals(anonymous.getClass().getName(), JsonWalk.typeName(anonymous));
  }
}
