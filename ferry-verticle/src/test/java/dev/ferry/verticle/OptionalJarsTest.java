package dev.ferry.verticle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** Which field's feature needs which jar, decided from the config and what the class path holds. */
class OptionalJarsTest {
  private static final JsonObject DOWN = new JsonObject().put("type", "eventbus").put("address", "down");

  private static VerticleConfig config(JsonObject extra) {
    return VerticleConfig.read(new JsonObject().put("downstream", DOWN).mergeIn(extra));
  }

  private static Predicate<String> without(String... jarCoordinates) {
    Set<String> gone = Set.of(jarCoordinates);
    List<OptionalJars.Jar> all = List.of(OptionalJars.HAZELCAST, OptionalJars.MICROMETER, OptionalJars.PROMETHEUS,
        OptionalJars.WEB, OptionalJars.BRIDGE);
    return className -> all.stream().noneMatch(j -> j.probeClass().equals(className) && gone.contains(j.coordinates()));
  }

  @Test
  void aPlainNodeNeedsNoOptionalJar() {
    Predicate<String> nothing = c -> false;
    assertEquals(List.of(), OptionalJars.missing(config(new JsonObject()), false, nothing));
  }

  @Test
  void eachEnabledFeatureNamesItsFieldAndTheMissingCoordinates() {
    VerticleConfig all = config(new JsonObject()
        .put("monitoring", new JsonObject().put("port", 0))
        .put("bridge", new JsonObject().put("port", 0))
        .put("metricsRegistry", "app"));
    List<String> missing = OptionalJars.missing(all, true, c -> false);
    assertEquals(4, missing.size(), missing.toString());
    assertTrue(missing.get(0).startsWith("clustered Vert.x: needs io.vertx:vertx-hazelcast"), missing.get(0));
    assertTrue(missing.get(1).startsWith("monitoring: needs io.vertx:vertx-web, io.vertx:vertx-micrometer-metrics,"
        + " io.micrometer:micrometer-registry-prometheus"), missing.get(1));
    assertTrue(missing.get(2).startsWith("metricsRegistry: needs io.vertx:vertx-micrometer-metrics"), missing.get(2));
    assertTrue(missing.get(3).startsWith("bridge: needs io.vertx:vertx-tcp-eventbus-bridge"), missing.get(3));
  }

  @Test
  void onlyTheAbsentJarIsNamed() {
    VerticleConfig monitoring = config(new JsonObject().put("monitoring", new JsonObject().put("port", 0)));
    List<String> missing = OptionalJars.missing(monitoring, false, without("io.vertx:vertx-web"));
    assertEquals(1, missing.size());
    assertTrue(missing.get(0).startsWith("monitoring: needs io.vertx:vertx-web on the class path"), missing.get(0));
  }

  @Test
  void theProbeClassesAreTheRealOnes() {
    // On this module's test class path every optional jar is present: a renamed class would
    // otherwise make a feature look missing for everybody.
    for (OptionalJars.Jar jar : List.of(OptionalJars.HAZELCAST, OptionalJars.MICROMETER, OptionalJars.PROMETHEUS,
        OptionalJars.WEB, OptionalJars.BRIDGE)) {
      assertTrue(OptionalJars.present(jar.probeClass()), jar.toString());
    }
  }
}
