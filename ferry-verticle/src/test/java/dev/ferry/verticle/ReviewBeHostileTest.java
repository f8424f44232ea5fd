package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageCodec;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * Review BE: the submit address attacked as a hostile caller would. What each test asserts is what
 * a caller relies on: one clear answer at once for the bad input alone, the inputs around it served
 * as if it had never come, and every accepted input answered exactly once.
 */
class ReviewBeHostileTest extends VerticleTestBase {

  /** Sends {@code body} with {@code options} from the client context; a send that throws is a failed Future. */
  private Future<Message<Object>> sendWith(Object body, DeliveryOptions options) {
    Promise<Message<Object>> reply = Promise.promise();
    client.runOnContext(v -> {
      try {
        vertx.eventBus().<Object>request(SUBMIT, body, options).onComplete(reply);
      } catch (RuntimeException refused) {
        reply.fail(refused);
      }
    });
    return reply.future();
  }

  private static String message400(Future<Message<Object>> reply) {
    Throwable t = failure(reply);
    assertTrue(t instanceof ReplyException r && r.failureCode() == 400, "not a 400: " + t);
    return t.getMessage();
  }

  /** The inputs the downstream was sent, in the order it saw them. */
  private List<Object> sentBodies() {
    List<Object> bodies = new ArrayList<>();
    for (EbRecorder.Call c : downstream.calls()) {
      bodies.addAll(c.bodies());
    }
    return bodies;
  }

  @Test
  void eachBadNumberHeaderIs400AtOnceNamingItsValueAndRangeAndTheKeysOtherInputsAreSent() {
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject().put("order", "header")));
    String[][] cases = {{"timeout-ms", "0"}, {"timeout-ms", "-1"}, {"timeout-ms", "1e3"}, {"timeout-ms", " 5"},
        {"timeout-ms", "+5"}, {"timeout-ms", "\u0665"}, {"timeout-ms", "9223372036854775808"}, {"order", "9223372036854775808"},
        {"order", "0x10"}, {"order", "5 "}, {"order", "\uff15"}};
    List<Future<Message<Object>>> good = new ArrayList<>();
    List<Future<Message<Object>>> bad = new ArrayList<>();
    for (int i = 0; i < cases.length; i++) {
      good.add(send("k", i));
      bad.add(send("k", "bad " + i, cases[i][0], cases[i][1]));
    }
    for (int i = 0; i < cases.length; i++) {
      String message = message400(bad.get(i));
      assertTrue(message.startsWith("the \"" + cases[i][0] + "\" header is \"" + cases[i][1] + "\": must be a whole number"),
          message);
      assertTrue(message.contains(cases[i][0].equals("order") ? ">= -9223372036854775808 and <= 9223372036854775807"
          : ">= 1 and <= 9223372036854"), message);
      assertEquals(i, body(good.get(i)));
    }
    assertFalse(sentBodies().stream().anyMatch(b -> String.valueOf(b).startsWith("bad")), sentBodies().toString());
    assertEquals(cases.length, metrics().getLong("submitted"), "a refused input is never admitted");
  }

  /**
   * Over the TCP bridge a client writes its headers as JSON: a number there reaches the ferry as the
   * bridge writes it in text, and is judged as any header is, its value named in the error frame.
   */
  @Test
  void aBridgeClientsBadNumberHeaderGetsA400FrameNamingTheValueAndTheSocketGoesOn() throws Exception {
    int port = FerryVerticleOpsTest.freePort();
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject().put("bridge", new JsonObject().put("port", port))));
    List<JsonObject> frames = List.of(
        bridgeSend(new JsonObject().put("key", "k").put("timeout-ms", 1000.5), "half", "r-1"),
        bridgeSend(new JsonObject().put("key", "k").put("order", new java.math.BigInteger("9223372036854775808")), "big", "r-2"),
        bridgeSend(new JsonObject().put("key", "k").put("timeout-ms", "0x10"), "hex", "r-3"),
        bridgeSend(new JsonObject().put("key", "k").put("timeout-ms", 2000), "fine", "r-4"));
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      java.io.DataOutputStream out = new java.io.DataOutputStream(socket.getOutputStream());
      java.io.DataInputStream in = new java.io.DataInputStream(socket.getInputStream());
      for (JsonObject frame : frames) {
        byte[] bytes = frame.encode().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
      }
      out.flush();
      List<String> expected = List.of("the \"timeout-ms\" header is \"1000.5\"", "the \"order\" header is \"9223372036854775808\"",
          "the \"timeout-ms\" header is \"0x10\"");
      java.util.Map<String, JsonObject> answers = new java.util.HashMap<>();
      for (int i = 0; i < frames.size(); i++) {
        JsonObject answer = readFrame(in);
        answers.put(answer.getString("address"), answer);
      }
      for (int i = 0; i < expected.size(); i++) {
        JsonObject refused = answers.get("r-" + (i + 1));
        assertEquals("err", refused.getString("type"), refused.encode());
        assertEquals(400, refused.getInteger("failureCode"), refused.encode());
        assertTrue(refused.getString("message").startsWith(expected.get(i) + ": must be a whole number"), refused.encode());
      }
      assertEquals("fine", answers.get("r-4").getValue("body"), answers.get("r-4").encode());
    }
    assertEquals(List.of("fine"), sentBodies());
  }

  @Test
  void oddKeysAreEachRefusedAloneOrServedAsTheirOwnKey() {
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject()));
    String controls = "a\u0000b\r\nc\u001b[31m\u2028";
    String longest = "x".repeat(Submission.MAX_KEY_LENGTH);
    String pair = "\uD83D\uDE00";
    Future<Message<Object>> empty = send("", 1);
    Future<Message<Object>> tooLong = send("x".repeat(Submission.MAX_KEY_LENGTH + 1), 2);
    Future<Message<Object>> lone = send("a\uD800", 3);
    Future<Message<Object>> loneLow = send("\uDC00", 4);
    Future<Message<Object>> absent = send(null, 5);
    Future<Message<Object>> twice = sendWith(6, new DeliveryOptions().addHeader("key", "k").addHeader("key", "j"));
    Future<Message<Object>> ctl = send(controls, 7);
    Future<Message<Object>> max = send(longest, 8);
    Future<Message<Object>> emoji = send(pair, 9);
    Future<Message<Object>> plain = send("k", 10);
    assertEquals("the \"key\" header is missing or empty", message400(empty));
    assertEquals("the \"key\" header is longer than 1024 characters", message400(tooLong));
    assertTrue(message400(lone).startsWith("the \"key\" header holds a lone surrogate at index 1"));
    assertTrue(message400(loneLow).startsWith("the \"key\" header holds a lone surrogate at index 0"));
    assertEquals("the \"key\" header is missing or empty", message400(absent));
    assertEquals("the \"key\" header is given more than once, with different values (\"k\" and \"j\"): give it once",
        message400(twice));
    assertEquals(7, body(ctl));
    assertEquals(8, body(max));
    assertEquals(9, body(emoji));
    assertEquals(10, body(plain));
    Set<String> keys = new HashSet<>();
    for (EbRecorder.Call c : downstream.calls()) {
      keys.add(c.key);
    }
    assertEquals(Set.of(controls, longest, pair, "k"), keys, "each key reached the downstream as it was written");
    assertEquals(4, metrics().getLong("submitted"));
  }

  /**
   * A node holds each waiting input's id, and neither bound sees it (the weight is the body's): an id
   * beyond {@link Submission#MAX_ID_LENGTH} is 400 at once, naming its length and the bound, and a
   * {@link FerryClient} refuses it before sending. One at the bound is served and reaches the
   * downstream as written.
   */
  @Test
  void anIdLongerThanItsBoundIs400AtOnceAndAClientRefusesItBeforeSending() {
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject()));
    String longest = "i".repeat(Submission.MAX_ID_LENGTH);
    Future<Message<Object>> tooLong = send("k", 1, "id", longest + "i");
    Future<Message<Object>> atBound = send("k", 2, "id", longest);
    assertEquals("the \"id\" header is 1025 characters long: at most 1024 are accepted", message400(tooLong));
    assertEquals(2, body(atBound));
    Promise<Object> fromClient = Promise.promise();
    client.runOnContext(v -> FerryClient.create(vertx, SUBMIT)
        .submit("k", 3, new FerryClient.SubmitOptions().id(longest + "ii")).onComplete(fromClient));
    Throwable refused = failure(fromClient.future());
    assertTrue(refused instanceof FerryException f && f.kind() == FerryError.BAD_INPUT, "not BAD_INPUT: " + refused);
    assertEquals("the \"id\" header is 1026 characters long: at most 1024 are accepted", refused.getMessage());
    List<String> ids = new ArrayList<>();
    for (EbRecorder.Call c : downstream.calls()) {
      for (int i = 0; i < c.inputs.size(); i++) {
        ids.add(c.inputs.getJsonObject(i).getString("id"));
      }
    }
    assertEquals(List.of(longest), ids, "only the id at the bound reached the downstream");
  }

  /**
   * An input heavier than the queue's whole weight bound is 429 at once, naming its weight; one
   * heavier than a batch's bound travels alone; a body that is no JSON number is 400. Each alone:
   * the light inputs of the same key are served around them.
   */
  @Test
  void heavyOrNanBodiesAreAnsweredAloneAndTheLightOnesAroundThemAreServed() {
    deploy(config(new JsonObject().put("maxQueuedWeight", 100_000).put("maxBatchWeight", 1_000)));
    String huge = "h".repeat(1 << 20);
    String heavy = "w".repeat(5_000);
    List<Future<Message<Object>>> light = new ArrayList<>();
    light.add(send("k", 1));
    // Held, so that the key is busy and what follows waits (an idle key's input leaves at once,
    // queueing nothing, whatever it weighs).
    EbRecorder.Call held = await(downstream.call(0));
    Future<Message<Object>> tooHeavy = send("k", huge);
    light.add(send("k", 2));
    Future<Message<Object>> alone = send("k", heavy);
    light.add(send("k", 3));
    Future<Message<Object>> nan = send("k", Double.NaN);
    Future<Message<Object>> inf = send("k", new JsonObject().put("x", Double.NEGATIVE_INFINITY));
    light.add(send("k", 4));
    // Each answered at once, while the key's call is still held.
    Throwable rejected = failure(tooHeavy);
    assertTrue(rejected instanceof ReplyException r && r.failureCode() == 429, String.valueOf(rejected));
    assertEquals("this input weighs " + (huge.length() + 2) + ", more than maxQueuedWeight (100000) on its own: it can never wait",
        rejected.getMessage());
    assertTrue(message400(nan).endsWith("got NaN"));
    assertTrue(message400(inf).startsWith("the body cannot be encoded as JSON"));
    downstream.auto(EbRecorder.Call::echo);
    held.echo();
    assertEquals(heavy, body(alone));
    for (int i = 0; i < light.size(); i++) {
      assertEquals(i + 1, body(light.get(i)));
    }
    for (EbRecorder.Call c : downstream.calls()) {
      assertTrue(!c.bodies().contains(heavy) || c.bodies().size() == 1, "the heavy input travels alone: " + c.bodies());
      assertFalse(c.bodies().contains(huge));
    }
    JsonObject m = metrics();
    assertEquals(6, m.getLong("submitted"), "the 429 reached the ferry, the 400s did not");
    assertEquals(1, m.getLong("rejected"));
  }

  /** A publish is dropped (nobody to answer); a request right after it is served, and nothing was sent for it. */
  @Test
  void aPublishIsDroppedAndTheNextRequestIsServed() {
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject()));
    client.runOnContext(v -> vertx.eventBus().publish(SUBMIT, "published", new DeliveryOptions().addHeader("key", "k")));
    assertEquals("requested", body(send("k", "requested")));
    assertEquals(List.of("requested"), sentBodies());
    assertEquals(1, metrics().getLong("submitted"));
  }

  /**
   * The caller gave up before its answer came (its own send timeout passed): the ferry's reply goes
   * to an address nobody listens at any more, and is lost without disturbing anything. Both for an
   * outcome and for a failure (a 502).
   */
  @Test
  void aReplyToACallerThatIsGoneIsDroppedAndTheKeyGoesOn() {
    deploy(config(new JsonObject()));
    Future<Message<Object>> impatient = sendWith(1, new DeliveryOptions().addHeader("key", "k").setSendTimeout(200));
    EbRecorder.Call first = await(downstream.call(0));
    Throwable gone = failure(impatient);
    assertTrue(gone instanceof ReplyException r && r.failureType() == ReplyFailure.TIMEOUT, String.valueOf(gone));
    first.echo(); // answered only now: the outcome goes to a reply address that is gone
    Future<Message<Object>> impatientToo = sendWith(2, new DeliveryOptions().addHeader("key", "j").setSendTimeout(200));
    EbRecorder.Call second = await(downstream.call(1));
    gone = failure(impatientToo);
    assertTrue(gone instanceof ReplyException r && r.failureType() == ReplyFailure.TIMEOUT, String.valueOf(gone));
    second.fail(500, "down"); // and so does the 502
    downstream.auto(EbRecorder.Call::echo);
    assertEquals(3, body(send("k", 3)));
    assertEquals(4, body(send("j", 4)));
    JsonObject m = metrics();
    assertEquals(4, m.getLong("submitted"));
    assertEquals(0, m.getLong("queuedInputs"));
  }

  /** A body whose codec only its sender knows: not JSON, 400 naming its type; a codec nobody registered never leaves the sender. */
  @Test
  void aBodyOfACodecFerryDoesNotKnowIs400AndAnUnknownCodecNameNeverLeavesTheSender() {
    downstream.auto(EbRecorder.Call::echo);
    deploy(config(new JsonObject()));
    vertx.eventBus().registerCodec(new PojoCodec());
    String message = message400(sendWith(new Pojo(), new DeliveryOptions().addHeader("key", "k").setCodecName(PojoCodec.NAME)));
    assertTrue(message.startsWith("the body must be a JSON value"), message);
    assertTrue(message.endsWith("got " + Pojo.class.getName()) || message.endsWith("got Pojo"), message);
    Throwable unknown = failure(sendWith(new JsonObject(), new DeliveryOptions().addHeader("key", "k").setCodecName("no-such-codec")));
    assertTrue(unknown instanceof IllegalArgumentException, "Vert.x refuses it at the sender: " + unknown);
    assertEquals("after", body(send("k", "after")));
    assertEquals(List.of("after"), sentBodies());
  }

  /**
   * Submits from two threads while the verticle undeploys: every request is answered once, with its
   * outcome (sent exactly once) or with 503 or no-handlers (never sent); none is left waiting.
   */
  @Test
  void submitsDuringAnUndeployAreEachAnsweredOnceSentAtMostOnce() throws Exception {
    downstream.auto(EbRecorder.Call::echo);
    String id = deploy(config(new JsonObject()));
    int perThread = 300;
    List<Future<Message<Object>>> replies = java.util.Collections.synchronizedList(new ArrayList<>());
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> senders = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      int thread = t;
      Thread sender = new Thread(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < perThread; i++) {
          String n = thread + "-" + i;
          replies.add(vertx.eventBus().request(SUBMIT, n,
              new DeliveryOptions().addHeader("key", "k" + (i % 7)).addHeader("id", n).setSendTimeout(20_000)));
        }
      });
      sender.start();
      senders.add(sender);
    }
    go.countDown();
    Future<Void> undeployed = vertx.undeploy(id);
    for (Thread sender : senders) {
      sender.join(20_000);
    }
    await(undeployed);
    int served = 0;
    for (Future<Message<Object>> reply : List.copyOf(replies)) {
      Throwable t = await(reply.transform(ar -> Future.succeededFuture(ar.failed() ? ar.cause() : null)));
      if (t == null) {
        served++;
        continue;
      }
      assertTrue(t instanceof ReplyException r && (r.failureCode() == 503 || r.failureType() == ReplyFailure.NO_HANDLERS),
          "neither served nor refused unsent: " + t);
    }
    assertEquals(2 * perThread, replies.size());
    assertEquals(served, sentBodies().size(), "each input served was sent once, and none refused was sent");
  }

  private static JsonObject bridgeSend(JsonObject headers, Object body, String replyAddress) {
    return new JsonObject().put("type", "send").put("address", SUBMIT).put("headers", headers).put("body", body)
        .put("replyAddress", replyAddress);
  }

  private static JsonObject readFrame(java.io.DataInputStream in) throws java.io.IOException {
    byte[] bytes = new byte[in.readInt()];
    in.readFully(bytes);
    return new JsonObject(Buffer.buffer(bytes));
  }

  static final class Pojo {}

  /** A local codec for {@link Pojo}: what a sender's own codec delivers in one JVM. */
  static final class PojoCodec implements MessageCodec<Pojo, Pojo> {
    static final String NAME = "review-be-pojo";

    @Override
    public void encodeToWire(Buffer buffer, Pojo pojo) {}

    @Override
    public Pojo decodeFromWire(int pos, Buffer buffer) {
      return new Pojo();
    }

    @Override
    public Pojo transform(Pojo pojo) {
      return pojo;
    }

    @Override
    public String name() {
      return NAME;
    }

    @Override
    public byte systemCodecID() {
      return -1;
    }
  }
}
