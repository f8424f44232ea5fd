package dev.ferry.verticle;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageCodec;
import io.vertx.core.json.Json;

/**
 * Passes a JSON body across the local event bus as it is, without the deep copy Vert.x's JSON
 * codecs make on local delivery. Used only where the receiver is certainly in this JVM (the
 * verticle checks that Vert.x is not clustered) and the sender lets go of the body: a batch request
 * the ferry built for this one call, an outcome handed to its one caller. A downstream on another
 * node never sees it: clustered, the verticle sends plain JSON as the contract says
 * (docs/adr/0063-local-codec-when-unclustered.md).
 *
 * <p>Should it ever be sent over the wire anyway, it encodes the body as JSON, so a node that has
 * it registered decodes the same value. Stateless; any thread.
 */
public final class LocalCodec implements MessageCodec<Object, Object> {
  public static final String NAME = "dev.ferry.local-json";

  /** Registers the codec with {@code vertx} once; later calls (another verticle) find it there. */
  public static DeliveryOptions register(Vertx vertx) {
    try {
      vertx.eventBus().registerCodec(new LocalCodec());
    } catch (IllegalStateException alreadyRegistered) {
      // Another FerryVerticle of this Vert.x registered it: the same stateless codec, kept.
    }
    return new DeliveryOptions().setCodecName(NAME);
  }

  @Override
  public void encodeToWire(Buffer buffer, Object value) {
    Buffer json = Json.encodeToBuffer(value);
    buffer.appendInt(json.length()).appendBuffer(json);
  }

  @Override
  public Object decodeFromWire(int pos, Buffer buffer) {
    int length = buffer.getInt(pos);
    return Json.decodeValue(buffer.getBuffer(pos + 4, pos + 4 + length));
  }

  @Override
  public Object transform(Object value) {
    return value;
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
