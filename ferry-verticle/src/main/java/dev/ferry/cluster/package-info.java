/**
 * The cluster layer of the verticle: one owner per key among the announced Ferry nodes
 * (rendezvous hashing over Hazelcast membership), forwarding to the owner, hand-off when members
 * come and go (docs/guide/clustering.md, docs/adr/0050-rendezvous-ownership.md). Needs the
 * optional vertx-hazelcast jar. All state lives on the verticle's context.
 */
package dev.ferry.cluster;
