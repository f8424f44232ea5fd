/**
 * Where a FerryVerticle's batches go: one call per batch, over the event bus or HTTP, speaking the
 * downstream protocol of docs/guide/verticle.md (one outcome per input, in order). Runs on the
 * verticle's context.
 */
package dev.ferry.downstream;
