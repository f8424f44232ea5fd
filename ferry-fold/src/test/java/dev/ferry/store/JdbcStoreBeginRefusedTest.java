package dev.ferry.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.WriteOutcomeUnknownException;
import dev.ferry.WriteRefusedException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A write whose transaction could not even begin (the driver refused to turn autocommit off: a
 * connection the database dropped while it sat in the pool) sent no statement, so nothing was
 * written and the batch is safe to retry. It was reported as "may or may not have been written".
 */
class JdbcStoreBeginRefusedTest {
  private Vertx vertx;
  private Pool h2;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    h2 = JdbcStore.h2Pool(vertx, "jdbc:h2:mem:begin-refused;DB_CLOSE_DELAY=-1", 2);
  }

  @AfterEach
  void stop() throws Exception {
    h2.close().await(120, TimeUnit.SECONDS);
    vertx.close().await(120, TimeUnit.SECONDS);
  }

  @Test
  void aTransactionThatCouldNotBeginIsReportedAsNotWritten() throws Exception {
    AtomicBoolean beginFails = new AtomicBoolean();
    JdbcStore store = JdbcStore.of(beginRefusing(h2, beginFails), "begin_refused");
    store.createTables().await(120, TimeUnit.SECONDS);
    assertTrue(store.write("a", new JsonObject().put("n", 1), 0, List.of()).await(120, TimeUnit.SECONDS));

    beginFails.set(true);
    Future<Boolean> write = store.write("a", new JsonObject().put("n", 2), 1, List.of());
    write.otherwiseEmpty().await(120, TimeUnit.SECONDS);

    assertFalse(write.cause() instanceof WriteOutcomeUnknownException, "a refused begin: " + write.cause());
    assertInstanceOf(WriteRefusedException.class, write.cause());
    beginFails.set(false);
    assertEquals(1, store.read("a").await(120, TimeUnit.SECONDS).version(), "nothing was written");
  }

  /** {@code pool}, whose connections fail {@code begin()} while {@code beginFails} is set. */
  private static Pool beginRefusing(Pool pool, AtomicBoolean beginFails) {
    InvocationHandler onPool = (proxy, method, args) -> {
      Object result = invoke(pool, method, args);
      if (method.getName().equals("getConnection") && result instanceof Future<?> f) {
        return f.map(conn -> (SqlConnection) Proxy.newProxyInstance(SqlConnection.class.getClassLoader(),
            new Class<?>[] {SqlConnection.class}, (p, m, a) -> m.getName().equals("begin") && beginFails.get()
                ? Future.failedFuture(new SQLException("connection is broken"))
                : invoke(conn, m, a)));
      }
      return result;
    };
    return (Pool) Proxy.newProxyInstance(Pool.class.getClassLoader(), new Class<?>[] {Pool.class}, onPool);
  }

  private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
