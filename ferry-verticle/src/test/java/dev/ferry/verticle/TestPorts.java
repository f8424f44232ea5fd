package dev.ferry.verticle;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A loopback port for a test server that binds it a moment later (a bridge, a monitoring
 * endpoint). Port 0's answer comes from the system's ephemeral range, which every outgoing
 * connection draws from too (Hazelcast's, an HTTP client's): one of them could take the port
 * before the server binds it (a BindException seen once). So the port is drawn below that range
 * (Linux's default starts at 32768) and checked free.
 */
public final class TestPorts {
  private static final int LOW = 20_000;
  private static final int HIGH = 32_000;

  private TestPorts() {}

  /** A port free on the loopback address now, outside the ephemeral range. */
  public static int free() {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(LOW, HIGH);
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return s.getLocalPort();
      } catch (IOException taken) {
        // taken: draw again
      }
    }
    throw new AssertionError("no free loopback port between " + LOW + " and " + HIGH);
  }
}
