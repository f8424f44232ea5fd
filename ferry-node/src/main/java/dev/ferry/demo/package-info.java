/**
 * The main job of the runnable node (module ferry-node): a FerryVerticle in front of a database,
 * loaded by many senders, with a report at the end (docs/guide/main-job.md).
 */
package dev.ferry.demo;
