/**
 * Versioned stores for {@link dev.ferry.FoldWrite} (module ferry-fold): {@link dev.ferry.store.PgStore}
 * on the reactive PostgreSQL client and {@link dev.ferry.store.JdbcStore} on Vert.x's JDBC client
 * (H2 by default), both optional dependencies, so add the client you use; and
 * {@link dev.ferry.store.StoreService}, a FoldWrite behind the event bus as a FerryVerticle
 * downstream. A store's futures complete on the caller's context.
 */
package dev.ferry.store;
