package dev.ferry.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ferry.Ferry;
import dev.ferry.store.PgStore;
import dev.ferry.verticle.FerryVerticle;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The library modules' public surface, by reflection over their classes: no public signature
 * outside an {@code internal} package names an {@code internal} type, and no package spans two
 * modules. (Cycles between modules cannot exist: Maven refuses a cyclic reactor, and with no
 * split package a package cycle across modules would need one.) Lives in ferry-node because only
 * here are all library modules on the class path.
 */
class ApiSurfaceTest {
  /** One class of each library module: its code source is the module's classes. */
  private static final Map<String, Class<?>> MODULES = new LinkedHashMap<>();

  static {
    MODULES.put("ferry-core", Ferry.class);
    MODULES.put("ferry-fold", PgStore.class);
    MODULES.put("ferry-verticle", FerryVerticle.class);
  }

  @Test
  void noPublicSignatureOutsideInternalNamesAnInternalType() throws Exception {
    List<String> leaks = new ArrayList<>();
    int checked = 0;
    for (Class<?> anchor : MODULES.values()) {
      for (String name : classNames(anchor)) {
        Class<?> c = Class.forName(name, false, anchor.getClassLoader());
        if (isInternal(c) || !visible(c)) {
          continue;
        }
        checked++;
        check(leaks, c, "extends", c.getGenericSuperclass());
        for (Type t : c.getGenericInterfaces()) {
          check(leaks, c, "implements", t);
        }
        for (Field f : c.getDeclaredFields()) {
          if (exposed(f)) {
            check(leaks, c, "field " + f.getName(), f.getGenericType());
          }
        }
        for (Constructor<?> k : c.getDeclaredConstructors()) {
          if (exposed(k)) {
            for (Type t : k.getGenericParameterTypes()) {
              check(leaks, c, "constructor", t);
            }
          }
        }
        for (Method m : c.getDeclaredMethods()) {
          if (exposed(m) && !m.isSynthetic() && !m.isBridge()) {
            check(leaks, c, m.getName() + "() returns", m.getGenericReturnType());
            for (Type t : m.getGenericParameterTypes()) {
              check(leaks, c, m.getName() + "() takes", t);
            }
            for (Type t : m.getGenericExceptionTypes()) {
              check(leaks, c, m.getName() + "() throws", t);
            }
          }
        }
      }
    }
    assertTrue(checked > 20, "found only " + checked + " public classes: the scan is broken");
    assertEquals(List.of(), leaks, "public signatures naming internal types");
  }

  @Test
  void noPackageSpansTwoModules() throws Exception {
    Map<String, String> owner = new HashMap<>();
    List<String> split = new ArrayList<>();
    for (Map.Entry<String, Class<?>> module : MODULES.entrySet()) {
      Set<String> packages = new TreeSet<>();
      for (String name : classNames(module.getValue())) {
        packages.add(name.substring(0, name.lastIndexOf('.')));
      }
      for (String p : packages) {
        String before = owner.putIfAbsent(p, module.getKey());
        if (before != null) {
          split.add(p + " in " + before + " and " + module.getKey());
        }
      }
    }
    assertTrue(owner.containsKey("dev.ferry") && owner.containsKey("dev.ferry.verticle"), owner.toString());
    assertEquals(List.of(), split);
  }

  @Test
  void vertxInternalApiOnlyInOneAdapterPerModule() throws IOException {
    // Where Vert.x has no public API for a need, one class per module holds the internal call,
    // with a comment saying why (docs/adr/0092-no-internal-type-in-the-public-api.md).
    Set<String> adapters = Set.of("VertxLoop.java", "ClusterAccess.java");
    List<String> users = new ArrayList<>();
    try (Stream<Path> files = Files.walk(Path.of(".."))) {
      for (Path f : files.filter(p -> p.toString().replace('\\', '/').matches(".*/ferry-[a-z]+/src/main/java/.*\\.java")).toList()) {
        // Vert.x's internal packages, and its implementation packages (impl), which are no API either.
        if (VERTX_INTERNAL.matcher(Files.readString(f)).find() && !adapters.contains(f.getFileName().toString())) {
          users.add(f.toString());
        }
      }
    }
    assertEquals(List.of(), users, "Vert.x internal API outside the adapters " + adapters);
  }

  private static final java.util.regex.Pattern VERTX_INTERNAL =
      java.util.regex.Pattern.compile("io\\.vertx\\.[a-z.]*\\b(internal|impl)\\b");

  private static boolean isInternal(Class<?> c) {
    return c.getPackageName().endsWith(".internal") || c.getPackageName().contains(".internal.");
  }

  /** Public, and every enclosing class public too. */
  private static boolean visible(Class<?> c) {
    for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
      if (!Modifier.isPublic(k.getModifiers()) || k.isAnonymousClass() || k.isLocalClass()) {
        return false;
      }
    }
    return true;
  }

  private static boolean exposed(Member m) {
    int mod = m.getModifiers();
    if (Modifier.isPublic(mod)) {
      return true;
    }
    // protected is public to subclasses, unless nobody outside can subclass
    return Modifier.isProtected(mod) && !Modifier.isFinal(m.getDeclaringClass().getModifiers());
  }

  private static void check(List<String> leaks, Class<?> owner, String where, Type type) {
    for (Class<?> named : mentioned(type, new HashSet<>())) {
      if (isInternal(named)) {
        leaks.add(owner.getName() + ": " + where + " " + named.getName());
      }
    }
  }

  /** Every class a (generic) type mentions. */
  private static Set<Class<?>> mentioned(Type type, Set<Type> seen) {
    Set<Class<?>> out = new HashSet<>();
    if (type == null || !seen.add(type)) {
      return out;
    }
    if (type instanceof Class<?> c) {
      out.add(c.isArray() ? c.getComponentType() : c);
    } else if (type instanceof ParameterizedType p) {
      out.addAll(mentioned(p.getRawType(), seen));
      for (Type a : p.getActualTypeArguments()) {
        out.addAll(mentioned(a, seen));
      }
    } else if (type instanceof WildcardType w) {
      Stream.concat(Stream.of(w.getUpperBounds()), Stream.of(w.getLowerBounds())).forEach(b -> out.addAll(mentioned(b, seen)));
    } else if (type instanceof TypeVariable<?> v) {
      for (Type b : v.getBounds()) {
        out.addAll(mentioned(b, seen));
      }
    } else if (type instanceof GenericArrayType g) {
      out.addAll(mentioned(g.getGenericComponentType(), seen));
    }
    return out;
  }

  /** The classes of the module holding {@code anchor}: a classes folder (reactor) or a jar. */
  private static List<String> classNames(Class<?> anchor) throws IOException, URISyntaxException {
    Path root = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<String> names = new ArrayList<>();
    if (Files.isDirectory(root)) {
      try (Stream<Path> files = Files.walk(root)) {
        files.filter(f -> f.toString().endsWith(".class") && !f.getFileName().toString().equals("package-info.class"))
            .forEach(f -> names.add(toName(root.relativize(f).toString().replace('\\', '/'))));
      }
    } else {
      try (JarFile jar = new JarFile(root.toFile())) {
        jar.stream().map(e -> e.getName())
            .filter(n -> n.endsWith(".class") && !n.endsWith("package-info.class") && !n.startsWith("META-INF/"))
            .forEach(n -> names.add(toName(n)));
      }
    }
    return names;
  }

  private static String toName(String path) {
    return path.substring(0, path.length() - ".class".length()).replace('/', '.');
  }
}
