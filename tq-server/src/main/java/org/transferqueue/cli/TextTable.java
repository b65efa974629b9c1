package org.transferqueue.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table: a header row and rows of cells, columns padded to their widest cell and
 * separated by two spaces. Cells are single-line (line breaks are shown as {@code \n}). Not
 * thread-safe.
 */
final class TextTable {
  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();

  /**
   * Starts a table.
   *
   * @param header the column titles
   */
  TextTable(String... header) {
    this.header = List.of(header);
  }

  /**
   * Adds a row.
   *
   * @param cells one value per column, rendered with {@link String#valueOf(Object)}
   * @return this table
   */
  TextTable row(Object... cells) {
    if (cells.length != header.size()) {
      throw new IllegalArgumentException(
          "row "
              + Arrays.toString(cells)
              + " has "
              + cells.length
              + " cells, not "
              + header.size());
    }
    rows.add(Arrays.stream(cells).map(c -> String.valueOf(c).replace("\n", "\\n")).toList());
    return this;
  }

  /**
   * Whether no row was added.
   *
   * @return true without rows
   */
  boolean isEmpty() {
    return rows.isEmpty();
  }

  /**
   * Prints the header and the rows.
   *
   * @param out the destination
   */
  void print(PrintWriter out) {
    int[] widths = new int[header.size()];
    for (int c = 0; c < widths.length; c++) {
      widths[c] = header.get(c).length();
      for (List<String> row : rows) {
        widths[c] = Math.max(widths[c], row.get(c).length());
      }
    }
    line(out, header, widths);
    for (List<String> row : rows) {
      line(out, row, widths);
    }
  }

  private static void line(PrintWriter out, List<String> cells, int[] widths) {
    StringBuilder line = new StringBuilder();
    for (int c = 0; c < cells.size(); c++) {
      String cell = cells.get(c);
      line.append(cell);
      if (c < cells.size() - 1) {
        line.append(" ".repeat(widths[c] - cell.length() + 2));
      }
    }
    out.println(line);
  }
}
