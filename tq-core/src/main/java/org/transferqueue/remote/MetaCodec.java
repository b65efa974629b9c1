package org.transferqueue.remote;

import java.util.function.BiConsumer;
import java.util.function.Function;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.KvBatchMeta;

/**
 * The msgpack encoding of metadata values shared by every remote service (controller, storage unit,
 * store node): {@link MetaWriter} writes, {@link MetaReader} reads, this class holds the shared
 * constants and one-value shortcuts.
 *
 * <p>Layout: records are msgpack arrays of their components in a fixed order (documented on each
 * {@link MetaWriter} method); absent values are nil; enums travel by name; dtypes by their torch
 * name; durations as nanoseconds; metadata values (tags, extra info, backend metadata) as plain
 * msgpack with {@link java.math.BigInteger} and {@link java.math.BigDecimal} as extension types
 * {@value #EXT_BIG_INTEGER} and {@value #EXT_BIG_DECIMAL} holding their decimal text, so every
 * value decodes to an equal one.
 *
 * <pre>{@code
 * byte[] wire = MetaCodec.encode(meta);
 * BatchMeta same = MetaCodec.decodeBatchMeta(wire);
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class MetaCodec {
  /** msgpack extension type of a {@link java.math.BigInteger} (decimal text, UTF-8). */
  public static final byte EXT_BIG_INTEGER = 1;

  /** msgpack extension type of a {@link java.math.BigDecimal} ({@code toString()} text, UTF-8). */
  public static final byte EXT_BIG_DECIMAL = 2;

  private MetaCodec() {}

  /**
   * Encodes one batch's metadata as a whole message.
   *
   * @param meta the metadata
   * @return the message
   */
  public static byte[] encode(BatchMeta meta) {
    return encode(meta, MetaWriter::batchMeta);
  }

  /**
   * Decodes a message written by {@link #encode(BatchMeta)}.
   *
   * @param message the message
   * @return the metadata
   * @throws org.transferqueue.ProtocolException if the message is malformed
   */
  public static BatchMeta decodeBatchMeta(byte[] message) {
    return decode(message, MetaReader::batchMeta);
  }

  /**
   * Encodes key-value metadata as a whole message.
   *
   * @param meta the metadata
   * @return the message
   */
  public static byte[] encode(KvBatchMeta meta) {
    return encode(meta, MetaWriter::kvBatchMeta);
  }

  /**
   * Decodes a message written by {@link #encode(KvBatchMeta)}.
   *
   * @param message the message
   * @return the metadata
   * @throws org.transferqueue.ProtocolException if the message is malformed
   */
  public static KvBatchMeta decodeKvBatchMeta(byte[] message) {
    return decode(message, MetaReader::kvBatchMeta);
  }

  /**
   * Encodes a field schema as a whole message.
   *
   * @param schema the schema
   * @return the message
   */
  public static byte[] encode(FieldSchema schema) {
    return encode(schema, MetaWriter::fieldSchema);
  }

  /**
   * Decodes a message written by {@link #encode(FieldSchema)}.
   *
   * @param message the message
   * @return the schema
   * @throws org.transferqueue.ProtocolException if the message is malformed
   */
  public static FieldSchema decodeFieldSchema(byte[] message) {
    return decode(message, r -> r.fieldSchema("FieldSchema"));
  }

  /**
   * Encodes any value with a writer method, as a whole message.
   *
   * @param value the value
   * @param write the writer method, e.g. {@code MetaWriter::batchMeta}
   * @param <T> the value type
   * @return the message
   */
  public static <T> byte[] encode(T value, BiConsumer<MetaWriter, T> write) {
    MetaWriter writer = new MetaWriter();
    write.accept(writer, value);
    return writer.toByteArray();
  }

  /**
   * Decodes a whole message with a reader method and checks nothing follows.
   *
   * @param message the message
   * @param read the reader method, e.g. {@code MetaReader::batchMeta}
   * @param <T> the value type
   * @return the value
   * @throws org.transferqueue.ProtocolException if the message is malformed or has trailing bytes
   */
  public static <T> T decode(byte[] message, Function<MetaReader, T> read) {
    MetaReader reader = new MetaReader(message);
    T value = read.apply(reader);
    reader.expectEnd();
    return value;
  }
}
