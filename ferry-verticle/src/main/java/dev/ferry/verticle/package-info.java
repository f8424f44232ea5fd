/**
 * Ferry as a deployable Vert.x module (module ferry-verticle): {@link dev.ferry.verticle.FerryVerticle}
 * takes inputs on the event bus ({@code ferry.submit}) and batches them per key to a downstream;
 * {@link dev.ferry.verticle.FerryVerticleOptions} is its typed config; {@link dev.ferry.verticle.FerryClient}
 * submits from anywhere (routing to the key's owner when clustered);
 * {@link dev.ferry.verticle.FerryMeterBinder} puts a ferry's meters in a Micrometer registry.
 * Hazelcast, Micrometer, Vert.x Web and the TCP bridge are optional jars: a feature enabled without
 * its jar fails the deployment naming it. All state of a verticle lives on its context.
 */
package dev.ferry.verticle;
