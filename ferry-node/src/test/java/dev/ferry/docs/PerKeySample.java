package dev.ferry.docs;

import dev.ferry.Ferry;
import dev.ferry.FerryException;
import dev.ferry.PerKeyConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Map;

/** The per-key samples of README.md and docs/guide/per-key.md (compiled here, checked by DocsSamplesTest). */
final class PerKeySample {
  private PerKeySample() {}

  record DepositId(String value) {}

  record Deposit(DepositId id, String account, long amount) {
    Deposit(String account, long amount) {
      this(new DepositId(account + "-" + amount), account, amount);
    }
  }

  interface Balances {
    long balanceAfter(Deposit deposit);
  }

  interface Store {
    Future<Map<DepositId, Long>> applyAll(String account, List<Deposit> batch);

    Future<Balances> apply(String account, List<Deposit> batch);
  }

  static void guide(Vertx vertx, Store store) {
    // [per-key]
    Ferry<Deposit, Long> ferry = Ferry.perKey(
        vertx,
        PerKeyConfig.builder().maxBatchSize(50).build(),
        Deposit::account,                                  // the key of an input
        (String account, List<Deposit> batch) ->           // one call per batch, inputs in order
            store.applyAll(account, batch),                // Future<Map<DepositId, Long>>
        (deposit, balances) -> balances.get(deposit.id())); // each caller's own outcome

    ferry.submit(new Deposit("acc-7", 100))
        .onSuccess(balance -> System.out.println("balance now " + balance))
        .onFailure(e -> System.out.println("failed: " + ((FerryException) e).kind()));
    // [/per-key]
  }

  static void readme(Vertx vertx, Store store) {
    // [readme]
    Ferry<Deposit, Long> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(),
        Deposit::account,                                    // the key
        (String account, List<Deposit> batch) -> store.apply(account, batch), // one call per batch
        (deposit, result) -> result.balanceAfter(deposit));  // each caller's own outcome

    ferry.submit(new Deposit("acc-7", 100)).onSuccess(balance -> System.out.println(balance));
    // [/readme]
  }
}
