package dev.ferry.internal;

/**
 * The names under which a config's user wrote the settings the engines' messages name (ADR 0185):
 * a builder's methods ({@code callTimeout}) or a JSON config's fields ({@code callTimeoutMs}). A
 * config keeps the names of the surface it was read from, and an engine names a setting only
 * through them, so that a caller reads the name it wrote without the engine knowing which surface
 * that was. Not part of a config's value: two configs with equal bounds are equal whatever their
 * names.
 *
 * @param callTimeout the call timeout's name, which a 502 at that timeout ends with
 */
public record SettingNames(String callTimeout) {
  /** The names of the public builders ({@code PerKeyConfig.builder()}, {@code FerryConfig.builder()}). */
  public static final SettingNames BUILDER = new SettingNames("callTimeout");
}
