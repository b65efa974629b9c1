package org.transferqueue.remote;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.Strings;
import org.transferqueue.TqException;
import org.transferqueue.codec.MsgpackWriter;
import org.transferqueue.controller.IndexSet;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.sampler.SamplingConfig;

/**
 * Writes metadata values as msgpack, in the layout {@link MetaReader} reads (see {@link MetaCodec}
 * for the layout of each value).
 *
 * <p>A writer accumulates one message on the heap in the codec cursor ({@link MsgpackWriter}, which
 * chooses msgpack's smallest formats); {@link #toByteArray()} returns it. Not thread-safe; use one
 * writer per message.
 *
 * <p>Strings are written as UTF-8, so a string with a lone surrogate, which has no UTF-8 form, is
 * refused with {@link ErrorCode#INVALID_ARGUMENT} ({@link Strings}) instead of being sent changed;
 * the callers check names first, so that such a refusal names what the string was.
 */
public final class MetaWriter {
  /**
   * A first array of 1 KiB: most control messages are small, and larger ones grow it by doubling.
   */
  private static final int INITIAL_BYTES = 1024;

  private final MsgpackWriter out = new MsgpackWriter(INITIAL_BYTES);

  /** Creates an empty writer. */
  public MetaWriter() {}

  /**
   * The bytes written so far.
   *
   * @return a fresh copy of the message
   */
  public byte[] toByteArray() {
    return out.toByteArray();
  }

  /**
   * Writes an array header; the next {@code size} values are its elements.
   *
   * @param size the number of elements
   * @return this writer
   */
  public MetaWriter arrayHeader(int size) {
    out.writeArrayHeader(size);
    return this;
  }

  /**
   * Writes a map header; the next {@code 2 * size} values are its keys and values.
   *
   * @param size the number of entries
   * @return this writer
   */
  public MetaWriter mapHeader(int size) {
    out.writeMapHeader(size);
    return this;
  }

  /**
   * Writes nil.
   *
   * @return this writer
   */
  public MetaWriter nil() {
    out.writeNil();
    return this;
  }

  /**
   * Writes an integer.
   *
   * @param value the value
   * @return this writer
   */
  public MetaWriter integer(long value) {
    out.writeLong(value);
    return this;
  }

  /**
   * Writes an integer or nil.
   *
   * @param value the value, or null
   * @return this writer
   */
  public MetaWriter nullableInteger(Long value) {
    return value == null ? nil() : integer(value);
  }

  /**
   * Writes a boolean.
   *
   * @param value the value
   * @return this writer
   */
  public MetaWriter bool(boolean value) {
    out.writeBoolean(value);
    return this;
  }

  /**
   * Writes a double.
   *
   * @param value the value
   * @return this writer
   */
  public MetaWriter float64(double value) {
    out.writeDouble(value);
    return this;
  }

  /**
   * Writes a string or nil.
   *
   * @param value the value, or null
   * @return this writer
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a string that is not valid Unicode
   */
  public MetaWriter string(String value) {
    if (value == null) {
      return nil();
    }
    out.writeString(value, "string");
    return this;
  }

  /**
   * Writes raw bytes as a msgpack binary.
   *
   * @param value the bytes
   * @return this writer
   */
  public MetaWriter binary(byte[] value) {
    out.writeBinary(value);
    return this;
  }

  /**
   * Writes a list of strings (nil for null).
   *
   * @param values the strings
   * @return this writer
   */
  public MetaWriter strings(Collection<String> values) {
    if (values == null) {
      return nil();
    }
    arrayHeader(values.size());
    for (String v : values) {
      string(v);
    }
    return this;
  }

  /**
   * Writes a list of integers (nil for null).
   *
   * @param values the integers; no null elements
   * @return this writer
   */
  public MetaWriter longs(Collection<Long> values) {
    if (values == null) {
      return nil();
    }
    arrayHeader(values.size());
    for (Long v : values) {
      integer(v);
    }
    return this;
  }

  /**
   * Writes an array of integers.
   *
   * @param values the integers
   * @return this writer
   */
  public MetaWriter longs(long[] values) {
    arrayHeader(values.length);
    for (long v : values) {
      integer(v);
    }
    return this;
  }

  /**
   * Writes a JSON-compatible metadata value: null, String, Boolean, an integral number (as a
   * msgpack integer), Float/Double (as a double), BigInteger and BigDecimal (as extension types
   * that keep their exact value), List and Map with String keys.
   *
   * @param value the value
   * @return this writer
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for any other type, and for a string
   *     (value or map key) that is not valid Unicode
   */
  public MetaWriter value(Object value) {
    switch (value) {
      case null -> out.writeNil();
      case String s -> out.writeString(s, "metadata value");
      case Boolean b -> out.writeBoolean(b);
      case Long l -> out.writeLong(l);
      case Integer i -> out.writeLong(i);
      case Short s -> out.writeLong(s);
      case Byte b -> out.writeLong(b);
      case Double d -> out.writeDouble(d);
      case Float f -> out.writeDouble(f);
      case BigInteger b -> extension(MetaCodec.EXT_BIG_INTEGER, b.toString());
      case BigDecimal b -> extension(MetaCodec.EXT_BIG_DECIMAL, b.toString());
      case Map<?, ?> m when m.isEmpty() -> out.writeMapHeader(0); // no iterator per empty row
      case Map<?, ?> m -> {
        out.writeMapHeader(m.size());
        for (Map.Entry<?, ?> e : m.entrySet()) {
          if (!(e.getKey() instanceof String key)) {
            throw new TqException(
                ErrorCode.INVALID_ARGUMENT, "metadata map key must be a String, got " + e.getKey());
          }
          out.writeString(key, "metadata map key");
          value(e.getValue());
        }
      }
      case List<?> l -> {
        out.writeArrayHeader(l.size());
        for (Object o : l) {
          value(o);
        }
      }
      default ->
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "metadata value of type "
                  + value.getClass().getName()
                  + " cannot be encoded (null, String, Boolean, Number, List, Map)");
    }
    return this;
  }

  private void extension(byte type, String text) {
    out.writeExtension(type, text.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Writes a map of metadata values (nil for null).
   *
   * @param map the map
   * @return this writer
   */
  public MetaWriter valueMap(Map<String, ?> map) {
    return value(map);
  }

  /**
   * Writes a list of metadata-value maps, one per row.
   *
   * @param rows the rows
   * @return this writer
   */
  public MetaWriter rows(List<? extends Map<String, ?>> rows) {
    return value(rows);
  }

  /**
   * Writes maps keyed by global index (tags or backend metadata of some samples).
   *
   * @param records the records by index (nil for null)
   * @return this writer
   */
  public MetaWriter indexedRecords(Map<Long, ? extends Map<String, ?>> records) {
    if (records == null) {
      return nil();
    }
    mapHeader(records.size());
    records.forEach(
        (index, record) -> {
          integer(index);
          value(record);
        });
    return this;
  }

  /**
   * Writes a field schema as {@code [dtype, shape, nested, nonTensor, perSampleShapes]}.
   *
   * @param schema the schema
   * @return this writer
   */
  public MetaWriter fieldSchema(FieldSchema schema) {
    arrayHeader(5);
    string(schema.dtype() == null ? null : schema.dtype().torchName());
    longs(schema.shape());
    bool(schema.nested());
    bool(schema.nonTensor());
    List<List<Long>> shapes = schema.perSampleShapes();
    if (shapes == null) {
      nil();
    } else {
      arrayHeader(shapes.size());
      for (List<Long> s : shapes) {
        longs(s);
      }
    }
    return this;
  }

  /**
   * Writes a map of field schemas by field name (nil for null).
   *
   * @param fields the schemas
   * @return this writer
   */
  public MetaWriter fieldSchemas(Map<String, FieldSchema> fields) {
    if (fields == null) {
      return nil();
    }
    mapHeader(fields.size());
    fields.forEach(
        (name, schema) -> {
          string(name);
          fieldSchema(schema);
        });
    return this;
  }

  /**
   * Writes a batch's metadata as {@code [globalIndexes, partitionIds, fieldSchema,
   * productionStatus, extraInfo, tags, backendMeta, generations]}.
   *
   * @param meta the metadata
   * @return this writer
   */
  public MetaWriter batchMeta(BatchMeta meta) {
    arrayHeader(8);
    longs(meta.globalIndexArray());
    strings(meta.partitionIds());
    fieldSchemas(meta.fieldSchema());
    arrayHeader(meta.size());
    for (int i = 0; i < meta.size(); i++) {
      bool(meta.isProduced(i));
    }
    value(meta.extraInfo());
    rows(meta.tags());
    rows(meta.backendMeta());
    longs(meta.generationArray());
    return this;
  }

  /**
   * Writes key-value metadata as {@code [keys, tags, partitionId, fields, extraInfo, globalIndexes,
   * generations]}.
   *
   * @param meta the metadata
   * @return this writer
   */
  public MetaWriter kvBatchMeta(KvBatchMeta meta) {
    arrayHeader(7);
    strings(meta.keys());
    rows(meta.tags());
    string(meta.partitionId());
    strings(meta.fields());
    value(meta.extraInfo());
    longs(meta.globalIndexes());
    longs(meta.generations());
    return this;
  }

  /**
   * Writes an index set as an array of ascending indexes.
   *
   * @param set the set
   * @return this writer
   */
  public MetaWriter indexSet(IndexSet set) {
    return longs(set.toArray());
  }

  /**
   * Writes a sampling configuration as {@code [dpRank, batchIndex, options]}.
   *
   * @param config the configuration
   * @return this writer
   */
  public MetaWriter samplingConfig(SamplingConfig config) {
    arrayHeader(3);
    nullableInteger(config.dpRank() == null ? null : config.dpRank().longValue());
    nullableInteger(config.batchIndex() == null ? null : config.batchIndex().longValue());
    value(config.options());
    return this;
  }

  /**
   * Writes a duration as nanoseconds (nil for null).
   *
   * @param duration the duration
   * @return this writer
   */
  public MetaWriter duration(Duration duration) {
    if (duration == null) {
      return nil();
    }
    long nanos;
    try {
      nanos = duration.toNanos();
    } catch (ArithmeticException e) {
      nanos = duration.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return integer(nanos);
  }
}
