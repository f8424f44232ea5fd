package dev.ferry.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.ferry.Ferry;
import dev.ferry.FerryConfig;
import dev.ferry.FerryError;
import dev.ferry.FerryMetrics;
import dev.ferry.InvalidConfigException;
import dev.ferry.PerKeyConfig;
import dev.ferry.verticle.FerryClient;
import dev.ferry.verticle.FerryMeterBinder;
import dev.ferry.verticle.FerryVerticle;
import dev.ferry.verticle.FerryVerticleOptions;
import dev.ferry.verticle.HttpSettings;
import dev.ferry.verticle.OpsConfig;
import dev.ferry.verticle.Submission;
import dev.ferry.verticle.VerticleConfig;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Every name a user types or reads (config fields, their defaults, headers, failure codes, metrics
 * fields, meter names, health data) taken from the code and looked up in the guide that documents
 * it, and every name those tables list looked up in the code: a field added without a row, a row
 * left behind by a rename, or a default changed on one side only fails here, naming both sides.
 * The names come from the code itself (its field sets, its "unknown field (known: ...)" messages,
 * the meters a binder registers, a deployed verticle's health answer), not from a list kept here.
 */
class DocsNamesTest {
  private static final Path ROOT = Path.of("..");
  private static final Pattern TICKED = Pattern.compile("`([^`]+)`");
  private static final Pattern KNOWN = Pattern.compile("(\\S+): unknown field \\(known: ([^)]*)\\)");

  // ---------------------------------------------------------------- the verticle's config

  @Test
  void theVerticleTableListsExactlyTheFieldsTheVerticleReads() throws IOException {
    assertEquals(new TreeSet<>(VerticleConfig.fieldNames()), firstColumnNames(verticleTable()),
        "docs/guide/verticle.md, \"conf/ferry.json, field by field\" against VerticleConfig.fieldNames()");
  }

  @Test
  void theVerticleTableDefaultsAreTheOnesTheDeploymentApplies() throws IOException {
    JsonObject applied = appliedVerticleDefaults();
    List<String> problems = new ArrayList<>();
    for (List<String> row : verticleTable()) {
      String field = ticked(row.get(0)).get(0);
      Object documented = literal(row.get(1));
      if (documented == NOT_A_LITERAL) {
        continue;
      }
      if (!applied.containsKey(field)) {
        problems.add(field + ": documented default " + row.get(1) + ", but no plain default in the code");
      } else if (!same(documented, applied.getValue(field))) {
        problems.add(field + ": documented default " + row.get(1) + ", applied " + applied.getValue(field));
      }
    }
    // Every field with a plain default in the code has it written in its row (not "see below").
    for (String field : applied.fieldNames()) {
      List<String> row = row(verticleTable(), field);
      if (row != null && literal(row.get(1)) == NOT_A_LITERAL && !unbounded(row.get(1), applied.getValue(field))) {
        problems.add(field + ": the code's default " + applied.getValue(field) + " is not in its row (" + row.get(1) + ")");
      }
    }
    assertEquals(List.of(), problems, String.join("\n", problems));
  }

  @Test
  void confFerryJsonHoldsTheDefaultsAndIsRead() throws IOException {
    JsonObject conf = new JsonObject(Files.readString(ROOT.resolve("conf/ferry.json")));
    VerticleConfig.read(conf); // throws, naming the field, if the shipped config went stale
    JsonObject applied = appliedVerticleDefaults();
    List<String> problems = new ArrayList<>();
    for (String field : conf.fieldNames()) {
      if (!field.equals("downstream") && !same(conf.getValue(field), applied.getValue(field))) {
        problems.add(field + " = " + conf.getValue(field) + " in conf/ferry.json, default " + applied.getValue(field));
      }
    }
    assertEquals(List.of(), problems, "conf/ferry.json is \"the documented default\": " + problems);
  }

  @Test
  void theTypedOptionsHaveAnAccessorForEveryFieldWithTheSameDefault() throws Exception {
    JsonObject applied = appliedVerticleDefaults();
    FerryVerticleOptions options = new FerryVerticleOptions();
    List<String> problems = new ArrayList<>();
    for (String field : new TreeSet<>(VerticleConfig.fieldNames())) {
      String cap = Character.toUpperCase(field.charAt(0)) + field.substring(1);
      Method getter = method(FerryVerticleOptions.class, "get" + cap);
      getter = getter != null ? getter : method(FerryVerticleOptions.class, "is" + cap);
      if (getter == null) {
        problems.add(field + ": no getter");
      } else if (applied.containsKey(field) && !same(getter.invoke(options), applied.getValue(field))) {
        problems.add(field + ": " + getter.getName() + "() gives " + getter.invoke(options) + ", the deployment " + applied.getValue(field));
      }
      if (Arrays.stream(FerryVerticleOptions.class.getMethods()).noneMatch(m -> m.getName().equals("set" + cap))) {
        problems.add(field + ": no setter");
      }
    }
    assertEquals(List.of(), problems, String.join("\n", problems));
  }

  @Test
  void theDownstreamTablesListExactlyTheFieldsTheDownstreamReads() throws IOException {
    // The event bus's: the downstream row's own example.
    JsonObject eventbus = firstJson(row(verticleTable(), "downstream").get(2));
    assertEquals(known("downstream", eventBusDownstream().put("nope", 1)), eventbus.fieldNames(),
        "the downstream row's event-bus example");
    // HTTP's: its own table, tls.* rows included.
    List<List<String>> http = table("docs/guide/verticle.md", "| field (inside `downstream`)");
    Set<String> top = new TreeSet<>();
    Set<String> tls = new TreeSet<>();
    for (String name : firstColumnNamesAll(http)) {
      (name.startsWith("tls.") ? tls : top).add(name.startsWith("tls.") ? name.substring(4) : name);
    }
    top.add("type");
    assertEquals(known("downstream", httpsDownstream().put("nope", 1)), top, "the HTTP downstream table");
    assertEquals(known("downstream.tls", httpsDownstream().put("tls", new JsonObject().put("nope", 1))), tls,
        "the HTTP downstream table's tls.* rows");
    JsonObject store = firstJson(row(http, "tls.trustStore").get(2));
    assertEquals(known("downstream.tls.trustStore", httpsDownstream().put("tls",
        new JsonObject().put("trustStore", new JsonObject().put("path", "p").put("nope", 1)))), store.fieldNames(),
        "the tls.trustStore row's example");
  }

  @Test
  void theHttpDownstreamDefaultsAreTheOnesApplied() throws IOException {
    List<List<String>> http = table("docs/guide/verticle.md", "| field (inside `downstream`)");
    VerticleConfig read = VerticleConfig.read(new JsonObject().put("callTimeoutMs", 1234).put("downstream",
        httpsDownstream().put("tls", new JsonObject().put("trustStore", new JsonObject().put("path", "p")))));
    HttpSettings settings = read.downstream().httpSettings();
    assertEquals("`callTimeoutMs`", row(http, "timeoutMs").get(1));
    assertEquals(1234, read.downstream().timeoutMs(), "downstream.timeoutMs defaults to callTimeoutMs");
    assertEquals(settings.maxResponseBytes(), literal(row(http, "maxResponseBytes").get(1)));
    assertEquals(settings.keepAliveTimeoutMs(), literal(row(http, "keepAliveTimeoutMs").get(1)));
    assertEquals(settings.tls().verifyHost(), literal(row(http, "tls.verifyHost").get(1)));
    assertEquals(settings.tls().trustAll(), literal(row(http, "tls.trustAll").get(1)));
    JsonObject store = firstJson(row(http, "tls.trustStore").get(2));
    assertEquals(settings.tls().trustStore().type(), store.getString("type"), "the trust store's default type");
  }

  @Test
  void theMonitoringAndBridgeExamplesNameTheirFieldsAndDefaults() throws IOException {
    VerticleConfig read = VerticleConfig.read(eventBusConfig()
        .put("monitoring", new JsonObject().put("port", 1)).put("bridge", new JsonObject().put("port", 2)));
    JsonObject monitoring = firstJson(row(verticleTable(), "monitoring").get(2));
    assertEquals(known("monitoring", eventBusConfig().put("monitoring", new JsonObject().put("port", 1).put("nope", 1))),
        monitoring.fieldNames(), "the monitoring row's example");
    assertEquals(read.ops().monitoring().host(), monitoring.getString("host"));
    JsonObject bridge = firstJson(row(verticleTable(), "bridge").get(2));
    assertEquals(known("bridge", eventBusConfig().put("bridge", new JsonObject().put("port", 1).put("nope", 1))),
        bridge.fieldNames(), "the bridge row's example");
    OpsConfig.Bridge b = read.ops().bridge();
    assertEquals(b.endpoint().host(), bridge.getString("host"));
    assertEquals(b.permitMetrics(), bridge.getBoolean("permitMetrics"));
    assertEquals(b.permitHealth(), bridge.getBoolean("permitHealth"));
    assertEquals(b.maxFrameBytes(), bridge.getInteger("maxFrameBytes"));
    assertEquals(b.idleTimeoutMs(), bridge.getLong("idleTimeoutMs"));
  }

  /**
   * Every config example the guides write inline ({@code `"pinnedLimit": n`}) and the one JSON
   * block of the verticle guide is a config the verticle accepts: a typo in an example is the
   * first thing a user copies.
   */
  @Test
  void theConfigExamplesInTheDocsAreAccepted() throws IOException {
    List<String> problems = new ArrayList<>();
    Pattern inline = Pattern.compile("`(\"[a-zA-Z]+\": [^`]*)`");
    for (String doc : List.of("README.md", "docs/guide/verticle.md", "docs/guide/per-key.md", "docs/operations.md",
        "docs/guide/clustering.md")) {
      Matcher m = inline.matcher(Files.readString(ROOT.resolve(doc)));
      while (m.find()) {
        String example = m.group(1);
        if (example.startsWith("\"metricsOptions\"")) {
          continue; // Vert.x's own options (-options), not the verticle's config
        }
        check(problems, doc, example, "{" + example.replaceAll(": n\\b", ": 1").replace("<name>", "app") + "}");
      }
    }
    String verticle = Files.readString(ROOT.resolve("docs/guide/verticle.md"));
    Matcher block = Pattern.compile("```json\\n(.*?)```", Pattern.DOTALL).matcher(verticle);
    int blocks = 0;
    while (block.find()) {
      blocks++;
      check(problems, "docs/guide/verticle.md", block.group(1), "{" + block.group(1) + "}");
    }
    assertTrue(blocks >= 1, "the verticle guide's JSON block was not found");
    assertEquals(List.of(), problems, String.join("\n", problems));
  }

  private static void check(List<String> problems, String doc, String shown, String json) {
    try {
      JsonObject config = new JsonObject(json);
      if (!config.containsKey("downstream")) {
        config.put("downstream", eventBusDownstream());
      }
      VerticleConfig.read(config);
    } catch (InvalidConfigException | io.vertx.core.json.DecodeException e) {
      problems.add(doc + ": " + shown.strip() + " -> " + e.getMessage());
    }
  }

  // ---------------------------------------------------------------- the library's configs

  @Test
  void thePerKeyTableListsExactlyTheConfigsFieldsWithTheirDefaults() throws Exception {
    List<List<String>> rows = table("docs/guide/per-key.md", "| field | default | rule |");
    checkLibraryTable("per-key.md", rows, PerKeyConfig.jsonFieldNames(), PerKeyConfig.defaults().toJson(),
        PerKeyConfig.Builder.class);
  }

  @Test
  void theMakeAndKeyedTableListsExactlyTheConfigsFieldsWithTheirDefaults() throws Exception {
    List<List<String>> rows = table("docs/guide/make-and-keyed.md", "| setting | default | what it does |");
    checkLibraryTable("make-and-keyed.md", rows, FerryConfig.jsonFieldNames(), FerryConfig.defaults().toJson(),
        FerryConfig.Builder.class);
  }

  /**
   * A row names the builder's method first and, when it differs, the JSON field last
   * ({@code `callTimeout` (`callTimeoutMs` in JSON)}); a duration's default is in seconds there.
   */
  private static void checkLibraryTable(String doc, List<List<String>> rows, Set<String> jsonFields, JsonObject defaults,
      Class<?> builder) {
    List<String> problems = new ArrayList<>();
    Set<String> documented = new TreeSet<>();
    for (List<String> row : rows) {
      List<String> names = ticked(row.get(0));
      String method = names.get(0);
      String json = names.get(names.size() - 1);
      documented.add(json);
      if (Arrays.stream(builder.getMethods()).noneMatch(m -> m.getName().equals(method))) {
        problems.add(doc + ": " + method + " is no method of " + builder.getSimpleName());
      }
      Object shown = literal(row.get(1));
      Matcher seconds = Pattern.compile("(\\d+) s").matcher(row.get(1));
      if (seconds.matches()) {
        shown = Long.parseLong(seconds.group(1)) * 1000;
      }
      Object actual = defaults.getValue(json);
      if (shown != NOT_A_LITERAL && !same(shown, actual)) {
        problems.add(doc + ": " + json + " documented default " + row.get(1) + ", the code's " + actual);
      }
      if (shown == NOT_A_LITERAL && actual != null && !row.get(1).contains(String.valueOf(actual))) {
        problems.add(doc + ": " + json + " default " + actual + " is not in its row (" + row.get(1) + ")");
      }
    }
    if (!documented.equals(new TreeSet<>(jsonFields))) {
      problems.add(doc + ": the table lists " + documented + ", the config reads " + new TreeSet<>(jsonFields));
    }
    assertEquals(List.of(), problems, String.join("\n", problems));
  }

  // ---------------------------------------------------------------- submitting and answers

  @Test
  void theHeaderTableListsExactlyTheClientsHeaders() throws Exception {
    Set<String> code = new TreeSet<>();
    for (Field f : FerryClient.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getName().endsWith("_HEADER")) {
        code.add((String) f.get(null));
      }
    }
    code.add(Submission.RESERVED_PREFIX + "*");
    assertEquals(code, firstColumnNames(table("docs/guide/verticle.md", "| header | required | meaning |")),
        "docs/guide/verticle.md, the headers of a submission");
  }

  @Test
  void theFailureCodeTableIsFerryErrorExactly() throws IOException {
    Map<String, String> documented = new LinkedHashMap<>();
    for (List<String> row : table("docs/guide/verticle.md", "## Replies and failure codes")) {
      documented.put(row.get(1), row.get(0));
    }
    Map<String, String> code = new LinkedHashMap<>();
    for (FerryError e : FerryError.values()) {
      code.put(e.name(), String.valueOf(e.code()));
    }
    assertEquals(new TreeSet<>(code.entrySet().stream().map(Object::toString).toList()),
        new TreeSet<>(documented.entrySet().stream().map(Object::toString).toList()), "kind=code");
  }

  // ---------------------------------------------------------------- metrics and health

  @Test
  void everyMetricsFieldIsDocumentedWhereTheSnapshotIsDescribed() throws IOException {
    Set<String> fields = Arrays.stream(FerryMetrics.class.getRecordComponents()).map(RecordComponent::getName)
        .collect(Collectors.toCollection(TreeSet::new));
    assertEquals(fields, FerryMetrics.EMPTY.toJson().fieldNames().stream().collect(Collectors.toCollection(TreeSet::new)),
        "toJson() writes every component under its own name");
    String perKey = section("docs/guide/per-key.md", "## Metrics");
    Set<String> shownPerKey = ticked(perKey).stream().filter(fields::contains).collect(Collectors.toCollection(TreeSet::new));
    assertEquals(fields, shownPerKey, "per-key.md, Metrics");
    // The verticle guide's sentence lists the snapshot's fields, and nothing else, before its "(see".
    String verticle = Files.readString(ROOT.resolve("docs/guide/verticle.md"));
    int from = verticle.indexOf("`ferry.metrics` answers any request with a snapshot:");
    assertTrue(from >= 0, "the verticle guide's ferry.metrics sentence moved");
    String sentence = verticle.substring(from + "`ferry.metrics`".length(), verticle.indexOf("(see", from));
    assertEquals(fields, new TreeSet<>(ticked(sentence)), "verticle.md, what ferry.metrics answers");
  }

  @Test
  void theMeterTableListsExactlyTheMetersABinderRegisters() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      Ferry<String, String> ferry = Ferry.perKey(vertx, PerKeyConfig.defaults(), s -> s,
          (String k, List<String> batch) -> Future.succeededFuture(batch), (s, r) -> s);
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      FerryMeterBinder.bind(ferry, registry, "docs");
      Set<String> registered = registry.getMeters().stream().map(m -> m.getId().getName())
          .collect(Collectors.toCollection(TreeSet::new));
      Set<String> documented = new TreeSet<>();
      for (String name : firstColumnNamesAll(table("docs/operations.md", "| meter | kind |"))) {
        documented.add(name.replaceAll("\\{.*", ""));
      }
      assertEquals(registered, documented, "docs/operations.md's meter table against FerryMeterBinder");
      Set<String> reasons = registry.find("ferry.rejected").meters().stream().map(m -> m.getId().getTag("reason"))
          .collect(Collectors.toCollection(TreeSet::new));
      assertTrue(Files.readString(ROOT.resolve("docs/operations.md"))
          .contains("`ferry.rejected{reason=" + String.join("\\|", reasons) + "}`"), "ferry.rejected's reasons " + reasons);
      for (Meter m : registry.getMeters()) {
        assertEquals("docs", m.getId().getTag("ferry"), m.getId() + ": tagged ferry=<name>, as operations.md says");
      }
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * The health answer of a node that is up, at {@code healthAddress} and at {@code GET /health}:
   * operations.md shows its shape (where the check and its data are), and its Health section names
   * every field of the data.
   */
  @Test
  void theHealthAnswerHasTheDocumentedShapeAndEveryDataFieldIsNamed() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      vertx.eventBus().<JsonObject>consumer("docs.downstream", m -> m.reply(new JsonObject()));
      FerryVerticle verticle = new FerryVerticle(new FerryVerticleOptions(eventBusConfig()
          .put("monitoring", new JsonObject().put("port", 0))));
      await(vertx.deployVerticle(verticle));
      JsonObject health = await(vertx.eventBus().<JsonObject>request(OpsConfig.DEFAULT_HEALTH_ADDRESS, null)).body();
      HttpClient http = vertx.createHttpClient();
      String body = await(http.request(HttpMethod.GET, verticle.monitoringPort(), "127.0.0.1", "/health")
          .compose(req -> req.send()).compose(resp -> resp.body())).toString();
      http.close();
      assertEquals(shape(health), shape(new JsonObject(body)), "GET /health answers what healthAddress does");

      String section = section("docs/operations.md", "## Health");
      Matcher example = Pattern.compile("```json\n(.*?)```", Pattern.DOTALL).matcher(section);
      assertTrue(example.find(), "operations.md's Health section shows no health answer");
      JsonObject shown = new JsonObject(example.group(1).replace("...", "\"...\""));
      assertEquals(shape(health), shape(shown), "the answer operations.md shows, against the one a node gives");

      JsonObject data = health.getJsonArray("checks").getJsonObject(0).getJsonObject("data");
      Set<String> documented = new TreeSet<>(ticked(section.replaceAll("(?s)```.*?```", "")));
      List<String> missing = data.fieldNames().stream().filter(f -> !documented.contains(f)).sorted().toList();
      assertEquals(List.of(), missing, "health data fields the Health section never names (data: " + data.encode() + ")");
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /** The field names of a health answer, its checks' and their data's (not the metrics inside). */
  private static Set<String> shape(JsonObject health) {
    Set<String> out = new TreeSet<>(health.fieldNames());
    JsonObject check = health.getJsonArray("checks").getJsonObject(0);
    check.fieldNames().forEach(f -> out.add("checks[]." + f));
    check.getJsonObject("data").fieldNames().forEach(f -> out.add("checks[].data." + f));
    out.add("checks[].id=" + check.getString("id"));
    return out;
  }

  // ---------------------------------------------------------------- plumbing

  private static final Object NOT_A_LITERAL = new Object();

  /** A cell's plain value: {@code 100}, {@code true}, {@code `"ferry.submit"`}, {@code `adaptive`}; else NOT_A_LITERAL. */
  private static Object literal(String cell) {
    String c = cell.strip().replaceAll(" \\([^()]*\\)$", "");
    if (c.matches("-?\\d+")) {
      return Long.parseLong(c);
    }
    if (c.equals("true") || c.equals("false")) {
      return Boolean.parseBoolean(c);
    }
    Matcher m = Pattern.compile("`\"?([^`\"]*)\"?`").matcher(c);
    if (m.matches()) {
      return m.group(1);
    }
    return NOT_A_LITERAL;
  }

  private static boolean same(Object documented, Object actual) {
    if (documented instanceof Number a && actual instanceof Number b) {
      return a.longValue() == b.longValue();
    }
    return String.valueOf(documented).equals(String.valueOf(actual));
  }

  /** "unbounded"/"none"/"off" for a value the code leaves out, or holds at a long's or int's top. */
  private static boolean unbounded(String cell, Object value) {
    return (cell.startsWith("unbounded") || cell.startsWith("none") || cell.startsWith("off"))
        && (value == null || Long.valueOf(Long.MAX_VALUE).equals(value) || Integer.valueOf(0).equals(value));
  }

  /** What the deployment applies when a field is left out, by its JSON name. */
  private static JsonObject appliedVerticleDefaults() {
    VerticleConfig c = VerticleConfig.read(eventBusConfig());
    JsonObject out = c.perKey().toJson()
        .put("address", c.address())
        .put("metricsAddress", c.metricsAddress())
        .put("order", c.headerOrder() ? "header" : "submission")
        .put("drainTimeoutMs", c.drainTimeoutMs())
        .put("healthAddress", c.ops().healthAddress())
        .put("logPayloads", c.ops().logPayloads());
    // Defaults that depend on the mode are written "256 (adaptive), 16 (fixed slots)": not plain.
    out.remove("maxInFlightBatches");
    return out;
  }

  private static JsonObject eventBusDownstream() {
    return new JsonObject().put("type", "eventbus").put("address", "docs.downstream");
  }

  private static JsonObject httpsDownstream() {
    return new JsonObject().put("type", "http").put("url", "https://example.invalid/batch");
  }

  private static JsonObject eventBusConfig() {
    return new JsonObject().put("downstream", eventBusDownstream());
  }

  /** The names the code lists for {@code path} in its "unknown field (known: ...)" message. */
  private static Set<String> known(String path, JsonObject downstreamOrConfig) {
    JsonObject config = downstreamOrConfig.containsKey("type")
        ? new JsonObject().put("downstream", downstreamOrConfig) : downstreamOrConfig;
    try {
      VerticleConfig.read(config);
    } catch (InvalidConfigException e) {
      Matcher m = KNOWN.matcher(e.getMessage());
      while (m.find()) {
        if (m.group(1).equals(path + ".nope")) {
          return new TreeSet<>(Arrays.asList(m.group(2).split(", ")));
        }
      }
      fail("no \"" + path + ".nope: unknown field (known: ...)\" in: " + e.getMessage());
    }
    return fail("an unknown field under " + path + " was accepted");
  }

  private static List<List<String>> verticleTable() throws IOException {
    return table("docs/guide/verticle.md", "## conf/ferry.json, field by field");
  }

  /** The rows (cells trimmed, header and rule left out) of the first table at or after the line starting with {@code start}. */
  static List<List<String>> table(String doc, String start) throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve(doc));
    int i = 0;
    while (i < lines.size() && !lines.get(i).startsWith(start)) {
      i++;
    }
    assertTrue(i < lines.size(), doc + ": no line starting with " + start);
    while (i < lines.size() && !lines.get(i).startsWith("|")) {
      i++;
    }
    i += 2; // the header row and its rule
    List<List<String>> rows = new ArrayList<>();
    for (; i < lines.size() && lines.get(i).startsWith("|"); i++) {
      rows.add(cells(lines.get(i)));
    }
    assertTrue(!rows.isEmpty(), doc + ": the table after " + start + " is empty");
    return rows;
  }

  /** A row's cells; a {@code \|} inside a cell is kept as {@code |}. */
  private static List<String> cells(String line) {
    String inner = line.strip().substring(1, line.strip().length() - 1).replace("\\|", "\u0000");
    List<String> out = new ArrayList<>();
    for (String cell : inner.split("\\|", -1)) {
      out.add(cell.replace("\u0000", "|").strip());
    }
    return out;
  }

  private static List<String> row(List<List<String>> rows, String name) {
    for (List<String> row : rows) {
      if (!ticked(row.get(0)).isEmpty() && ticked(row.get(0)).get(0).equals(name)) {
        return row;
      }
    }
    return null;
  }

  /** The first ticked name of each row's first cell. */
  private static Set<String> firstColumnNames(List<List<String>> rows) {
    return rows.stream().map(r -> ticked(r.get(0)).get(0)).collect(Collectors.toCollection(TreeSet::new));
  }

  /** Every ticked name of each row's first cell ({@code `tls.certPem`, `tls.keyPem`}). */
  private static Set<String> firstColumnNamesAll(List<List<String>> rows) {
    return rows.stream().flatMap(r -> ticked(r.get(0)).stream()).collect(Collectors.toCollection(TreeSet::new));
  }

  private static List<String> ticked(String text) {
    List<String> out = new ArrayList<>();
    Matcher m = TICKED.matcher(text);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  /** The first ticked {@code {...}} of a cell, as JSON ({@code n} standing for a number a user gives). */
  private static JsonObject firstJson(String cell) {
    for (String t : ticked(cell)) {
      if (t.startsWith("{")) {
        return new JsonObject(t.replaceAll(": n\\b", ": 0"));
      }
    }
    return fail("no {...} example in: " + cell);
  }

  /** The text from the heading {@code heading} to the next heading of the same or a higher level. */
  private static String section(String doc, String heading) throws IOException {
    String text = Files.readString(ROOT.resolve(doc));
    int from = text.indexOf("\n" + heading + "\n");
    assertTrue(from >= 0, doc + ": no " + heading);
    String level = heading.substring(0, heading.indexOf(' ') + 1);
    int to = text.indexOf("\n" + level, from + heading.length() + 1);
    return text.substring(from, to < 0 ? text.length() : to);
  }

  private static Method method(Class<?> type, String name) {
    try {
      return type.getMethod(name);
    } catch (NoSuchMethodException e) {
      return null;
    }
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
