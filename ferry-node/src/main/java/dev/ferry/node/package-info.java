/** The runnable node's entry point (module ferry-node): Vert.x's launcher with FerryVerticle as its main verticle. */
package dev.ferry.node;
