package org.transferqueue.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The configuration package sits at the bottom of the layer list: JDK and error model only. */
class ConfigLayeringTest {
  private static final Path SOURCES =
      Path.of("src", "main", "java", "org", "transferqueue", "config");
  private static final Pattern IMPORT =
      Pattern.compile("^import (?:static )?([\\w.]+)", Pattern.MULTILINE);
  private static final List<String> ALLOWED =
      List.of(
          "java.",
          "org.transferqueue.ErrorCode",
          "org.transferqueue.TqException",
          "org.transferqueue.config.");

  @Test
  void shouldDependOnlyOnTheJdkAndTheErrorModel() throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(SOURCES)) {
      files = s.filter(f -> f.toString().endsWith(".java")).toList();
    }
    assertThat(files).hasSizeGreaterThan(10);
    for (Path f : files) {
      Matcher m = IMPORT.matcher(Files.readString(f));
      while (m.find()) {
        String imported = m.group(1);
        assertThat(ALLOWED.stream().anyMatch(imported::startsWith))
            .as("%s imports %s", f.getFileName(), imported)
            .isTrue();
      }
    }
  }
}
