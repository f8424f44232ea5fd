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
 * Bounds the frames a TCP bridge client may send (ADR 0104), and answers those the bridge cannot
 * decode (ADR 0135). The bridge's own parser buffers whatever length a frame's 4-byte prefix
 * announces, up to 2 GiB per socket, and offers no hook before it; so the bridge is given a Vert.x
 * whose net servers hand it sockets seen here first: each socket's bytes pass a {@link Guard} that
 * reads only the length prefixes (no buffering of its own) on their way to the bridge's parser. A
 * frame announced longer than {@code maxFrameBytes} (or negative) is never buffered: the client
 * gets an error frame, nothing from its prefix on reaches the bridge (it is read and dropped), and
 * the socket is closed once that frame is written. Frames before it were delivered as usual; their
 * replies are lost with the socket, as when a client disconnects.
 *
 * <p>The bridge only logs a frame it cannot decode (not JSON, not an object, nested too deep), and
 * one whose "type" is missing or unknown throws out of its parser, which stays out of step with the
 * stream for good: no reply, to that frame or any later one. The guard hands the parser one frame
 * at a time and learns from the bridge's hook (through {@link Framed}, which the sockets it hands
 * the bridge implement) whether it was decoded; one that was not is refused like a frame too long.
 *
 * <p>The guard also closes a connection that brought no whole frame for {@code idleTimeoutMs}
 * (ADR 0166): the bridge has no idle timeout, and one that any byte resets (Vert.x's own) would let
 * a client hold its connection by trickling a frame a byte at a time. A client that waits longer
 * than that for an answer pings (the protocol's {@code ping}, answered {@code pong}). The close is
 * the channel's at once, as at Vert.x's own idle timeout: Vert.x's {@code close()} waits until
 * what was written before it went out, which never happens for a client that reads nothing.
 *
 * <p>Only {@link Vertx#createNetServer}, {@link NetServer#connectHandler} and {@link
 * NetSocket#handler} are intercepted; everything else goes to Vert.x unchanged. A guard runs on its
 * socket's event loop (the verticle's, where the bridge listens), like the parser it feeds, the
 * hook that counts its frames and its idle timer.
 */
final class BridgeFrameLimit {
  private static final System.Logger LOG = System.getLogger(BridgeFrameLimit.class.getName());
  /** Default bound on one frame: 1 MiB, far above any input a batch should carry. */
  static final int DEFAULT_MAX_FRAME_BYTES = 1 << 20;
  /** Smallest accepted bound: a send with a key of 1024 characters and a small body must fit. */
  static final int MIN_MAX_FRAME_BYTES = 4096;
  /** Largest accepted bound: 1 GiB (the bridge's protocol allows 2 GiB, which no node should buffer). */
  static final int MAX_MAX_FRAME_BYTES = 1 << 30;
  /**
   * Default time a connection may go without a whole frame from its client (ADR 0166): two
   * minutes, far above the few seconds between the pings of Vert.x's own bridge clients, and
   * above an answer's wait with the default timeouts.
   */
  static final long DEFAULT_IDLE_TIMEOUT_MS = 120_000;
  /** Smallest accepted idle timeout: a client that pings needs time to ping. */
  static final long MIN_IDLE_TIMEOUT_MS = 1_000;
  /** Largest accepted idle timeout: a day (there is no "never": a silent client is never needed). */
  static final long MAX_IDLE_TIMEOUT_MS = 86_400_000;

  private BridgeFrameLimit() {}

  /**
   * {@code vertx} for a bridge to use: its net servers' sockets pass a frame guard first, which
   * also closes a connection that brought no whole frame for {@code idleTimeoutMs}.
   */
  static Vertx guarded(Vertx vertx, int maxFrameBytes, long idleTimeoutMs) {
    return proxy(Vertx.class, vertx, (method, args) -> {
      Object result = method.invoke(vertx, args);
      return "createNetServer".equals(method.getName())
          ? server(vertx, (NetServer) result, maxFrameBytes, idleTimeoutMs) : result;
    });
  }

  private static NetServer server(Vertx vertx, NetServer server, int maxFrameBytes, long idleTimeoutMs) {
    NetServer[] self = new NetServer[1];
    self[0] = proxy(NetServer.class, server, (method, args) -> {
      if ("connectHandler".equals(method.getName()) && args != null && args.length == 1 && args[0] != null) {
        @SuppressWarnings("unchecked")
        Handler<NetSocket> bridge = (Handler<NetSocket>) args[0];
        server.connectHandler(socket -> bridge.handle(socket(vertx, socket, maxFrameBytes, idleTimeoutMs)));
        return self[0];
      }
      Object result = method.invoke(server, args);
      return result == server ? self[0] : result;
    });
    return self[0];
  }

  /**
   * What the bridge's sockets are, besides NetSocket: the bridge's hook says through it that the
   * bridge decoded a frame of that socket (the hook sees the socket it was given, this wrapper).
   */
  interface Framed {
    /** The bridge decoded one more of this socket's frames (it reached the bridge's hook). */
    void frameDecoded();
  }

  private static NetSocket socket(Vertx vertx, NetSocket socket, int maxFrameBytes, long idleTimeoutMs) {
    NetSocket[] self = new NetSocket[1];
    Guard[] guard = new Guard[1];
    InvocationHandler h = handler(socket, (method, args) -> {
      if (method.getDeclaringClass() == Framed.class) {
        if (guard[0] != null) {
          guard[0].frameDecoded();
        }
        return null;
      }
      if ("handler".equals(method.getName()) && args != null && args.length == 1) {
        @SuppressWarnings("unchecked")
        Handler<Buffer> parser = (Handler<Buffer>) args[0];
        if (guard[0] != null) {
          guard[0].stopWatching(); // a handler set again (the bridge sets it once)
        }
        guard[0] = parser == null ? null : new Guard(socket, parser, maxFrameBytes);
        socket.handler(guard[0]);
        if (guard[0] != null) {
          guard[0].watchIdle(vertx, idleTimeoutMs);
        }
        return self[0];
      }
      Object result = method.invoke(socket, args);
      return result == socket ? self[0] : result;
    });
    // Defined by this class's loader, which sees Framed and Vert.x's NetSocket alike.
    self[0] = (NetSocket) Proxy.newProxyInstance(Framed.class.getClassLoader(),
        new Class<?>[] {NetSocket.class, Framed.class}, h);
    return self[0];
  }

  /** What a proxy does with a call other than equals, hashCode and toString. */
  private interface Call {
    Object invoke(Method method, Object[] args) throws Exception;
  }

  private static <T> T proxy(Class<T> type, T target, Call call) {
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler(target, call)));
  }

  private static InvocationHandler handler(Object target, Call call) {
    return (proxy, method, args) -> {
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
  }

  /**
   * Reads a socket's length prefixes as its bytes go by to the bridge's parser, which still does
   * all the parsing: constant memory, whatever the frames. Hands the parser each frame as soon as
   * its last byte is here, so that it decodes one frame per call, and checks that the bridge took
   * it: a frame the bridge's hook never saw was not decoded (the bridge only logs that), and one it
   * failed on threw out of the parser, which is left out of step with the stream. Either way the
   * client gets an error frame and the socket is closed, nothing after the frame delivered (ADR
   * 0135). On the socket's event loop.
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
    /** Frames of this socket the bridge decoded ({@link #frameDecoded}), counted by its hook. */
    private long decoded;
    private boolean refused;
    /** The idle watch (ADR 0166), once the bridge set its handler. */
    private QuietDeadline idle;

    Guard(NetSocket socket, Handler<Buffer> parser, int maxFrameBytes) {
      this.socket = socket;
      this.parser = parser;
      this.maxFrameBytes = maxFrameBytes;
      // The bridge writes every reply at once, without back-pressure (it never looks at the write
      // queue): a client that keeps sending and never reads its replies made the node buffer them
      // without bound. So the guard stops reading this socket while its write queue is full
      // (handle) and reads again once it drained: the client's sends wait in TCP, and what the
      // node holds for it is bounded by the write queue and the replies of inputs already taken.
      socket.drainHandler(v -> {
        if (!refused) {
          socket.resume();
        }
      });
    }

    /**
     * Closes the socket once it brought no whole frame for {@code idleTimeoutMs} (ADR 0166), counted
     * from now (its connection) and then from each frame the bridge decoded. Bytes alone do not
     * count: a client that trickles a frame byte by byte is as idle as one that sends nothing.
     */
    void watchIdle(Vertx vertx, long idleTimeoutMs) {
      idle = new QuietDeadline(vertx, idleTimeoutMs, () -> idleExpired(idleTimeoutMs));
      // The bridge sets no close handler of its own (its end handler forgets its registrations).
      socket.closeHandler(v -> stopWatching());
    }

    /** The socket closed (or the guard was replaced): no more idle checks. */
    void stopWatching() {
      if (idle != null) {
        idle.stop();
      }
    }

    private void idleExpired(long idleTimeoutMs) {
      if (!refused) {
        // Not a fault to warn about: a client that left its connection open. It gets the reason,
        // when its connection has room for it; the log has it at debug.
        refused = true;
        String why = "no frame for " + idleTimeoutMs + " ms (the bridge's idleTimeoutMs); the connection is closed";
        LOG.log(Level.DEBUG, "ferry: bridge client {0}: {1}", LogText.escape(String.valueOf(socket.remoteAddress())), why);
        if (!socket.writeQueueFull()) {
          socket.write(errFrame(why));
        }
      }
      // Also a connection refused earlier (refuse()) and still open: its close waits for its error
      // frame to be written, which a client that reads nothing never lets happen.
      // Closed at once: Vert.x's close() waits for what was written before it to go out, which a
      // client that reads nothing never lets happen (it held its connection, and the answers
      // queued for it, for ever). What already went out (the error frame) still reaches it.
      dev.ferry.cluster.ClusterAccess.closeNow(socket);
    }

    /** The bridge decoded one of this socket's frames: its hook runs while the parser is fed. */
    void frameDecoded() {
      decoded++;
    }

    @Override
    public void handle(Buffer data) {
      assert io.vertx.core.Context.isOnEventLoopThread() : "a bridge socket's bytes arrive on its event loop";
      if (refused) {
        return; // closing: nothing more reaches the bridge
      }
      int n = data.length();
      int i = 0;
      int fed = 0; // data[0, fed) went to the parser: whole frames, or their ends
      while (i < n) {
        if (remaining > 0) {
          int skip = (int) Math.min(remaining, n - i);
          i += skip;
          remaining -= skip;
          if (remaining == 0) {
            if (!frameEnds(data.slice(fed, i))) {
              return;
            }
            fed = i;
          }
          continue;
        }
        prefix = (prefix << 8) | (data.getByte(i++) & 0xff);
        if (++prefixRead == 4) {
          int length = prefix;
          prefixRead = 0;
          prefix = 0;
          if (length < 0 || length > maxFrameBytes) {
            // Every whole frame before it went to the parser as it ended.
            refuse((length < 0 ? "a frame length of " + Integer.toUnsignedString(length) + " bytes"
                : "a frame of " + length + " bytes") + " is over the bridge's maxFrameBytes (" + maxFrameBytes + ")");
            return;
          }
          remaining = length;
          if (length == 0) {
            if (!frameEnds(data.slice(fed, i))) {
              return;
            }
            fed = i;
          }
        }
      }
      if (fed < n) {
        // The start of a frame: the parser keeps it until the frame ends, and appends the rest of
        // it to what it was given, which a slice cannot take: the whole buffer, or a copy of its end.
        parser.handle(fed == 0 ? data : data.getBuffer(fed, n));
      }
      if (socket.writeQueueFull()) {
        socket.pause(); // until the drain handler (the constructor) resumes it
      }
    }

    /**
     * Hands the parser {@code chunk}, which ends a frame (all of it, or the rest of one begun in an
     * earlier buffer): the parser decodes that one frame and uses up the chunk, which therefore
     * may be a slice. False, and the socket refused, when the bridge did not take it.
     */
    private boolean frameEnds(Buffer chunk) {
      long before = decoded;
      try {
        parser.handle(chunk);
      } catch (RuntimeException e) {
        // The bridge's own exception, thrown past its parser: a frame whose "type" is missing or
        // not one it knows, say. Its text may quote the client's; it goes back to that client only.
        refuse("a frame the bridge cannot take (" + abridged(String.valueOf(e.getMessage()))
            + "; a frame's \"type\" is send, publish, register, unregister or ping)");
        return false;
      }
      if (decoded == before) {
        refuse("a frame that is not a JSON object the bridge can read");
        return false;
      }
      if (idle != null) {
        idle.touch(); // a whole frame: the connection is not idle (ADR 0166)
      }
      return true;
    }

    private static String abridged(String text) {
      return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }

    private void refuse(String what) {
      // What still arrives is read and dropped until the socket is closed (not paused: unread
      // bytes at the close would make the kernel reset the connection, which may cost the client
      // its error frame).
      refused = true;
      socket.resume(); // paused for a full write queue: read (and drop) again
      String why = what + "; the connection is closed";
      LOG.log(Level.WARNING, "ferry: bridge client {0}: {1}", LogText.escape(String.valueOf(socket.remoteAddress())),
          LogText.escape(why));
      socket.write(errFrame(why)).onComplete(ar -> socket.close());
    }

    private static Buffer errFrame(String message) {
      byte[] json = new JsonObject().put("type", "err").put("message", message).encode().getBytes(StandardCharsets.UTF_8);
      return Buffer.buffer(4 + json.length).appendInt(json.length).appendBytes(json);
    }
  }
}
