package dev.ferry.verticle;

import dev.ferry.internal.LogText;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.lang.System.Logger.Level;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;

/**
 * Bounds the frames a TCP bridge client may send (ADR 0104). The bridge's own parser buffers
 * whatever length a frame's 4-byte prefix announces, up to 2 GiB per socket, and offers no hook
 * before it; so the bridge is given a Vert.x whose net servers hand it sockets seen here first:
 * each socket's bytes pass a {@link Guard} that reads only the length prefixes (no copy, no
 * buffering) on their way to the bridge's parser. A frame announced longer than {@code
 * maxFrameBytes} (or negative) is never buffered: the client gets an error frame, nothing from its
 * prefix on reaches the bridge (it is read and dropped), and the socket is closed once that frame
 * is written. Frames before it were delivered
 * as usual; their replies are lost with the socket, as when a client disconnects.
 *
 * <p>Only {@link Vertx#createNetServer}, {@link NetServer#connectHandler} and {@link
 * NetSocket#handler} are intercepted; everything else goes to Vert.x unchanged. A guard runs on its
 * socket's event loop (the verticle's, where the bridge listens), like the parser it feeds.
 */
final class BridgeFrameLimit {
  private static final System.Logger LOG = System.getLogger(BridgeFrameLimit.class.getName());
  /** Default bound on one frame: 1 MiB, far above any input a batch should carry. */
  static final int DEFAULT_MAX_FRAME_BYTES = 1 << 20;
  /** Smallest accepted bound: a send with a key of 1024 characters and a small body must fit. */
  static final int MIN_MAX_FRAME_BYTES = 4096;
  /** Largest accepted bound: 1 GiB (the bridge's protocol allows 2 GiB, which no node should buffer). */
  static final int MAX_MAX_FRAME_BYTES = 1 << 30;

  private BridgeFrameLimit() {}

  /** {@code vertx} for a bridge to use: its net servers' sockets pass a frame guard first. */
  static Vertx guarded(Vertx vertx, int maxFrameBytes) {
    return proxy(Vertx.class, vertx, (method, args) -> {
      Object result = method.invoke(vertx, args);
      return "createNetServer".equals(method.getName()) ? server((NetServer) result, maxFrameBytes) : result;
    });
  }

  private static NetServer server(NetServer server, int maxFrameBytes) {
    NetServer[] self = new NetServer[1];
    self[0] = proxy(NetServer.class, server, (method, args) -> {
      if ("connectHandler".equals(method.getName()) && args != null && args.length == 1 && args[0] != null) {
        @SuppressWarnings("unchecked")
        Handler<NetSocket> bridge = (Handler<NetSocket>) args[0];
        server.connectHandler(socket -> bridge.handle(socket(socket, maxFrameBytes)));
        return self[0];
      }
      Object result = method.invoke(server, args);
      return result == server ? self[0] : result;
    });
    return self[0];
  }

  private static NetSocket socket(NetSocket socket, int maxFrameBytes) {
    NetSocket[] self = new NetSocket[1];
    self[0] = proxy(NetSocket.class, socket, (method, args) -> {
      if ("handler".equals(method.getName()) && args != null && args.length == 1) {
        @SuppressWarnings("unchecked")
        Handler<Buffer> parser = (Handler<Buffer>) args[0];
        socket.handler(parser == null ? null : new Guard(socket, parser, maxFrameBytes));
        return self[0];
      }
      Object result = method.invoke(socket, args);
      return result == socket ? self[0] : result;
    });
    return self[0];
  }

  /** What a proxy does with a call other than equals, hashCode and toString. */
  private interface Call {
    Object invoke(Method method, Object[] args) throws Exception;
  }

  private static <T> T proxy(Class<T> type, T target, Call call) {
    InvocationHandler h = (proxy, method, args) -> {
      switch (method.getName()) {
        case "equals":
          if (method.getParameterCount() == 1) {
            return proxy == args[0];
          }
          break;
        case "hashCode":
          if (method.getParameterCount() == 0) {
            return System.identityHashCode(proxy);
          }
          break;
        case "toString":
          if (method.getParameterCount() == 0) {
            return "bridge-guarded " + target;
          }
          break;
        default:
          break;
      }
      try {
        return call.invoke(method, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    };
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h));
  }

  /**
   * Reads a socket's length prefixes as its bytes go by to the bridge's parser, which still does
   * all the parsing: constant memory, whatever the frames. On the socket's event loop.
   */
  static final class Guard implements Handler<Buffer> {
    private final NetSocket socket;
    private final Handler<Buffer> parser;
    private final int maxFrameBytes;
    /** Bytes of the current length prefix read so far (0 to 3), and their value. */
    private int prefixRead;
    private int prefix;
    /** Bytes of the current frame's JSON still to come. */
    private long remaining;
    private boolean refused;

    Guard(NetSocket socket, Handler<Buffer> parser, int maxFrameBytes) {
      this.socket = socket;
      this.parser = parser;
      this.maxFrameBytes = maxFrameBytes;
    }

    @Override
    public void handle(Buffer data) {
      assert io.vertx.core.Context.isOnEventLoopThread() : "a bridge socket's bytes arrive on its event loop";
      if (refused) {
        return; // closing: nothing more reaches the bridge
      }
      int n = data.length();
      int i = 0;
      while (i < n) {
        if (remaining > 0) {
          int skip = (int) Math.min(remaining, n - i);
          i += skip;
          remaining -= skip;
          continue;
        }
        int frameStart = i - prefixRead; // negative when its prefix began in an earlier buffer
        prefix = (prefix << 8) | (data.getByte(i++) & 0xff);
        if (++prefixRead == 4) {
          int length = prefix;
          prefixRead = 0;
          prefix = 0;
          if (length < 0 || length > maxFrameBytes) {
            if (frameStart > 0) {
              parser.handle(data.slice(0, frameStart)); // the whole frames before it go as usual
            }
            refuse(length);
            return;
          }
          remaining = length;
        }
      }
      parser.handle(data);
    }

    private void refuse(int length) {
      // What still arrives is read and dropped until the socket is closed (not paused: unread
      // bytes at the close would make the kernel reset the connection, which may cost the client
      // its error frame).
      refused = true;
      String why = (length < 0 ? "a frame length of " + Integer.toUnsignedString(length) + " bytes"
          : "a frame of " + length + " bytes") + " is over the bridge's maxFrameBytes (" + maxFrameBytes
          + "); the connection is closed";
      LOG.log(Level.WARNING, "ferry: bridge client {0}: {1}", LogText.escape(String.valueOf(socket.remoteAddress())), why);
      byte[] json = new JsonObject().put("type", "err").put("message", why).encode().getBytes(StandardCharsets.UTF_8);
      socket.write(Buffer.buffer(4 + json.length).appendInt(json.length).appendBytes(json))
          .onComplete(ar -> socket.close());
    }
  }
}
