package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.InvalidConfigException;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The typed options: the same JSON as the config, checked the same way, deployable. */
class FerryVerticleOptionsTest extends VerticleTestBase {

  @Test
  void theShippedConfigRoundTripsUnchanged() throws Exception {
    JsonObject conf = new JsonObject(Files.readString(Path.of("../conf/ferry.json")));
    FerryVerticleOptions options = new FerryVerticleOptions(conf);
    assertEquals(conf, options.toJson());
    assertEquals("ferry.downstream", options.getDownstream().getString("address"));
    assertEquals(conf.getString("dispatch"), options.getDispatch());
    assertEquals("adaptive", options.getDispatch(), "ADR 0016: the shipped config says the default");
    assertFalse(conf.containsKey("maxInFlightBatches"), "left to follow the mode: 256 adaptive, 16 fixed slots");
    assertEquals(256, options.getMaxInFlightBatches());
    assertEquals(16, new FerryVerticleOptions(conf.copy().put("dispatch", "fixed-slots")).getMaxInFlightBatches());
    options.validate();
  }

  @Test
  void gettersGiveTheDefaultsAndSettersChain() {
    FerryVerticleOptions options = new FerryVerticleOptions();
    assertEquals("ferry.submit", options.getAddress());
    assertEquals("adaptive", options.getDispatch(), "ADR 0016: adaptive dispatch is the default");
    assertEquals(256, options.getMaxInFlightBatches(), "the ceiling of the learned limit");
    assertEquals(0, options.getPinnedLimit(), "the limit is learned");
    assertEquals(16, new FerryVerticleOptions().setDispatch("fixed-slots").getMaxInFlightBatches(), "the seeds' slots");
    assertEquals(100, options.getMaxBatchSize());
    assertEquals(10_000, options.getDrainTimeoutMs());
    assertTrue(options.isDirectIdleKeys());
    assertNull(options.getDownstream());
    assertEquals(new JsonObject(), options.toJson(), "defaults are not written out");
    JsonObject json = options.setAddress("orders.submit").setMaxBatchSize(32).setCallTimeoutMs(2000)
        .setEventBusDownstream("orders.store").setMonitoring("127.0.0.1", 9100).toJson();
    assertEquals(new JsonObject().put("address", "orders.submit").put("maxBatchSize", 32).put("callTimeoutMs", 2000L)
        .put("downstream", new JsonObject().put("type", "eventbus").put("address", "orders.store"))
        .put("monitoring", new JsonObject().put("host", "127.0.0.1").put("port", 9100)), json);
    assertEquals(options, new FerryVerticleOptions(json));
  }

  @Test
  void aWholeNumberOfAnyJsonTypeIsReadAsTheVerticleReadsIt() {
    // The config reader takes any whole number (ConfigCheck.readLong); the getters must answer the
    // value the verticle deploys with, not the default.
    FerryVerticleOptions options = new FerryVerticleOptions(new JsonObject()
        .put("maxBatchSize", new java.math.BigDecimal("32")).put("callTimeoutMs", java.math.BigInteger.valueOf(2000))
        .put("drainTimeoutMs", 500.0).put("maxQueueing", new java.math.BigDecimal("1e3")))
        .setEventBusDownstream("orders.store");
    assertEquals(32, options.getMaxBatchSize());
    assertEquals(2000, options.getCallTimeoutMs());
    assertEquals(500, options.getDrainTimeoutMs());
    assertEquals(1000, options.getMaxQueueing());
    options.validate();
    // Not whole: kept as given, and refused by validate() as the verticle refuses it.
    FerryVerticleOptions half = new FerryVerticleOptions(new JsonObject().put("maxBatchSize", new java.math.BigDecimal("2.5")))
        .setEventBusDownstream("orders.store");
    assertEquals(100, half.getMaxBatchSize());
    assertThrows(InvalidConfigException.class, half::validate);
  }

  @Test
  void validationNamesEveryBadFieldIncludingWrongTypesAndTypos() {
    FerryVerticleOptions options = new FerryVerticleOptions(new JsonObject()
        .put("maxBatchSize", "many").put("maxBatchDelay", 5).put("order", "random"))
        .setMaxQueueing(0);
    InvalidConfigException e = assertThrows(InvalidConfigException.class, options::validate);
    String message = e.getMessage();
    for (String field : new String[] {"maxBatchSize", "maxBatchDelay", "order", "maxQueueing", "downstream"}) {
      assertTrue(message.contains(field), field + " not named in: " + message);
    }
  }

  @Test
  void aVerticleBuiltFromOptionsServes() {
    FerryVerticleOptions options = new FerryVerticleOptions().setEventBusDownstream(DOWN).setMaxBatchSize(4);
    downstream.auto(EbRecorder.Call::echo);
    await(vertx.deployVerticle(new FerryVerticle(options), new DeploymentOptions()));
    assertEquals("hi", body(send("k", "hi")));
  }
}
