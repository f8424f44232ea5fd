package dev.ferry.examples;

import dev.ferry.Ferry;
import dev.ferry.FoldDecision;
import dev.ferry.FoldWrite;
import dev.ferry.PerKeyConfig;
import dev.ferry.VersionedStore;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

/**
 * Bank accounts on {@link FoldWrite}: deposits and withdrawals per account, where a withdrawal
 * that would overdraw is rejected on its own and the rest of its batch still applies.
 *
 * <p>An operation is {@code {"account": "a1", "deposit": 10}} or {@code {"account": "a1",
 * "withdraw": 4}}; the state is {@code {"balance": n}}; a caller's result is the balance right
 * after its operation. Copy this class as a starting point for your own entities.
 */
public final class Accounts {
  private Accounts() {}

  public static JsonObject deposit(String account, long amount) {
    return new JsonObject().put("account", account).put("deposit", amount);
  }

  public static JsonObject withdraw(String account, long amount) {
    return new JsonObject().put("account", account).put("withdraw", amount);
  }

  /** The key: operations are serialised per account. */
  public static String accountOf(JsonObject op) {
    return op.getString("account");
  }

  /** A new account's state. */
  public static JsonObject opened() {
    return new JsonObject().put("balance", 0L);
  }

  /**
   * Pure: decides from the balance and the operation alone, and builds a new state instead of
   * changing the one it was given (it may be folded again after a conflict).
   */
  public static FoldDecision<JsonObject, Long> apply(JsonObject state, Object input) {
    if (!(input instanceof JsonObject op)) {
      return FoldDecision.reject("an operation is a JSON object, got " + input);
    }
    long deposit = amount(op, "deposit");
    long withdraw = amount(op, "withdraw");
    if ((deposit > 0) == (withdraw > 0) || deposit < 0 || withdraw < 0) {
      return FoldDecision.reject("an operation has exactly one whole positive amount: deposit or withdraw");
    }
    long balance = state.getLong("balance");
    if (withdraw > balance) {
      return FoldDecision.reject("insufficient funds: balance " + balance + ", withdrawal " + withdraw);
    }
    long next = deposit > 0 ? Math.addExact(balance, deposit) : balance - withdraw;
    return FoldDecision.accept(new JsonObject().put("balance", next), next);
  }

  /** The FoldWrite for accounts over any JSON store (PgStore, JdbcStore). */
  public static FoldWrite<String, JsonObject, Object, Long> foldWrite(
      VersionedStore<String, JsonObject, Object> store) {
    return FoldWrite.<String, JsonObject, Object, Long>builder(store, Accounts::apply)
        .initial(Accounts::opened)
        .build();
  }

  /** A per-key ferry of account operations: every account's operations batch into one write. */
  public static Ferry<Object, Long> ferry(Vertx vertx, PerKeyConfig config, VersionedStore<String, JsonObject, Object> store) {
    return foldWrite(store).ferry(vertx, config, op -> op instanceof JsonObject o ? accountOf(o) : null);
  }

  /** The amount in {@code field}: 0 when absent, -1 when not a whole positive number. */
  private static long amount(JsonObject op, String field) {
    Object v = op.getValue(field);
    if (v == null) {
      return 0;
    }
    if (!(v instanceof Number n) || n.longValue() <= 0 || n.doubleValue() != n.longValue()) {
      return -1;
    }
    return n.longValue();
  }
}
