package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review N: the {@code order} header at the edge of its range. The guide: with {@code "order":
 * "header"} a key's waiting inputs leave in ascending order, ties in arrival order, and inputs
 * without the header go after those with it.
 */
class ReviewNOrderTest extends VerticleTestBase {

  @Test
  void anInputOrderedLongMaxValueStillGoesBeforeOnesWithoutAnOrder() {
    // An input without the header was given the order Long.MAX_VALUE, so one that carries that
    // value (a whole number the header accepts) tied with it and, arriving later, left after it:
    // an unordered input went first.
    deploy(config(new JsonObject().put("order", "header")));
    send("k", "first", "order", "1");
    EbRecorder.Call direct = await(downstream.call(0));
    send("k", "none");
    send("k", "max", "order", Long.toString(Long.MAX_VALUE));
    send("k", "five", "order", "5");
    assertEquals(3, admitted(4).getInteger("queuedInputs"));
    direct.echo();
    assertEquals(List.of("five", "max", "none"), await(downstream.call(1)).bodies());
  }
}
