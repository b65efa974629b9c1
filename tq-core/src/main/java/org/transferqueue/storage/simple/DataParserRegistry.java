package org.transferqueue.storage.simple;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.tensor.Batch;

/**
 * The data parsers a storage unit knows, by name, and the checks around running one.
 *
 * <p>Thread-safe: parsers may be registered while puts run.
 */
public final class DataParserRegistry {
  private final Map<String, DataParser> parsers = new ConcurrentHashMap<>();

  /** Creates an empty registry. */
  public DataParserRegistry() {}

  /**
   * Registers a parser.
   *
   * @param name the name puts refer to
   * @param parser the parser
   * @return this registry
   * @throws TqException with {@code DUPLICATE_KEY} if the name is taken
   */
  public DataParserRegistry register(String name, DataParser parser) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(parser, "parser");
    if (parsers.putIfAbsent(name, parser) != null) {
      throw new TqException(
          ErrorCode.DUPLICATE_KEY, "data_parser '" + name + "' is already registered");
    }
    return this;
  }

  /**
   * The registered names.
   *
   * @return the names, sorted
   */
  public List<String> names() {
    return new ArrayList<>(new TreeSet<>(parsers.keySet()));
  }

  /**
   * Finds a parser.
   *
   * @param name the registered name
   * @return the parser
   * @throws StorageException with {@code DATA_PARSER_FAILED} listing the registered names
   */
  public DataParser resolve(String name) {
    DataParser parser = parsers.get(name);
    if (parser == null) {
      throw new StorageException(
          ErrorCode.DATA_PARSER_FAILED,
          "data_parser must be callable: unknown data_parser '"
              + name
              + "', registered: "
              + names());
    }
    return parser;
  }

  /**
   * Runs a parser on a unit's rows and checks that it kept field names and row count.
   *
   * @param reference the put's parser reference
   * @param rows the unit's rows (not closed)
   * @param allocator where the parser allocates
   * @return the parsed rows, which the caller owns and must close (may share columns with {@code
   *     rows})
   * @throws StorageException with {@code DATA_PARSER_FAILED} for an unknown parser, a parser that
   *     threw, returned nothing, or changed field names or row count
   */
  public Batch apply(DataParserReference reference, Batch rows, BufferAllocator allocator) {
    DataParser parser = resolve(reference.name());
    Batch parsed;
    try {
      parsed = parser.parse(rows, reference.args(), allocator);
    } catch (RuntimeException e) {
      throw new StorageException(
          ErrorCode.DATA_PARSER_FAILED,
          "data_parser '" + reference.name() + "' failed: " + e.getMessage(),
          e);
    }
    if (parsed == null) {
      throw new StorageException(
          ErrorCode.DATA_PARSER_FAILED,
          "data_parser must return a dict, got null (data_parser '" + reference.name() + "')");
    }
    try {
      if (!new TreeSet<>(parsed.fields()).equals(new TreeSet<>(rows.fields()))) {
        throw new StorageException(
            ErrorCode.DATA_PARSER_FAILED,
            "data_parser must not change dict keys. Original keys: "
                + new TreeSet<>(rows.fields())
                + ", got: "
                + new TreeSet<>(parsed.fields()));
      }
      if (parsed.rowCount() != rows.rowCount()) {
        String first = rows.fields().isEmpty() ? "" : new TreeSet<>(rows.fields()).first();
        throw new StorageException(
            ErrorCode.DATA_PARSER_FAILED,
            "data_parser changed the number of elements for key '"
                + first
                + "': expected "
                + rows.rowCount()
                + ", got "
                + parsed.rowCount());
      }
      return parsed;
    } catch (RuntimeException e) {
      if (parsed != rows) {
        parsed.close();
      }
      throw e;
    }
  }
}
