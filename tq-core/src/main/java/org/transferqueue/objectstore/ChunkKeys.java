package org.transferqueue.objectstore;

import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The store keys of a key-value cell whose tensor was written in chunks: its backend metadata
 * records {@code n_chunks} (and {@code chunk_bytes}), and chunk {@code c} lives under {@code key +
 * ":c" + c} instead of under the key itself. Reads ({@link GetPlan}) and clears ({@link
 * MooncakeKvClient#clear}) expand a key the same way through this class. Stateless.
 */
final class ChunkKeys {
  private ChunkKeys() {}

  /**
   * The number of chunks the metadata records for a key.
   *
   * @param key the key, for messages
   * @param meta its backend metadata, or null
   * @return 0 when the key is not chunked
   * @throws TqException with {@code INVALID_ARGUMENT} for a count that is not a positive integer
   */
  static int count(String key, Map<String, Object> meta) {
    if (meta == null || !meta.containsKey(MooncakeKvClient.N_CHUNKS)) {
      return 0;
    }
    Object value = meta.get(MooncakeKvClient.N_CHUNKS);
    if (!(value instanceof Number n) || n.longValue() < 1 || n.longValue() > Integer.MAX_VALUE) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "n_chunks of key '" + key + "' is not a positive integer: " + value);
    }
    return n.intValue();
  }

  /**
   * The store key of one chunk.
   *
   * @param key the cell's key
   * @param chunk the chunk's position, from 0
   * @return the chunk's store key
   */
  static String of(String key, int chunk) {
    return key + ":c" + chunk;
  }
}
