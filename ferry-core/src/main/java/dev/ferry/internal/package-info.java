/**
 * The engines behind {@link dev.ferry.Ferry}: non-blocking state machines over lanes and batches,
 * time injected through {@link dev.ferry.internal.Loop}, side effects returned and run afterwards.
 * Not an API: anything here may change in any release, and no public signature outside this
 * package names a type of it (ApiSurfaceTest). Other Ferry modules may use it.
 */
package dev.ferry.internal;
