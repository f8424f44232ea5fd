package dev.ferry.verticle;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.bridge.BridgeOptions;
import io.vertx.ext.bridge.PermittedOptions;
import io.vertx.ext.eventbus.bridge.tcp.TcpEventBusBridge;
import java.util.function.Supplier;

/**
 * The TCP event-bus bridge of {@link Operations}, apart so that Operations loads without the
 * optional vertx-tcp-eventbus-bridge jar: only loaded when the config asks for a bridge and
 * {@link OptionalJars} has found it. Runs on the verticle's context.
 */
final class BridgeSupport {
  private BridgeSupport() {}

  /** Listens; the future holds the bridge's closer. */
  static Future<Supplier<Future<?>>> listen(Vertx vertx, VerticleConfig settings, OpsConfig.Bridge b) {
    // Only what a client needs may come in: submit (and metrics or health when asked). Replies
    // to a client's own requests travel back without any outbound permission.
    BridgeOptions options = new BridgeOptions()
        .addInboundPermitted(new PermittedOptions().setAddress(settings.address()));
    if (b.permitMetrics()) {
      options.addInboundPermitted(new PermittedOptions().setAddress(settings.metricsAddress()));
    }
    if (b.permitHealth()) {
      options.addInboundPermitted(new PermittedOptions().setAddress(settings.ops().healthAddress()));
    }
    return TcpEventBusBridge.create(vertx, options).listen(b.endpoint().port(), b.endpoint().host())
        .map(bridge -> bridge::close);
  }
}
