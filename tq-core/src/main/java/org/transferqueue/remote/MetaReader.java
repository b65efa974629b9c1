package org.transferqueue.remote;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.codec.MsgpackException;
import org.transferqueue.codec.MsgpackReader;
import org.transferqueue.codec.MsgpackType;
import org.transferqueue.controller.IndexSet;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.tensor.DType;

/**
 * Reads metadata values written by {@link MetaWriter} from one msgpack message, through the codec
 * cursor ({@link MsgpackReader}).
 *
 * <p>Malformed input (truncated, wrong msgpack types, wrong array lengths, out-of-range numbers)
 * fails with a {@link ProtocolException} ({@link ErrorCode#PROTOCOL_ERROR}) naming what was
 * expected; values that are well-formed msgpack but invalid for their type (a negative index, a
 * nested field without shapes) fail with the type's own {@link TqException}. Strings must be valid
 * UTF-8: one that is not (an encoded surrogate {@code ED A0 80}, an overlong form) is a {@code
 * PROTOCOL_ERROR} too, never a string with replacement characters. Not thread-safe.
 */
public final class MetaReader {
  private final MsgpackReader in;

  /**
   * Reads from a message.
   *
   * @param message the msgpack bytes; not copied, not modified
   */
  public MetaReader(byte[] message) {
    this.in = new MsgpackReader(message, "message");
  }

  /** Every element takes at least one byte: a longer header is hostile or truncated input. */
  private int checkedSize(int size, int bytesPerElement, String what) {
    long remaining = in.remaining();
    if ((long) size * bytesPerElement > remaining) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          what + " declares " + size + " elements but only " + remaining + " bytes remain");
    }
    return size;
  }

  /**
   * Checks that the whole message was read.
   *
   * @throws ProtocolException if bytes remain
   */
  public void expectEnd() {
    if (in.hasRemaining()) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR, "unexpected bytes after the message at offset " + in.offset());
    }
  }

  /**
   * Reads an array header and checks its length.
   *
   * @param expected the expected number of elements
   * @param what what the array is, for the error message
   * @throws ProtocolException if the next value is not an array of that length
   */
  public void expectArray(int expected, String what) {
    int size = arrayHeader(what);
    if (size != expected) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR, what + " has " + size + " elements, expected " + expected);
    }
  }

  /**
   * Reads an array header.
   *
   * @param what what the array is, for the error message
   * @return the number of elements
   */
  public int arrayHeader(String what) {
    try {
      return checkedSize(in.readArrayHeader(), 1, what);
    } catch (MsgpackException e) {
      throw malformed(what + " (array)", e);
    }
  }

  /**
   * Reads a map header.
   *
   * @param what what the map is, for the error message
   * @return the number of entries
   */
  public int mapHeader(String what) {
    try {
      return checkedSize(in.readMapHeader(), 2, what);
    } catch (MsgpackException e) {
      throw malformed(what + " (map)", e);
    }
  }

  /**
   * Consumes a nil if one is next.
   *
   * @return true if a nil was consumed
   */
  public boolean tryNil() {
    try {
      return in.tryReadNil();
    } catch (MsgpackException e) {
      throw malformed("a value", e);
    }
  }

  /**
   * Reads an integer.
   *
   * @param what what the integer is, for the error message
   * @return the value
   */
  public long integer(String what) {
    try {
      return in.readLong();
    } catch (MsgpackException e) {
      throw malformed(what + " (integer)", e);
    }
  }

  /**
   * Reads an integer in {@code int} range.
   *
   * @param what what the integer is, for the error message
   * @return the value
   */
  public int int32(String what) {
    long v = integer(what);
    if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
      throw new ProtocolException(ErrorCode.PROTOCOL_ERROR, what + "=" + v + " out of int range");
    }
    return (int) v;
  }

  /**
   * Reads an integer in {@code int} range or nil.
   *
   * @param what what the integer is, for the error message
   * @return the value, or null for nil
   */
  public Integer nullableInt32(String what) {
    return tryNil() ? null : int32(what);
  }

  /**
   * Reads a boolean.
   *
   * @param what what the boolean is, for the error message
   * @return the value
   */
  public boolean bool(String what) {
    try {
      return in.readBoolean();
    } catch (MsgpackException e) {
      throw malformed(what + " (boolean)", e);
    }
  }

  /**
   * Reads a string or nil.
   *
   * @param what what the string is, for the error message
   * @return the value, or null for nil
   */
  public String string(String what) {
    try {
      return in.tryReadNil() ? null : in.readString();
    } catch (MsgpackException e) {
      throw malformed(what + " (string)", e);
    }
  }

  /**
   * Reads a string that must not be nil.
   *
   * @param what what the string is, for the error message
   * @return the value
   */
  public String requiredString(String what) {
    String s = string(what);
    if (s == null) {
      throw new ProtocolException(ErrorCode.PROTOCOL_ERROR, what + " is nil");
    }
    return s;
  }

  /**
   * Reads a msgpack binary.
   *
   * @param what what the bytes are, for the error message
   * @return a copy of the bytes
   */
  public byte[] binary(String what) {
    try {
      int n = checkedSize(in.readBinaryHeader(), 1, what);
      return in.readBytes(n);
    } catch (MsgpackException e) {
      throw malformed(what + " (binary)", e);
    }
  }

  /**
   * Reads a list of strings or nil.
   *
   * @param what what the list is, for the error message
   * @return an unmodifiable list, or null for nil
   */
  public List<String> strings(String what) {
    if (tryNil()) {
      return null;
    }
    int n = arrayHeader(what);
    ArrayList<String> list = new ArrayList<>(Math.min(n, 1024));
    for (int i = 0; i < n; i++) {
      // The element's name is built only for an error: these lists hold a key per sample.
      String s = string(what);
      if (s == null) {
        throw new ProtocolException(ErrorCode.PROTOCOL_ERROR, what + "[" + i + "] is nil");
      }
      list.add(s);
    }
    return Collections.unmodifiableList(list);
  }

  /**
   * Reads a list of integers or nil.
   *
   * @param what what the list is, for the error message
   * @return an unmodifiable list, or null for nil
   */
  public List<Long> longs(String what) {
    if (tryNil()) {
      return null;
    }
    int n = arrayHeader(what);
    ArrayList<Long> list = new ArrayList<>(Math.min(n, 1024));
    for (int i = 0; i < n; i++) {
      list.add(integer(what));
    }
    return Collections.unmodifiableList(list);
  }

  /**
   * Reads an array of integers.
   *
   * @param what what the array is, for the error message
   * @return the values
   */
  public long[] longArray(String what) {
    int n = arrayHeader(what);
    long[] values = new long[n];
    for (int i = 0; i < n; i++) {
      values[i] = integer(what);
    }
    return values;
  }

  /**
   * Reads a metadata value written by {@link MetaWriter#value(Object)}: integers come back as Long,
   * floating-point numbers as Double, maps as unmodifiable insertion-ordered maps.
   *
   * @param what what the value is, for the error message
   * @return the value
   */
  public Object value(String what) {
    try {
      int format = in.peekFormat();
      return switch (MsgpackType.of(format)) {
        case NIL -> {
          in.tryReadNil();
          yield null;
        }
        case BOOLEAN -> in.readBoolean();
        case INTEGER -> in.readLong();
        case FLOAT -> in.readDouble();
        case STRING -> in.readString();
        case ARRAY -> {
          int n = checkedSize(in.readArrayHeader(), 1, what);
          ArrayList<Object> list = new ArrayList<>(Math.min(n, 1024));
          for (int i = 0; i < n; i++) {
            list.add(value(what));
          }
          yield Collections.unmodifiableList(list);
        }
        case MAP -> valueMapBody(checkedSize(in.readMapHeader(), 2, what), what);
        case EXTENSION -> extension(what);
        case BINARY ->
            throw new ProtocolException(
                ErrorCode.PROTOCOL_ERROR, what + ": binary is not a metadata value");
        case NEVER_USED ->
            throw new ProtocolException(
                ErrorCode.PROTOCOL_ERROR,
                "malformed message at offset "
                    + in.offset()
                    + ": expected "
                    + what
                    + " (format byte 0x"
                    + Integer.toHexString(format)
                    + " is never used)");
      };
    } catch (MsgpackException e) {
      throw malformed(what, e);
    }
  }

  private Object extension(String what) {
    int length = checkedSize(in.readExtensionHeader(), 1, what);
    byte type = in.extensionType();
    String text = new String(in.readBytes(length), StandardCharsets.UTF_8);
    try {
      if (type == MetaCodec.EXT_BIG_INTEGER) {
        return new BigInteger(text);
      }
      if (type == MetaCodec.EXT_BIG_DECIMAL) {
        return new BigDecimal(text);
      }
    } catch (NumberFormatException e) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR, what + ": invalid number '" + text + "'");
    }
    throw new ProtocolException(
        ErrorCode.PROTOCOL_ERROR, what + ": unknown extension type " + type);
  }

  private Map<String, Object> valueMapBody(int n, String what) {
    if (n == 0) {
      return Map.of();
    }
    LinkedHashMap<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      MsgpackType type = in.peekType();
      if (type != MsgpackType.STRING) {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_ERROR, what + ": map key must be a string, got " + type);
      }
      String key = in.readString();
      map.put(key, entryValue(what, key));
    }
    return Collections.unmodifiableMap(map);
  }

  /**
   * Reads the value of entry {@code key} of map {@code what}, as {@link #value} would with the name
   * {@code what.key}; the name is built only for a container or an error (tags hold a scalar per
   * entry and sample).
   */
  private Object entryValue(String what, String key) {
    try {
      switch (in.peekType()) {
        case INTEGER -> {
          return in.readLong();
        }
        case STRING -> {
          return in.readString();
        }
        case BOOLEAN -> {
          return in.readBoolean();
        }
        case FLOAT -> {
          return in.readDouble();
        }
        case NIL -> {
          in.tryReadNil();
          return null;
        }
        default -> {
          // containers, extensions and invalid formats: below, with their name
        }
      }
    } catch (MsgpackException e) {
      throw malformed(what + "." + key, e);
    }
    return value(what + "." + key);
  }

  /**
   * Reads a map of metadata values; nil reads as the empty map.
   *
   * @param what what the map is, for the error message
   * @return an unmodifiable map
   */
  public Map<String, Object> valueMap(String what) {
    if (tryNil()) {
      return Map.of();
    }
    int n = mapHeader(what);
    try {
      return valueMapBody(n, what);
    } catch (MsgpackException e) {
      throw malformed(what, e);
    }
  }

  /**
   * Reads the metadata-value map of element {@code index} of a list or record set, as {@link
   * #valueMap} would with the name {@code what[index]}; the name is built only when the map has
   * entries (it names them in errors) or the header is malformed. Rows are mostly empty maps.
   */
  private Map<String, Object> element(String what, long index) {
    if (tryNil()) {
      return Map.of();
    }
    int header;
    try {
      header = in.readMapHeader();
    } catch (MsgpackException e) {
      throw malformed(what + "[" + index + "] (map)", e);
    }
    if (header == 0) {
      return Map.of();
    }
    String name = what + "[" + index + "]";
    int n = checkedSize(header, 2, name);
    try {
      return valueMapBody(n, name);
    } catch (MsgpackException e) {
      throw malformed(name, e);
    }
  }

  /**
   * Reads a list of metadata-value maps.
   *
   * @param what what the rows are, for the error message
   * @return an unmodifiable list
   */
  public List<Map<String, Object>> rows(String what) {
    int n = arrayHeader(what);
    ArrayList<Map<String, Object>> rows = new ArrayList<>(Math.min(n, 1024));
    for (int i = 0; i < n; i++) {
      rows.add(element(what, i));
    }
    return Collections.unmodifiableList(rows);
  }

  /**
   * Reads records keyed by global index or nil.
   *
   * @param what what the records are, for the error message
   * @return an unmodifiable insertion-ordered map, or null for nil
   */
  public Map<Long, Map<String, Object>> indexedRecords(String what) {
    if (tryNil()) {
      return null;
    }
    int n = mapHeader(what);
    LinkedHashMap<Long, Map<String, Object>> records = new LinkedHashMap<>();
    String indexWhat = what + " index";
    for (int i = 0; i < n; i++) {
      long index = integer(indexWhat);
      records.put(index, element(what, index));
    }
    return Collections.unmodifiableMap(records);
  }

  /**
   * Reads a field schema.
   *
   * @param what what the schema is, for the error message
   * @return the schema
   */
  public FieldSchema fieldSchema(String what) {
    expectArray(5, what);
    String dtype = string(what + ".dtype");
    List<Long> shape = longs(what + ".shape");
    boolean nested = bool(what + ".nested");
    boolean nonTensor = bool(what + ".nonTensor");
    List<List<Long>> perSample = null;
    if (!tryNil()) {
      int n = arrayHeader(what + ".perSampleShapes");
      ArrayList<List<Long>> shapes = new ArrayList<>(Math.min(n, 1024));
      for (int i = 0; i < n; i++) {
        shapes.add(longs(what + ".perSampleShapes"));
      }
      perSample = shapes;
    }
    return new FieldSchema(
        dtype == null ? null : DType.fromName(dtype), shape, nested, nonTensor, perSample);
  }

  /**
   * Reads field schemas by name or nil.
   *
   * @param what what the schemas are, for the error message
   * @return an insertion-ordered unmodifiable map, or null for nil
   */
  public Map<String, FieldSchema> fieldSchemas(String what) {
    if (tryNil()) {
      return null;
    }
    int n = mapHeader(what);
    LinkedHashMap<String, FieldSchema> map = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      String name = requiredString(what + " name");
      map.put(name, fieldSchema(what + "." + name));
    }
    return Collections.unmodifiableMap(map);
  }

  /**
   * Reads a batch's metadata.
   *
   * @return the metadata
   */
  public BatchMeta batchMeta() {
    expectArray(8, "BatchMeta");
    long[] indexes = longArray("BatchMeta.globalIndexes");
    List<String> partitions = strings("BatchMeta.partitionIds");
    if (partitions == null) {
      throw new ProtocolException(ErrorCode.PROTOCOL_ERROR, "BatchMeta.partitionIds is nil");
    }
    Map<String, FieldSchema> fields = fieldSchemas("BatchMeta.fieldSchema");
    int n = arrayHeader("BatchMeta.productionStatus");
    ArrayList<Boolean> status = new ArrayList<>(Math.min(n, 1024));
    for (int i = 0; i < n; i++) {
      status.add(bool("BatchMeta.productionStatus"));
    }
    Map<String, Object> extra = valueMap("BatchMeta.extraInfo");
    List<Map<String, Object>> tags = rows("BatchMeta.tags");
    List<Map<String, Object>> backend = rows("BatchMeta.backendMeta");
    long[] generations = longArray("BatchMeta.generations");
    return BatchMeta.builder()
        .globalIndexes(indexes)
        .generations(generations)
        .partitionIds(partitions)
        .fieldSchema(fields == null ? Map.of() : fields)
        .productionStatus(status)
        .extraInfo(extra)
        .tags(tags)
        .backendMeta(backend)
        .build();
  }

  /**
   * Reads key-value metadata.
   *
   * @return the metadata
   */
  public KvBatchMeta kvBatchMeta() {
    expectArray(7, "KvBatchMeta");
    List<String> keys = strings("KvBatchMeta.keys");
    List<Map<String, Object>> tags = rows("KvBatchMeta.tags");
    String partition = string("KvBatchMeta.partitionId");
    List<String> fields = strings("KvBatchMeta.fields");
    Map<String, Object> extra = valueMap("KvBatchMeta.extraInfo");
    List<Long> indexes = longs("KvBatchMeta.globalIndexes");
    List<Long> generations = longs("KvBatchMeta.generations");
    return new KvBatchMeta(keys, tags, partition, fields, extra, indexes, generations);
  }

  /**
   * Reads an index set.
   *
   * @param what what the set is, for the error message
   * @return the set
   */
  public IndexSet indexSet(String what) {
    return IndexSet.of(longArray(what));
  }

  /**
   * Reads a sampling configuration.
   *
   * @return the configuration
   */
  public SamplingConfig samplingConfig() {
    expectArray(3, "SamplingConfig");
    Integer dpRank = nullableInt32("SamplingConfig.dpRank");
    Integer batchIndex = nullableInt32("SamplingConfig.batchIndex");
    Map<String, Object> options = valueMap("SamplingConfig.options");
    return new SamplingConfig(dpRank, batchIndex, options);
  }

  /**
   * Reads a duration written as nanoseconds, or nil.
   *
   * @param what what the duration is, for the error message
   * @return the duration, or null for nil
   */
  public Duration duration(String what) {
    return tryNil() ? null : Duration.ofNanos(integer(what));
  }

  /**
   * Reads an enum constant written by its name.
   *
   * @param type the enum class
   * @param what what the value is, for the error message
   * @param <E> the enum type
   * @return the constant
   */
  public <E extends Enum<E>> E enumValue(Class<E> type, String what) {
    String name = requiredString(what);
    try {
      return Enum.valueOf(type, name);
    } catch (IllegalArgumentException e) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR, what + ": unknown " + type.getSimpleName() + " '" + name + "'");
    }
  }

  private ProtocolException malformed(String expected, MsgpackException cause) {
    ProtocolException e =
        new ProtocolException(
            ErrorCode.PROTOCOL_ERROR,
            "malformed message at offset "
                + cause.offset()
                + ": expected "
                + expected
                + " ("
                + cause.detail()
                + ")");
    e.initCause(cause);
    return e;
  }
}
