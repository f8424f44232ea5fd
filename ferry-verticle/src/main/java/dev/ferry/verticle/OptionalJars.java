package dev.ferry.verticle;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The jars behind the verticle's optional features, and the check that a feature the config (or a
 * clustered Vert.x) turns on has them: Hazelcast, Micrometer/Prometheus, Vert.x Web and the TCP
 * bridge are optional Maven dependencies of ferry-verticle, so a user who never clusters or scrapes
 * does not carry them. A missing jar fails the deployment with one message naming the field that
 * asked for it and the Maven coordinates to add, rather than a NoClassDefFoundError halfway
 * through start. Pure function of the config and a class-presence test, so it runs anywhere.
 */
final class OptionalJars {
  private OptionalJars() {}

  /** One optional jar: a class it holds, and its Maven coordinates. */
  record Jar(String probeClass, String coordinates) {}

  static final Jar HAZELCAST = new Jar("io.vertx.spi.cluster.hazelcast.HazelcastClusterManager", "io.vertx:vertx-hazelcast");
  static final Jar MICROMETER = new Jar("io.vertx.micrometer.backends.BackendRegistries", "io.vertx:vertx-micrometer-metrics");
  static final Jar PROMETHEUS = new Jar("io.micrometer.prometheusmetrics.PrometheusMeterRegistry", "io.micrometer:micrometer-registry-prometheus");
  static final Jar WEB = new Jar("io.vertx.ext.web.Router", "io.vertx:vertx-web");
  static final Jar BRIDGE = new Jar("io.vertx.ext.eventbus.bridge.tcp.TcpEventBusBridge", "io.vertx:vertx-tcp-eventbus-bridge");

  /** Whether the class loader that loaded Ferry can see {@code className}. */
  static boolean present(String className) {
    try {
      Class.forName(className, false, OptionalJars.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Whether meters can be bound at all (Micrometer and Vert.x's Micrometer backend present). */
  static boolean metricsAvailable(Predicate<String> present) {
    return present.test(MICROMETER.probeClass());
  }

  /**
   * One violation per enabled feature whose jars are missing, as "field: needs ... on the class
   * path"; empty when everything asked for is there.
   */
  static List<String> missing(VerticleConfig config, boolean clustered, Predicate<String> present) {
    List<String> out = new ArrayList<>();
    if (clustered) {
      need(out, "clustered Vert.x", present, HAZELCAST);
    }
    if (config.ops().monitoring() != null) {
      need(out, "monitoring", present, WEB, MICROMETER, PROMETHEUS);
    }
    if (config.ops().metricsRegistry() != null) {
      need(out, "metricsRegistry", present, MICROMETER);
    }
    if (config.ops().bridge() != null) {
      need(out, "bridge", present, BRIDGE);
    }
    return out;
  }

  private static void need(List<String> out, String field, Predicate<String> present, Jar... jars) {
    List<String> absent = new ArrayList<>();
    for (Jar jar : jars) {
      if (!present.test(jar.probeClass())) {
        absent.add(jar.coordinates());
      }
    }
    if (!absent.isEmpty()) {
      out.add(field + ": needs " + String.join(", ", absent) + " on the class path (an optional dependency of"
          + " dev.ferry:ferry-verticle; add it to your build)");
    }
  }
}
