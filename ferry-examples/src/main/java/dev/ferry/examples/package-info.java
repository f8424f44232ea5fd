/**
 * Runnable examples (module ferry-examples, not a library): {@link dev.ferry.examples.Accounts},
 * bank accounts on FoldWrite, used by the main job and the store tests; and
 * {@link dev.ferry.examples.PerKeyExample}. Copy them as starting points.
 */
package dev.ferry.examples;
