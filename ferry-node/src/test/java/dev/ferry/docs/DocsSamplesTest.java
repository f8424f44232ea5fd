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

/**
 * Every Java sample in the README and the guides is a region of a class in this package, which
 * compiles with the build: each {@code ```java} block is preceded by {@code <!-- sample:
 * File.java#region -->} and must equal that region (between {@code // [region]} and {@code //
 * [/region]}, de-indented). A sample edited in the docs only, or code changed under a sample,
 * fails here with the text the docs should show.
 */
class DocsSamplesTest {
  private static final Path ROOT = Path.of("..");
  private static final Path SAMPLES = Path.of("src/test/java/dev/ferry/docs");
  private static final Pattern MARKER = Pattern.compile("<!-- sample: (\\w+\\.java)#([\\w-]+) -->");

  @Test
  void everyJavaBlockInTheDocsIsACompiledSample() throws IOException {
    List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md")));
    try (Stream<Path> guides = Files.list(ROOT.resolve("docs/guide"))) {
      guides.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    try (Stream<Path> top = Files.list(ROOT.resolve("docs"))) {
      top.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    List<String> problems = new ArrayList<>();
    int samples = 0;
    for (Path doc : docs) {
      List<String> lines = Files.readAllLines(doc);
      for (int i = 0; i < lines.size(); i++) {
        if (!lines.get(i).trim().equals("```java")) {
          continue;
        }
        int end = i + 1;
        while (end < lines.size() && !lines.get(end).trim().equals("```")) {
          end++;
        }
        String shown = String.join("\n", lines.subList(i + 1, end));
        String where = ROOT.relativize(doc) + ":" + (i + 1);
        Matcher m = i > 0 ? MARKER.matcher(lines.get(i - 1).trim()) : null;
        if (m == null || !m.matches()) {
          problems.add(where + ": a ```java block without a <!-- sample: File.java#region --> line above it");
        } else {
          samples++;
          String expected = region(m.group(1), m.group(2));
          if (expected == null) {
            problems.add(where + ": no region " + m.group(2) + " in " + m.group(1));
          } else if (!expected.equals(shown)) {
            problems.add(where + ": differs from " + m.group(1) + "#" + m.group(2) + "; it should read:\n" + expected);
          }
        }
        i = end;
      }
    }
    assertTrue(samples >= 14, "found only " + samples + " samples");
    assertEquals(List.of(), problems, String.join("\n\n", problems));
  }

  /** The region's lines, with the indentation they share removed; null when there is none. */
  static String region(String file, String name) throws IOException {
    List<String> lines = Files.readAllLines(SAMPLES.resolve(file));
    int from = -1;
    int to = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).trim().equals("// [" + name + "]")) {
        from = i + 1;
      } else if (lines.get(i).trim().equals("// [/" + name + "]")) {
        to = i;
      }
    }
    if (from < 0 || to < from) {
      return null;
    }
    List<String> body = lines.subList(from, to);
    int indent = body.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    List<String> out = new ArrayList<>();
    for (String l : body) {
      out.add(l.isBlank() ? "" : l.substring(indent));
    }
    return String.join("\n", out);
  }
}
