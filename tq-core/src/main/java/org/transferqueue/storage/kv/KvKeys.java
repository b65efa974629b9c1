package org.transferqueue.storage.kv;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Storage keys of cells: {@code "<global index>@<field>"}, fields in code-point order, samples in
 * batch order (field-major).
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
   * @param globalIndex the sample
   * @param field the field
   * @return {@code globalIndex + "@" + field}
   */
  public static String key(long globalIndex, String field) {
    return globalIndex + "@" + field;
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
   * @param globalIndexes the samples in batch order
   * @return {@code sortedFields.size() * globalIndexes.length} keys
   */
  public static List<String> keys(List<String> sortedFields, long[] globalIndexes) {
    List<String> keys = new ArrayList<>(sortedFields.size() * globalIndexes.length);
    for (String field : sortedFields) {
      addKeys(field, globalIndexes, keys);
    }
    return keys;
  }

  /**
   * Appends the keys of one field's samples, each equal to {@link #key(long, String)}; one builder
   * serves them all, so each key costs just its string.
   *
   * @param field the field
   * @param globalIndexes the samples in batch order
   * @param keys where the keys go
   */
  public static void addKeys(String field, long[] globalIndexes, List<String> keys) {
    StringBuilder builder = new StringBuilder(20 + field.length());
    for (long gi : globalIndexes) {
      builder.setLength(0);
      keys.add(builder.append(gi).append('@').append(field).toString());
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
