package dev.ferry.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The guide's examples, run over real HTTP. */
@ExtendWith(VertxExtension.class)
class ExamplesTest {

  @Test
  void userLookupAnswersEachRequestAndFetchesEachIdOncePerQuery(Vertx vertx, VertxTestContext test) {
    List<List<String>> queries = new CopyOnWriteArrayList<>();
    UserLookupVerticle verticle = new UserLookupVerticle(ids -> {
      queries.add(List.copyOf(ids));
      Map<String, JsonObject> found = new HashMap<>();
      ids.stream().filter(id -> !id.equals("nobody"))
          .forEach(id -> found.put(id, new JsonObject().put("id", id).put("name", "user " + id)));
      return Future.succeededFuture(found);
    });
    // Referenced until the end (the last handler closes it): a Vert.x 5 client nobody references
    // is shut down when the garbage collector finds it, mid-request (eclipse-vertx/vert.x#5577).
    WebClient client = WebClient.create(vertx);
    vertx.deployVerticle(verticle).compose(d -> {
      List<Future<HttpResponse<io.vertx.core.buffer.Buffer>>> replies = new ArrayList<>();
      for (String id : List.of("1", "2", "1", "nobody", "2", "1")) {
        replies.add(client.get(verticle.port(), "localhost", "/users/" + id).send());
      }
      return Future.all(replies).map(all -> replies);
    }).onComplete(test.succeeding(replies -> test.verify(() -> {
      List<String> ids = List.of("1", "2", "1", "nobody", "2", "1");
      for (int i = 0; i < ids.size(); i++) {
        HttpResponse<?> r = replies.get(i).result();
        if (ids.get(i).equals("nobody")) {
          assertEquals(404, r.statusCode());
        } else {
          assertEquals(200, r.statusCode());
          assertEquals("user " + ids.get(i), r.bodyAsJsonObject().getString("name"));
        }
      }
      for (List<String> q : queries) {
        assertEquals(new HashSet<>(q).size(), q.size(), "an id twice in one query: " + q);
      }
      client.close();
      test.completeNow();
    })));
  }

  @Test
  void eventAppendGivesEachCallerItsOwnOffset(Vertx vertx, VertxTestContext test) {
    AtomicLong next = new AtomicLong();
    EventAppendVerticle verticle = new EventAppendVerticle(events -> {
      Map<String, Long> offsets = new HashMap<>();
      events.forEach(e -> offsets.put(e.getString("id"), next.getAndIncrement()));
      return Future.succeededFuture(offsets);
    });
    // Referenced until the end (the last handler closes it): a Vert.x 5 client nobody references
    // is shut down when the garbage collector finds it, mid-request (eclipse-vertx/vert.x#5577).
    WebClient client = WebClient.create(vertx);
    vertx.deployVerticle(verticle).compose(d -> {
      List<Future<HttpResponse<io.vertx.core.buffer.Buffer>>> replies = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        replies.add(client.post(verticle.port(), "localhost", "/events")
            .sendJsonObject(new JsonObject().put("id", "e" + i)));
      }
      replies.add(client.post(verticle.port(), "localhost", "/events").sendJsonObject(new JsonObject()));
      return Future.all(replies).map(all -> replies);
    }).onComplete(test.succeeding(replies -> test.verify(() -> {
      HashSet<Long> offsets = new HashSet<>();
      for (int i = 0; i < 8; i++) {
        HttpResponse<?> r = replies.get(i).result();
        assertEquals(200, r.statusCode());
        offsets.add(r.bodyAsJsonObject().getLong("offset"));
      }
      assertEquals(8, offsets.size(), "every event has its own offset");
      assertTrue(offsets.stream().allMatch(o -> o >= 0 && o < 8));
      assertEquals(400, replies.get(8).result().statusCode());
      client.close();
      test.completeNow();
    })));
  }
}
