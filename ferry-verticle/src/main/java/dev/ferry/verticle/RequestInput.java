package dev.ferry.verticle;

import java.util.AbstractMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The map under one input's {@code {"id", "input"}} object in a batch request: two fields read
 * without hashing, in about a fifth of the memory of a {@code LinkedHashMap} with its table and two
 * entries (one per input, so it shows in the event-bus path's profile: docs/performance.md).
 *
 * <p>It behaves as an ordinary mutable map: the first operation that is not a lookup of its two
 * fields (iterating it, as JSON encoding and {@code JsonObject.copy} do, or changing it, as a
 * downstream in this JVM may) moves its contents into a {@link LinkedHashMap}, with {@code id}
 * before {@code input}, and serves everything from there. Used on the verticle's event loop, or by
 * the one downstream the request was handed to; never by two threads at once.
 */
final class RequestInput extends AbstractMap<String, Object> {
  private static final String ID = "id";
  private static final String INPUT = "input";

  private final String id;
  private final Object input;
  /** Everything, once something other than a lookup happened; null until then. */
  private Map<String, Object> spilled;

  RequestInput(String id, Object input) {
    this.id = id;
    this.input = input;
  }

  private Map<String, Object> spilled() {
    if (spilled == null) {
      spilled = new LinkedHashMap<>(4);
      spilled.put(ID, id);
      spilled.put(INPUT, input);
    }
    return spilled;
  }

  @Override
  public Object get(Object key) {
    if (spilled != null) {
      return spilled.get(key);
    }
    return ID.equals(key) ? id : INPUT.equals(key) ? input : null;
  }

  @Override
  public boolean containsKey(Object key) {
    return spilled != null ? spilled.containsKey(key) : ID.equals(key) || INPUT.equals(key);
  }

  @Override
  public int size() {
    return spilled != null ? spilled.size() : 2;
  }

  @Override
  public boolean isEmpty() {
    return size() == 0;
  }

  @Override
  public Object put(String key, Object value) {
    return spilled().put(key, value);
  }

  @Override
  public Object remove(Object key) {
    return spilled().remove(key);
  }

  @Override
  public void clear() {
    spilled().clear();
  }

  @Override
  public Set<Entry<String, Object>> entrySet() {
    return spilled().entrySet();
  }
}
