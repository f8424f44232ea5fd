package dev.ferry.demo;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The main job's options, parsed and checked up front: a bad command line is reported with every
 * problem at once, before anything starts.
 *
 * @param duration how long the load is offered in each measured run (the job then waits for the
 *     last replies)
 * @param warmup how long the same load runs through Ferry first, in each dispatch mode measured,
 *     to warm the JVM and the database; reported apart, never in the table (zero: no warm-up)
 * @param hot number of hot accounts receiving the bulk import
 * @param quiet number of quiet accounts, each touched now and then
 * @param rate bulk-import deposits per second, spread over the hot accounts
 * @param quietRate quiet operations per second, spread at random over the quiet accounts
 * @param importWindow the most bulk-import deposits awaiting a reply; the import holds back beyond it
 * @param seed seed for the random amounts and quiet accounts (same seed, same offered load)
 * @param store the database behind the store
 * @param report where to write the HTML report; null for none
 * @param compare whether to run the same load without Ferry too (one store call per input)
 * @param progress whether to print the live progress line
 */
public record JobOptions(
    Duration duration, Duration warmup, int hot, int quiet, int rate, int quietRate, int importWindow, long seed,
    StoreKind store, Path report, boolean compare, boolean progress) {

  public static final Duration MAX_DURATION = Duration.ofMinutes(10);
  public static final Path DEFAULT_REPORT = Path.of("target", "main-job.html");

  /** The database behind the store. */
  public enum StoreKind {
    /** Embedded PostgreSQL: a server process of its own on loopback, through PgStore. */
    PG,
    /** Embedded H2: in memory, inside the job's JVM, through JdbcStore. */
    H2
  }

  /**
   * The defaults: 5 s of warm-up, then 10 s of load on 4 hot and 2,000 quiet accounts, with and
   * without Ferry. The import's 20,000 deposits/s stays: a lower default was measured to leave no
   * more CPU to spare (docs/adr/0073-main-job-store-under-load.md).
   */
  public static JobOptions defaults() {
    return new JobOptions(Duration.ofSeconds(10), Duration.ofSeconds(5), 4, 2000, 20_000, 500, 1000, 42L,
        StoreKind.PG, DEFAULT_REPORT, true, true);
  }

  public static final String USAGE = String.join("\n",
      "usage: java -cp target/ferry.jar dev.ferry.demo.MainJob [options]",
      "",
      "  --duration D       how long each measured run offers load: 500ms, 15s, 1m (default 10s, 100ms to 10m)",
      "  --warmup D         one warm-up round per Ferry mode, not measured; up to 4 rounds while the JIT compiles (default 5s, 0 for none, at most 10m)",
      "  --store S          pg: embedded PostgreSQL, its own process (default); h2: in memory, in this JVM",
      "  --hot N            hot accounts getting the bulk import (default 4, 1 to 10000)",
      "  --quiet N          quiet accounts, each touched now and then (default 2000, 0 to 1000000)",
      "  --rate N           bulk-import deposits per second over the hot accounts (default 20000, 1 to 1000000)",
      "  --quiet-rate N     quiet operations per second over the quiet accounts (default 500, 0 to 1000000)",
      "  --import-window N  most bulk-import deposits awaiting a reply (default 1000, 1 to 1000000)",
      "  --seed N           random seed (default 42)",
      "  --report FILE      where to write the HTML report (default target/main-job.html; not with --no-report)",
      "  --no-report        no HTML report",
      "  --no-compare       only the run through Ferry (no fixed-slots run, no unbatched run)",
      "  --no-progress      no live progress line",
      "  --help             this text");

  /** Thrown for a bad command line; the message names every problem. */
  public static final class BadOptions extends IllegalArgumentException {
    public BadOptions(String message) {
      super(message);
    }
  }

  /** Thrown for {@code --help}. */
  public static final class HelpRequested extends RuntimeException {
    public HelpRequested() {
      super("help requested", null, false, false);
    }
  }

  /**
   * Parses {@code --name value} or {@code --name=value} arguments over the defaults.
   *
   * @throws BadOptions naming every unknown option, missing value, malformed or out-of-range value
   * @throws HelpRequested for {@code --help} or {@code -h}
   */
  public static JobOptions parse(String... args) {
    JobOptions d = defaults();
    Duration duration = d.duration;
    Duration warmup = d.warmup;
    StoreKind store = d.store;
    Path report = d.report;
    boolean compare = d.compare;
    Long hot = (long) d.hot;
    Long quiet = (long) d.quiet;
    Long rate = (long) d.rate;
    Long quietRate = (long) d.quietRate;
    Long importWindow = (long) d.importWindow;
    Long seed = d.seed;
    boolean progress = d.progress;
    List<String> problems = new ArrayList<>();
    // An option given twice is refused, not read as its last value: the run would measure another
    // load than the one on the command line a reader looks at first.
    Set<String> given = new HashSet<>();
    boolean noReport = false;

    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--help") || arg.equals("-h")) {
        throw new HelpRequested();
      }
      if (arg.equals("--no-progress")) {
        progress = false;
        continue;
      }
      if (arg.equals("--no-report")) {
        report = null;
        noReport = true;
        continue;
      }
      if (arg.equals("--no-compare")) {
        compare = false;
        continue;
      }
      String name = arg;
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        name = arg.substring(0, eq);
        value = arg.substring(eq + 1);
      }
      if (!List.of("--duration", "--warmup", "--store", "--report", "--hot", "--quiet", "--rate", "--quiet-rate", "--import-window", "--seed").contains(name)) {
        problems.add(arg + ": unknown option");
        continue;
      }
      if (!given.add(name)) {
        problems.add(name + ": given twice");
      }
      if (value == null) {
        // The next option is not this one's value: "--report --no-compare" (the file name
        // forgotten) wrote a report named "--no-compare" and ran the runs it turned off.
        // "--report=--odd" still takes such a value on purpose; "-3" is a value (a number).
        if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
          problems.add(name + ": missing value");
          continue;
        }
        value = args[++i];
      }
      switch (name) {
        case "--duration" -> duration = duration(name, value, problems);
        case "--warmup" -> warmup = duration(name, value, problems);
        case "--store" -> store = store(value, problems);
        case "--report" -> report = value.isBlank() ? badReport(problems) : writable("--report " + value, value, problems, "");
        case "--hot" -> hot = number(name, value, problems);
        case "--quiet" -> quiet = number(name, value, problems);
        case "--rate" -> rate = number(name, value, problems);
        case "--quiet-rate" -> quietRate = number(name, value, problems);
        case "--import-window" -> importWindow = number(name, value, problems);
        case "--seed" -> seed = number(name, value, problems);
        default -> throw new AssertionError(name);
      }
    }

    if (noReport && given.contains("--report")) {
      // Whichever came last won, silently: a report asked for was not written, or the reverse.
      problems.add("--report and --no-report: give one");
    } else if (report != null && !given.contains("--report")) {
      // The default is checked as a given path is: run where target is a file or read-only, the
      // job ran every run and then died writing it.
      report = writable("report " + DEFAULT_REPORT + " (the default report)", DEFAULT_REPORT.toString(), problems,
          " (give --report FILE or --no-report)");
    }
    if (duration != null && (duration.toMillis() < 100 || duration.compareTo(MAX_DURATION) > 0)) {
      problems.add("--duration " + format(duration) + ": must be between 100ms and 10m");
    }
    if (warmup != null && (warmup.isNegative() || warmup.compareTo(MAX_DURATION) > 0)) {
      problems.add("--warmup " + format(warmup) + ": must be between 0 and 10m");
    }
    range(problems, "--hot", hot, 1, 10_000);
    range(problems, "--quiet", quiet, 0, 1_000_000);
    range(problems, "--rate", rate, 1, 1_000_000);
    range(problems, "--quiet-rate", quietRate, 0, 1_000_000);
    range(problems, "--import-window", importWindow, 1, 1_000_000);
    if (quiet != null && quietRate != null && quiet == 0 && quietRate > 0 && !explicit(args, "--quiet-rate")) {
      quietRate = 0L; // --quiet 0 alone means "no quiet traffic", not an error
    } else if (quiet != null && quietRate != null && quiet == 0 && quietRate > 0) {
      problems.add("--quiet-rate " + quietRate + ": needs quiet accounts (--quiet is 0)");
    }
    if (!problems.isEmpty()) {
      throw new BadOptions(String.join("; ", problems));
    }
    return new JobOptions(duration, warmup, hot.intValue(), quiet.intValue(), rate.intValue(), quietRate.intValue(),
        importWindow.intValue(), seed, store, report, compare, progress);
  }

  private static boolean explicit(String[] args, String name) {
    for (String a : args) {
      if (a.equals(name) || a.startsWith(name + "=")) {
        return true;
      }
    }
    return false;
  }

  private static void range(List<String> problems, String name, Long value, long min, long max) {
    if (value != null && (value < min || value > max)) {
      problems.add(name + " " + value + ": must be between " + min + " and " + max);
    }
  }

  /** A whole number; null (already reported) when malformed, so that every long stays a value to check. */
  private static Long number(String name, String value, List<String> problems) {
    try {
      return Long.parseLong(value.replace("_", ""));
    } catch (NumberFormatException e) {
      problems.add(name + " " + value + ": not a whole number");
      return null;
    }
  }

  private static StoreKind store(String value, List<String> problems) {
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "pg", "postgres", "postgresql" -> StoreKind.PG;
      case "h2" -> StoreKind.H2;
      default -> {
        problems.add("--store " + value + ": must be pg or h2");
        yield null;
      }
    };
  }

  /**
   * The report's path, when the job will be able to write it: not a folder, and its nearest
   * existing ancestor a writable folder (the missing ones are created at the end). Checked here,
   * without touching the file system, so that a path that cannot be written is refused before
   * the runs rather than after them. Null (reported) otherwise.
   */
  private static Path writable(String named, String value, List<String> problems, String hint) {
    Path file;
    try {
      file = Path.of(value);
    } catch (java.nio.file.InvalidPathException e) {
      problems.add(named + ": cannot be written: " + e.getReason());
      return null;
    }
    Path absolute = file.toAbsolutePath();
    String why = null;
    if (java.nio.file.Files.isDirectory(absolute)) {
      why = "it is a folder";
    } else if (java.nio.file.Files.exists(absolute)) {
      why = java.nio.file.Files.isWritable(absolute) ? null : "the file is not writable";
    } else {
      Path ancestor = absolute.getParent();
      while (ancestor != null && !java.nio.file.Files.exists(ancestor)) {
        ancestor = ancestor.getParent();
      }
      if (ancestor != null && !java.nio.file.Files.isDirectory(ancestor)) {
        why = ancestor + " is not a folder";
      } else if (ancestor != null && !java.nio.file.Files.isWritable(ancestor)) {
        why = "the folder " + ancestor + " is not writable";
      }
    }
    if (why != null) {
      problems.add(named + ": cannot be written: " + why + hint);
      return null;
    }
    return file;
  }

  private static Path badReport(List<String> problems) {
    problems.add("--report: needs a file name");
    return null;
  }

  private static final java.util.regex.Pattern DURATION =
      java.util.regex.Pattern.compile("[+-]?(\\d+(\\.\\d*)?|\\.\\d+)(ms|s|m)?");

  /** 250ms, 15s, 2m, or a bare number of seconds; null (already reported) when malformed or under 1ms. */
  static Duration duration(String name, String value, List<String> problems) {
    Duration d = parseDuration(name, value, problems);
    // Rounded to whole ms: a positive value under half a ms came out as zero, which for --warmup
    // means "no warm-up", not a short one.
    // (parsed, so well formed: a non-zero digit in it means a positive value)
    if (d != null && d.isZero() && value.chars().anyMatch(c -> c >= '1' && c <= '9')) {
      problems.add(name + " " + value + ": under 1ms (give 0 for none, or at least 1ms)");
      return null;
    }
    return d;
  }

  private static Duration parseDuration(String name, String value, List<String> problems) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    try {
      // Plain decimal numbers only: Java's number syntax would also take "1d" or "5f" (a type
      // suffix) and "0x1p3" (hexadecimal), and run them as seconds.
      if (!DURATION.matcher(v).matches()) {
        throw new NumberFormatException(v);
      }
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      }
      if (v.endsWith("s")) {
        return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
      }
      if (v.endsWith("m")) {
        return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 60_000));
      }
      return Duration.ofMillis(Math.round(Double.parseDouble(v) * 1000));
    } catch (NumberFormatException | ArithmeticException e) {
      problems.add(name + " " + value + ": not a duration (examples: 500ms, 15s, 1m)");
      return null;
    }
  }

  static String format(Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
  }
}
