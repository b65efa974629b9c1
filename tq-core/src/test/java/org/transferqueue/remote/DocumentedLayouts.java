package org.transferqueue.remote;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.transferqueue.codec.OpaqueValue;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.Response;

/**
 * The message layouts docs/PROTOCOL.md gives, as checkers of real messages: the request and reply
 * metadata columns of the message tables of sections 7, 8 and 9, and the value layouts their cells
 * name (section 7.2 and the code blocks of sections 8 and 9). A test records the metadata the Java
 * client sends and the servers answer for each message type and hands it to {@link #check}, which
 * fails when the bytes disagree with the document: another arity, another msgpack type, a missing
 * element. So a third-party client written from the document alone sends what the servers read.
 *
 * <p>The layout grammar is the document's: {@code [a: T, b: U]} an array of exactly those elements,
 * {@code [T]} or {@code [T, ...]} an array of any length of {@code T}, {@code {...}} a map, {@code
 * T|U} either, {@code str int bool bin nil float64}, literals ({@code true}, {@code 2}, {@code
 * "MERGE"}), and the names of section 7.2's value layouts. Text after a layout (in parentheses, or
 * words) is commentary.
 */
public final class DocumentedLayouts {
  private static final Pattern DEFINITION = Pattern.compile("^([A-Z][A-Za-z]+)\\s*=\\s*(.*)$");
  private static final int MAX_DEPTH = 6;

  /** Code-block lines indented this far or more hold commentary, not layout. */
  private static final int COMMENTARY_COLUMN = 40;

  private final Map<Integer, String> requests = new LinkedHashMap<>();
  private final Map<Integer, String> replies = new LinkedHashMap<>();
  private final Map<String, Type> definitions = new HashMap<>();
  private final Set<Integer> checked = new TreeSet<>();

  /** Reads docs/PROTOCOL.md from a directory above the working directory. */
  public static DocumentedLayouts read() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.exists(dir.resolve("docs/PROTOCOL.md"))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("docs/PROTOCOL.md above the working directory").isNotNull();
    try {
      return new DocumentedLayouts(
          Files.readString(dir.resolve("docs/PROTOCOL.md"), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private DocumentedLayouts(String document) {
    boolean messages = false;
    for (String line : document.split("\n")) {
      if (line.startsWith("## ")) {
        // The message tables are those of sections 7 (controller), 8 (units), 9 (store nodes).
        messages = line.matches("## [789]\\..*");
      }
      List<String> cells = messages ? cells(line) : List.of();
      if (cells.size() < 4 || !cells.get(0).matches("\\d+") || !cells.get(1).startsWith("`")) {
        continue;
      }
      int type = Integer.parseInt(cells.get(0));
      requests.put(type, layoutOf(cells.get(2)));
      // Controller rows: [args] | reply; storage rows: metadata | bodies | reply metadata | bodies.
      replies.put(type, layoutOf(cells.get(cells.size() >= 6 ? 4 : 3)));
    }
    readDefinitions(document);
  }

  /** The cells of a table row, split at unescaped {@code |}. */
  private static List<String> cells(String line) {
    List<String> out = new ArrayList<>();
    if (!line.startsWith("|")) {
      return out;
    }
    StringBuilder cell = new StringBuilder();
    for (int i = 1; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c == '\\' && i + 1 < line.length() && line.charAt(i + 1) == '|') {
        cell.append('|');
        i++;
      } else if (c == '|') {
        out.add(cell.toString().trim());
        cell.setLength(0);
      } else {
        cell.append(c);
      }
    }
    return out;
  }

  /** The layout a cell gives: its first code span, or its first word (a layout's name). */
  private static String layoutOf(String cell) {
    Matcher code = Pattern.compile("`([^`]*)`").matcher(cell);
    if (cell.startsWith("`") && code.find()) {
      return code.group(1);
    }
    if (cell.startsWith("none") || cell.equals("-")) {
      return "";
    }
    return cell.split("[ (:]")[0];
  }

  /** The layouts of the code blocks: {@code Name = layout}, continued on indented lines. */
  private void readDefinitions(String document) {
    boolean inCode = false;
    String name = null;
    StringBuilder layout = new StringBuilder();
    for (String raw : document.split("\n")) {
      if (raw.startsWith("```")) {
        inCode = !inCode;
        name = flush(name, layout);
        continue;
      }
      if (!inCode) {
        continue;
      }
      // Commentary sits to the right, after a run of three or more spaces, and on lines indented
      // into that right-hand column.
      String line = raw.strip().split(" {3,}")[0];
      int indent = raw.length() - raw.stripLeading().length();
      Matcher definition = DEFINITION.matcher(raw.strip());
      if (indent == 0 && definition.matches()) {
        name = flush(name, layout);
        name = definition.group(1);
        layout.append(definition.group(2).split(" {3,}")[0]);
      } else if (name != null && indent > 0 && indent < COMMENTARY_COLUMN && !line.isEmpty()) {
        layout.append(' ').append(line);
      } else if (indent == 0) {
        name = flush(name, layout);
      }
    }
  }

  private String flush(String name, StringBuilder layout) {
    // Value is any plain value: its alternatives are prose, and it is not checked.
    if (name != null && !name.equals("Value") && layout.length() > 0) {
      definitions.put(name, new Parser(layout.toString()).union());
    }
    layout.setLength(0);
    return null;
  }

  /**
   * Checks one message's request and reply metadata against the document.
   *
   * @param type the message type
   * @param request the request's application metadata (msgpack)
   * @param reply the reply's application metadata, or null when the call failed
   */
  public void check(int type, byte[] request, byte[] reply) {
    assertThat(requests).as("message type %d is documented", type).containsKey(type);
    String what = "type " + type + " request " + requests.get(type);
    check(what, new Parser(requests.get(type)).union(), request);
    if (reply != null) {
      check("type " + type + " reply " + replies.get(type), replyType(type), reply);
    }
    checked.add(type);
  }

  private Type replyType(int type) {
    String layout = replies.get(type);
    return layout.isEmpty() ? null : new Parser(layout).union();
  }

  private void check(String what, Type type, byte[] metadata) {
    if (type == null) {
      assertThat(metadata).as("%s: no application metadata", what).isEmpty();
      return;
    }
    Object value = ValueDecoder.decode(MemorySegment.ofArray(metadata), List.of(), what);
    List<String> problems = new ArrayList<>();
    type.check(value, "$", problems, 0);
    assertThat(problems).as("%s, sent %s", what, value).isEmpty();
  }

  /**
   * Holds a request and, once it arrives, its reply against the layouts docs/PROTOCOL.md gives for
   * their message type (a failed call's request only).
   *
   * @param request the request
   * @param reply its reply, on its way
   * @return {@code reply}, checked when it completes
   */
  public CompletableFuture<Response> checking(Request request, CompletableFuture<Response> reply) {
    return reply.whenComplete(
        (response, failure) ->
            check(
                request.type(), request.metadata(), failure == null ? response.metadata() : null));
  }

  /** The message types {@link #check} saw. */
  public Set<Integer> checked() {
    return checked;
  }

  // ---- layouts ---------------------------------------------------------------------------

  private sealed interface Type permits Atom, Named, ListOf, Tuple, MapOf, Union {
    /** Adds a problem (with its path) for every way {@code value} disagrees. */
    void check(Object value, String path, List<String> problems, int depth);
  }

  private record Atom(String token) implements Type {
    @Override
    public void check(Object value, String path, List<String> problems, int depth) {
      boolean ok =
          switch (token) {
            case "str" -> value instanceof String;
            case "int" -> value instanceof Long || value instanceof BigInteger;
            case "bool" -> value instanceof Boolean;
            case "bin" -> value instanceof byte[];
            case "nil" -> value == null;
            case "float64" -> value instanceof Double;
            case "true", "false" -> Boolean.valueOf(token).equals(value);
            default ->
                token.startsWith("\"")
                    ? token.substring(1, token.length() - 1).equals(value)
                    : value instanceof Long l && l == Long.parseLong(token);
          };
      if (!ok) {
        problems.add(path + ": expected " + token + ", found " + describe(value));
      }
    }
  }

  private final class Named implements Type {
    private final String name;

    Named(String name) {
      this.name = name;
    }

    @Override
    public void check(Object value, String path, List<String> problems, int depth) {
      Type definition = definitions.get(name);
      if (definition == null || depth > MAX_DEPTH) {
        // Value (any plain value) and deeper levels are not checked here.
        return;
      }
      definition.check(value, path, problems, depth + 1);
    }
  }

  private record ListOf(Type element) implements Type {
    @Override
    public void check(Object value, String path, List<String> problems, int depth) {
      if (!(value instanceof List<?> list)) {
        problems.add(path + ": expected an array, found " + describe(value));
        return;
      }
      for (int i = 0; i < list.size(); i++) {
        element.check(list.get(i), path + "[" + i + "]", problems, depth);
      }
    }
  }

  private record Tuple(List<Type> elements, List<String> names) implements Type {
    @Override
    public void check(Object value, String path, List<String> problems, int depth) {
      if (!(value instanceof List<?> list)) {
        problems.add(path + ": expected an array of " + names + ", found " + describe(value));
        return;
      }
      if (list.size() != elements.size()) {
        problems.add(
            path
                + ": expected "
                + elements.size()
                + " elements "
                + names
                + ", found "
                + list.size());
        return;
      }
      for (int i = 0; i < list.size(); i++) {
        elements.get(i).check(list.get(i), path + "." + names.get(i), problems, depth);
      }
    }
  }

  private record MapOf() implements Type {
    @Override
    public void check(Object value, String path, List<String> problems, int depth) {
      if (!(value instanceof Map<?, ?>)) {
        problems.add(path + ": expected a map, found " + describe(value));
      }
    }
  }

  private record Union(List<Type> alternatives) implements Type {
    @Override
    public void check(Object value, String path, List<String> problems, int depth) {
      List<String> all = new ArrayList<>();
      for (Type alternative : alternatives) {
        List<String> mine = new ArrayList<>();
        alternative.check(value, path, mine, depth);
        if (mine.isEmpty()) {
          return;
        }
        all.addAll(mine);
      }
      problems.add(path + ": no alternative matches: " + all);
    }
  }

  private static String describe(Object value) {
    return switch (value) {
      case null -> "nil";
      case OpaqueValue o -> "extension " + o;
      case byte[] b -> "bin(" + b.length + ")";
      default -> value.getClass().getSimpleName() + " " + value;
    };
  }

  /** A recursive-descent parser of the document's layout notation. */
  private final class Parser {
    private final String text;
    private int at;

    Parser(String text) {
      this.text = text;
    }

    Type union() {
      List<Type> alternatives = new ArrayList<>();
      alternatives.add(single());
      skipUnitNote();
      while (at < text.length() && text.charAt(at) == '|') {
        at++;
        alternatives.add(single());
        skipUnitNote();
      }
      return alternatives.size() == 1 ? alternatives.getFirst() : new Union(alternatives);
    }

    private Type single() {
      skipSpaces();
      char c = text.charAt(at);
      if (c == '[') {
        return array();
      }
      if (c == '{') {
        skipBalanced('{', '}');
        return new MapOf();
      }
      int start = at;
      if (c == '"') {
        at = text.indexOf('"', at + 1) + 1;
      } else {
        while (at < text.length()
            && (Character.isLetterOrDigit(text.charAt(at)) || text.charAt(at) == '-')) {
          at++;
        }
      }
      String token = text.substring(start, at);
      return Set.of("str", "int", "bool", "bin", "nil", "float64", "true", "false").contains(token)
              || token.startsWith("\"")
              || token.matches("-?\\d+")
          ? new Atom(token)
          : new Named(token);
    }

    private Type array() {
      at++; // [
      List<Type> elements = new ArrayList<>();
      List<String> names = new ArrayList<>();
      boolean repeated = false;
      boolean named = false;
      skipSpaces();
      while (text.charAt(at) != ']') {
        if (text.startsWith("...", at)) {
          repeated = true;
          at += 3;
        } else {
          String name = elementName();
          named |= name != null;
          names.add(name != null ? name : "#" + elements.size());
          elements.add(union());
          skipCommentary();
        }
        skipSpaces();
        if (text.charAt(at) == ',') {
          at++;
          skipSpaces();
        }
      }
      at++; // ]
      if (repeated || elements.size() == 1 && !named) {
        return new ListOf(elements.isEmpty() ? new Named("Value") : elements.getFirst());
      }
      return new Tuple(elements, names);
    }

    /** The {@code name:} before an element's layout, consumed; null without one. */
    private String elementName() {
      Matcher m =
          Pattern.compile("([A-Za-z][A-Za-z0-9_]*)\\s*:\\s")
              .matcher(text)
              .region(at, text.length());
      if (m.lookingAt()) {
        at = m.end();
        return m.group(1);
      }
      return null;
    }

    /** Skips commentary after an element: parenthesised text and words, up to , or ]. */
    private void skipCommentary() {
      while (at < text.length()) {
        char c = text.charAt(at);
        if (c == ',' || c == ']') {
          return;
        }
        if (c == '(') {
          skipBalanced('(', ')');
        } else {
          at++;
        }
      }
    }

    private void skipBalanced(char open, char close) {
      int depth = 0;
      do {
        char c = text.charAt(at++);
        depth += c == open ? 1 : c == close ? -1 : 0;
      } while (depth > 0);
    }

    /** Skips spaces and a parenthesised note right after a layout, as in {@code int (ns)|nil}. */
    private void skipUnitNote() {
      skipSpaces();
      int mark = at;
      if (at < text.length() && text.charAt(at) == '(') {
        skipBalanced('(', ')');
        skipSpaces();
        if (at >= text.length() || text.charAt(at) != '|') {
          at = mark; // commentary, not a note between alternatives
        }
      }
    }

    private void skipSpaces() {
      while (at < text.length() && text.charAt(at) == ' ') {
        at++;
      }
    }
  }
}
