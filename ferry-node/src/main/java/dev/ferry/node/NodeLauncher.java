package dev.ferry.node;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.launcher.application.ExitCodes;
import io.vertx.launcher.application.VertxApplication;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The main class of {@code target/ferry.jar}: Vert.x's launcher ({@link VertxApplication}), with
 * its JSON options checked first.
 *
 * <p>The launcher reads {@code -conf}, {@code -options} and {@code -deployment-options} as a file
 * or inline JSON, and when neither reads it logs a warning and goes on without them. A mistyped
 * path ({@code -conf conf/ferry.jsn}) then deployed FerryVerticle with an empty config, and the
 * node failed on "downstream: missing", which points at the config's content rather than at its
 * path. Here such an option stops the node at once, with exit code 2 (the launcher's usage error)
 * and a message that names the option, its value and what went wrong.
 *
 * <p>Runs on the JVM's main thread, before Vert.x exists.
 */
public final class NodeLauncher extends VertxApplication {
  /** The launcher's options whose value is a JSON object, given as a file or inline. */
  private static final List<String> JSON_OPTIONS = List.of(
      "-conf", "--conf", "-options", "--options", "-vertx-options", "--vertx-options",
      "-deployment-options", "--deployment-options");

  // A subclass, not a call to VertxApplication.main: the launcher finds its Main-Verticle in the
  // manifest whose Main-Class is the launcher's own class.
  private NodeLauncher(String[] args) {
    super(args);
  }

  public static void main(String[] args) {
    String problem = problem(args);
    if (problem != null) {
      System.err.println("ferry: " + problem);
      System.exit(ExitCodes.USAGE);
    }
    new NodeLauncher(args).launch();
  }

  /** What is wrong with the JSON options in {@code args}, or null when each reads as a JSON object. */
  static String problem(String[] args) {
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      int eq = arg.indexOf('=');
      // Case does not matter to the launcher's parser (-CONF is -conf).
      String name = (eq > 0 ? arg.substring(0, eq) : arg).toLowerCase(Locale.ROOT);
      if (!JSON_OPTIONS.contains(name)) {
        continue;
      }
      String value;
      if (eq > 0) {
        value = arg.substring(eq + 1);
      } else if (i + 1 < args.length) {
        value = args[++i];
      } else {
        continue; // the launcher itself reports a missing value
      }
      if (value.startsWith("@")) {
        continue; // an argument file, expanded by the launcher's parser: what it holds is its to read
      }
      String why = unreadable(value);
      if (why != null) {
        return name + " " + value + ": " + why;
      }
    }
    return null;
  }

  /** Why {@code value} is neither a file holding a JSON object nor one inline, as the launcher reads it; null if it is. */
  private static String unreadable(String value) {
    if (value.strip().startsWith("{")) {
      try {
        new JsonObject(value);
        return null;
      } catch (DecodeException e) {
        return "not a valid JSON object (" + e.getMessage() + ")";
      }
    }
    try {
      // Bytes, as the launcher reads them: Jackson finds the encoding (UTF-16, a byte order mark),
      // which reading the file as UTF-8 text refused (review J).
      new JsonObject(Buffer.buffer(Files.readAllBytes(Path.of(value))));
      return null;
    } catch (NoSuchFileException e) {
      return "no such file (give a file, or a JSON object inline)";
    } catch (InvalidPathException | IOException e) {
      return "cannot read the file (" + e + ")";
    } catch (DecodeException | ClassCastException e) {
      return "the file does not hold a JSON object (" + e.getMessage() + ")";
    }
  }
}
