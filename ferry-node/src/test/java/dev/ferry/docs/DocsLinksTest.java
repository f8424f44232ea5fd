package dev.ferry.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The ADR index lists every record, each record has one status line, and no reference to a record points nowhere. */
class DocsLinksTest {
  private static final Path ROOT = Path.of("..");
  private static final Path ADR = ROOT.resolve("docs/adr");
  private static final Pattern REFERENCE = Pattern.compile("adr/(\\d{4}-[a-z0-9-]+\\.md)");

  @Test
  void theIndexListsEveryRecordAndEachHasOneStatusLine() throws IOException {
    String index = Files.readString(ADR.resolve("README.md"));
    List<String> problems = new ArrayList<>();
    try (Stream<Path> records = Files.list(ADR)) {
      for (Path p : records.filter(p -> p.getFileName().toString().matches("\\d{4}-.*\\.md")).sorted().toList()) {
        String name = p.getFileName().toString();
        List<String> lines = Files.readAllLines(p);
        if (!index.contains("(" + name + ")")) {
          String title = lines.isEmpty() ? "" : lines.get(0).replaceFirst("^# \\d+\\. ", "");
          String status = lines.size() > 2 ? lines.get(2).replaceFirst("^Status: ", "") : "";
          problems.add(name + ": not listed in docs/adr/README.md; add the line | [" + name.substring(0, 4) + "]("
              + name + ") | " + title + " | " + status + " |");
        }
        if (lines.size() < 3 || !lines.get(0).startsWith("# " + name.substring(0, 4) + ". ")
            || !lines.get(2).startsWith("Status: ")) {
          problems.add(name + ": must start with \"# NNNN. Title\", a blank line and \"Status: ...\"");
        }
      }
    }
    assertEquals(List.of(), problems);
  }

  @Test
  void everyReferenceToARecordResolves() throws IOException {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> all = Files.walk(ROOT)) {
      all.filter(p -> {
        String s = p.toString().replace('\\', '/');
        return (s.endsWith(".md") || s.endsWith(".java")) && !s.contains("/target/") && !s.contains("/.git/");
      }).forEach(files::add);
    }
    List<String> dead = new ArrayList<>();
    int references = 0;
    for (Path f : files) {
      Matcher m = REFERENCE.matcher(Files.readString(f));
      while (m.find()) {
        references++;
        if (!Files.exists(ADR.resolve(m.group(1)))) {
          dead.add(ROOT.relativize(f) + ": " + m.group());
        }
      }
    }
    assertTrue(references > 10, "found only " + references + " references");
    assertEquals(List.of(), dead);
  }
}
