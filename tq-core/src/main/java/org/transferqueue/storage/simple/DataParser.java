package org.transferqueue.storage.simple;

import java.util.Map;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Batch;

/**
 * A transformation a storage unit applies to its rows of a put before storing them, for example
 * turning paths or shape descriptors into tensors close to the storage.
 *
 * <p>Parsers are registered by name in a {@link DataParserRegistry} on the storage units; a put
 * names one with a {@link org.transferqueue.storage.DataParserReference}. A put is split across
 * units, so a parser runs once per involved unit on that unit's rows. The result must keep the
 * field names and the row count ({@code DATA_PARSER_FAILED} otherwise, and nothing is stored).
 * Column kinds may change (a parser may turn an object column into a tensor column).
 *
 * <p>Implementations must be thread-safe: units parse concurrently.
 *
 * <pre>{@code
 * registry.register("prefix", (rows, args, allocator) -> {
 *   ObjectColumn text = (ObjectColumn) rows.column("text");
 *   List<Object> out = new ArrayList<>();
 *   text.values().forEach(v -> out.add(args.get("prefix") + v));
 *   return Batch.builder().objects("text", out).build();
 * });
 * }</pre>
 */
@FunctionalInterface
public interface DataParser {
  /**
   * Transforms a unit's rows.
   *
   * @param rows the unit's rows of the put; owned by the unit, do not close; columns may be reused
   *     in the result
   * @param args the arguments of the put's parser reference
   * @param allocator where new tensors should be allocated (the unit's allocator)
   * @return a batch with the same field names and row count; the unit closes it after storing
   */
  Batch parse(Batch rows, Map<String, String> args, BufferAllocator allocator);
}
