package dev.ferry.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.FerryError;
import dev.ferry.FerryException;
import dev.ferry.testing.VirtualLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A routing client's request that waits for a view while its deadline passes, the loop busy so
 * that its timer has not run yet: when the view comes it is answered then, never sent (every
 * request is answered exactly once).
 */
class ClientRouterDeadlineTest {
  private static final Set<String> NODES = Set.of("a", "b");
  private final VirtualLoop loop = new VirtualLoop();
  private final List<ClientRouter.Send> sends = new ArrayList<>();
  private final ClientRouter client = new ClientRouter(loop, sends::add);

  private Future<Object> request(long inputTimeoutMs, long sendTimeoutMs) {
    Promise<Object> answer = Promise.promise();
    long now = loop.nanoTime();
    client.submit(new ClientRouter.Request("k", "x", now + inputTimeoutMs * 1_000_000, now + sendTimeoutMs * 1_000_000,
        answer));
    loop.runPending();
    return answer.future();
  }

  private static boolean failedWith(Future<Object> answer, FerryError kind) {
    return answer.failed() && answer.cause() instanceof FerryException fe && fe.kind() == kind;
  }

  @Test
  void aRequestWhoseDeadlinePassedBeforeTheViewIsAnsweredTimeout() {
    Future<Object> x = request(100, 10_000);
    assertFalse(x.isComplete(), "waits for a view");
    loop.stallMillis(150);
    client.snapshot(NODES, NODES);
    loop.runPending();

    assertTrue(failedWith(x, FerryError.TIMEOUT), "x: " + x);
    assertEquals(List.of(), sends);
    assertEquals(0, loop.liveTimers());
  }

  @Test
  void aRequestWhoseSendTimeoutPassedBeforeTheViewIsAnsweredClosed() {
    Future<Object> x = request(10_000, 100);
    loop.stallMillis(150);
    client.snapshot(NODES, NODES);
    loop.runPending();

    assertTrue(failedWith(x, FerryError.CLOSED), "x: " + x);
    assertEquals(List.of(), sends);
    assertEquals(0, loop.liveTimers());
  }
}
