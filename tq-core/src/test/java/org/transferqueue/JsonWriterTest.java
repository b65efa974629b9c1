package org.transferqueue;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonWriterTest {
  private static Map<String, Object> sample() {
    Map<String, Object> inner = new LinkedHashMap<>();
    inner.put("x", 1.5);
    inner.put("empty", Map.of());
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("name", "a\"b\n");
    root.put("n", 3L);
    root.put("ok", true);
    root.put("none", null);
    root.put("list", List.of(1, 2));
    root.put("inner", inner);
    return root;
  }

  @Test
  void shouldWriteCompactJson() {
    assertThat(JsonWriter.COMPACT.write(sample()))
        .isEqualTo(
            "{\"name\":\"a\\\"b\\n\",\"n\":3,\"ok\":true,\"none\":null,\"list\":[1,2],"
                + "\"inner\":{\"x\":1.5,\"empty\":{}}}");
  }

  @Test
  void shouldWriteSpacedJsonAsTheCheckpointManifestsDo() {
    List<Object> entries = new ArrayList<>();
    for (int p = 0; p < 2; p++) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("position", p);
      entry.put("node", "127.0.0.1:730" + p);
      entries.add(entry);
    }

    assertThat(JsonWriter.SPACED.write(entries))
        .isEqualTo(
            "[{\"position\": 0, \"node\": \"127.0.0.1:7300\"},"
                + " {\"position\": 1, \"node\": \"127.0.0.1:7301\"}]");
  }

  @Test
  void shouldWritePrettyJsonWithObjectsIndentedAndListsOnOneLine() {
    assertThat(JsonWriter.PRETTY.write(sample()))
        .isEqualTo(
            """
            {
              "name": "a\\"b\\n",
              "n": 3,
              "ok": true,
              "none": null,
              "list": [1, 2],
              "inner": {
                "x": 1.5,
                "empty": {}
              }
            }""");
  }

  @Test
  void shouldWriteNonFiniteNumbersAsConfigured() {
    List<Object> values = List.of(Double.NaN, Float.POSITIVE_INFINITY, new byte[] {1, 2, 3});

    assertThat(JsonWriter.COMPACT.write(values))
        .isEqualTo("[\"NaN\",\"Infinity\",\"base64:AQID\"]");
    assertThat(JsonWriter.PRETTY.write(values)).isEqualTo("[null, null, \"base64:AQID\"]");
  }

  @Test
  void shouldNotDependOnTheDefaultLocale() {
    Locale before = Locale.getDefault();
    try {
      Locale.setDefault(Locale.GERMANY);
      assertThat(JsonWriter.COMPACT.write(List.of(1.5, 1234567.25f, 10_000_000L)))
          .isEqualTo("[1.5,1234567.2,10000000]");
    } finally {
      Locale.setDefault(before);
    }
  }
}
