/**
 * Ferry's public API (module ferry-core, depends on vertx-core only): {@link dev.ferry.Ferry}
 * with its factories {@code perKey}, {@code make} and {@code keyed}; the immutable, validated configs
 * {@link dev.ferry.PerKeyConfig} and {@link dev.ferry.FerryConfig}; the one failure type
 * {@link dev.ferry.FerryException} with its {@link dev.ferry.FerryError} kinds; the
 * {@link dev.ferry.FerryMetrics} snapshot; and {@link dev.ferry.FoldWrite}, the read, apply,
 * conditional-write round trip, with its store interface {@link dev.ferry.VersionedStore}.
 *
 * <p>Threading: a ferry is bound to one event-loop context and all its state lives there;
 * {@code submit} and {@code metrics()} may be called from any thread. See docs/architecture.md.
 */
package dev.ferry;
