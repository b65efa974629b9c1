package org.transferqueue.storage.kv;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Storage keys of cells: {@code "<global index>.<generation>@<field>"} (for example {@code
 * 17.0@responses}), fields in code-point order, samples in batch order (field-major).
 *
 * <p>The generation is part of the key, so the cells of a sample live under keys no other sample
 * ever uses: a writer or reader whose metadata predates a clear of the index addresses the old
 * sample's keys and can never touch the cells of the sample that reuses the index. The key starts
 * with the decimal global index, so a store sharded by sample ({@link #sampleOf}) keeps every cell
 * of a sample, chunk keys included, on one node.
 *
 * <p>Field names containing {@code @} or ending in {@code :c<digits>} (the suffix of chunk keys)
 * could collide with other keys and are rejected. Stateless and thread-safe.
 */
public final class KvKeys {
  /** Orders strings by Unicode code point, as upstream's Python string order does. */
  public static final Comparator<String> CODE_POINT_ORDER = KvKeys::compareCodePoints;

  private static final Pattern CHUNK_SUFFIX = Pattern.compile(".*:c[0-9]+$", Pattern.DOTALL);

  private KvKeys() {}

  /**
   * The key of one cell.
   *
   * @param globalIndex the sample's global index
   * @param generation the sample's generation, at least 0
   * @param field the field
   * @return {@code globalIndex + "." + generation + "@" + field}
   */
  public static String key(long globalIndex, long generation, String field) {
    return globalIndex + "." + generation + "@" + field;
  }

  /**
   * The global index a cell key names, for routing: the decimal digits a key of this class starts
   * with, up to the {@code .} before its generation.
   *
   * @param key any key
   * @return the global index, or -1 when the key does not start with digits followed by {@code .}
   *     (a key of another layout)
   */
  public static long sampleOf(String key) {
    long gi = 0;
    // At most 18 digits, so that the value cannot overflow (global indexes have at most 10).
    int end = Math.min(key.length(), 19);
    for (int i = 0; i < end; i++) {
      char c = key.charAt(i);
      if (c == '.' && i > 0) {
        return gi;
      }
      if (c < '0' || c > '9' || i == 18) {
        return -1;
      }
      gi = gi * 10 + (c - '0');
    }
    return -1;
  }

  /**
   * Sorts field names by code point after checking each.
   *
   * @param fields the field names
   * @return a new sorted list
   * @throws TqException with {@code INVALID_ARGUMENT} naming a field that contains {@code @} or
   *     ends in {@code :c<digits>}
   */
  public static List<String> sortedFields(Collection<String> fields) {
    List<String> sorted = new ArrayList<>(fields);
    for (String field : sorted) {
      checkField(field);
    }
    sorted.sort(CODE_POINT_ORDER);
    return sorted;
  }

  /**
   * The keys of fields x samples, field-major.
   *
   * @param sortedFields field names, already in code-point order
   * @param globalIndexes the samples' global indexes in batch order
   * @param generations the samples' generations, aligned with {@code globalIndexes}
   * @return {@code sortedFields.size() * globalIndexes.length} keys
   */
  public static List<String> keys(
      List<String> sortedFields, long[] globalIndexes, long[] generations) {
    List<String> keys = new ArrayList<>(sortedFields.size() * globalIndexes.length);
    for (String field : sortedFields) {
      addKeys(field, globalIndexes, generations, keys);
    }
    return keys;
  }

  /**
   * Appends the keys of one field's samples, each equal to {@link #key(long, long, String)}; one
   * builder serves them all, so each key costs just its string.
   *
   * @param field the field
   * @param globalIndexes the samples' global indexes in batch order
   * @param generations the samples' generations, aligned with {@code globalIndexes}
   * @param keys where the keys go
   */
  public static void addKeys(
      String field, long[] globalIndexes, long[] generations, List<String> keys) {
    StringBuilder builder = new StringBuilder(40 + field.length());
    for (int i = 0; i < globalIndexes.length; i++) {
      builder.setLength(0);
      builder.append(globalIndexes[i]).append('.').append(generations[i]).append('@');
      keys.add(builder.append(field).toString());
    }
  }

  /**
   * Rejects field names that could collide with other keys.
   *
   * @param field a field name
   * @throws TqException with {@code INVALID_ARGUMENT} naming the field
   */
  public static void checkField(String field) {
    if (field.indexOf('@') >= 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "field name '" + field + "' contains '@', which separates index and field in KV keys");
    }
    if (CHUNK_SUFFIX.matcher(field).matches()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "field name '" + field + "' ends in ':c<digits>', which is reserved for chunk keys");
    }
  }

  private static int compareCodePoints(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }
}
