package dev.ferry.cluster;

import java.util.ArrayDeque;

/**
 * The effects a routing transition queues, run once the outermost transition is over: an effect
 * that re-enters (a ferry answering inline) starts a new transition whose effects join this queue
 * instead of running inside the first one. Used on its owner's loop only, like its owner.
 */
final class EffectQueue {
  private final ArrayDeque<Runnable> effects = new ArrayDeque<>();
  private boolean running;

  void add(Runnable effect) {
    effects.add(effect);
  }

  /** Runs {@code transition}, then the effects it queued (unless an outer transition runs them). */
  void step(Runnable transition) {
    transition.run();
    if (running) {
      return;
    }
    running = true;
    try {
      for (Runnable effect = effects.poll(); effect != null; effect = effects.poll()) {
        effect.run();
      }
    } finally {
      running = false;
    }
  }
}
