package org.transferqueue.controller;

import java.util.Collection;
import java.util.List;
import org.transferqueue.Distinct;
import org.transferqueue.ErrorCode;
import org.transferqueue.Strings;
import org.transferqueue.TqException;

/**
 * The rules for the names the controller keeps: partition ids, task names, field names and keys are
 * non-empty, valid Unicode strings ({@link Strings}), and the keys of one call are distinct.
 *
 * <p>Both {@link ControllerApi} implementations check their arguments with these rules before
 * anything changes or is sent: {@link Controller} for callers in its process and for every remote
 * client (so a client in another language that sends an empty key is refused too), and the remote
 * proxy before it encodes a request, so that a refused name is named in the message on every path.
 * Messages quote the names ({@link Strings#quote}), so an empty key shows as {@code ""}. Stateless
 * and thread-safe.
 */
public final class Names {
  private Names() {}

  /**
   * Checks a partition id.
   *
   * @param partitionId the id
   * @return {@code partitionId}
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when it is null, empty or not valid
   *     Unicode
   */
  public static String checkPartitionId(String partitionId) {
    return Strings.checkName(partitionId, "partition_id");
  }

  /**
   * Checks a task name.
   *
   * @param taskName the name
   * @return {@code taskName}
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when it is null, empty or not valid
   *     Unicode
   */
  public static String checkTaskName(String taskName) {
    return Strings.checkName(taskName, "task_name");
  }

  /**
   * Checks a field name.
   *
   * @param field the name
   * @return {@code field}
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when it is null, empty or not valid
   *     Unicode
   */
  public static String checkFieldName(String field) {
    return Strings.checkName(field, "field name");
  }

  /**
   * Checks field names, naming the position of the first bad one.
   *
   * @param fields the names, not null
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a null, empty or not well-formed
   *     name
   */
  public static void checkFieldNames(Collection<String> fields) {
    Strings.checkNames(fields, "field name");
  }

  /**
   * Checks the keys of one call: a non-empty list of distinct, non-empty, valid Unicode strings.
   * One copy of the list is sorted to find repeats, so the check costs no hash entry per key.
   *
   * @param keys the keys; elements of any type, so that a list that reached here through an
   *     unchecked conversion gets a typed error rather than a cast failure
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a null or empty list and for a null,
   *     non-string, empty or not well-formed key, naming its position ({@code keys ["", "b"]: key
   *     at position 0 is empty}); {@link ErrorCode#DUPLICATE_KEY} for a repeated key
   */
  public static void checkKeys(List<?> keys) {
    if (keys == null) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "keys must be a list, got null");
    }
    if (keys.isEmpty()) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "Received an empty list as keys");
    }
    Strings.checkNames(keys, "key");
    Object repeated = Distinct.firstRepeated(keys.toArray());
    if (repeated != null) {
      throw new TqException(
          ErrorCode.DUPLICATE_KEY,
          "Got duplicated keys: key="
              + Strings.quote((String) repeated)
              + " in keys "
              + Strings.quote(keys));
    }
  }
}
