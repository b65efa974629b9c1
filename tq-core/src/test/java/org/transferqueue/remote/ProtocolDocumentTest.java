package org.transferqueue.remote;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.FrameHeaderFlyweight;
import org.transferqueue.codec.ValueDescriptor;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.objectstore.MooncakeKvClient;
import org.transferqueue.objectstore.StoreStatus;
import org.transferqueue.remote.objectstore.StoreNodeProtocol;
import org.transferqueue.remote.storage.StorageUnitProtocol;
import org.transferqueue.storage.kv.KvKeys;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.transport.MessageDescriptor;
import org.transferqueue.transport.TransportConfig;

/**
 * Checks docs/PROTOCOL.md against the code wherever that is cheap: header offsets and sizes, the
 * example HELLO header bytes, every entry of the remote services' protocol tables (its number and
 * name, both ways) and their limit constants, every value of both error-code enums, transport
 * limits, and the names of dtypes and column kinds. A change of any of these numbers without the
 * document fails here.
 */
class ProtocolDocumentTest {
  private static final Pattern TABLE_ROW = Pattern.compile("(?m)^\\| *(-?\\d+) \\| `([A-Z_0-9]+)`");

  private static String document;

  /** The document with every run of white space collapsed to one space. */
  private static String flat;

  @BeforeAll
  static void readDocument() throws IOException {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.exists(dir.resolve("docs/PROTOCOL.md"))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("docs/PROTOCOL.md above the working directory").isNotNull();
    document = Files.readString(dir.resolve("docs/PROTOCOL.md"), StandardCharsets.UTF_8);
    flat = document.replaceAll("\\s+", " ");
  }

  @Test
  void shouldListEveryHeaderFieldAtTheOffsetAndWidthOfFrameDescriptor() {
    Map<String, int[]> fields = new LinkedHashMap<>();
    fields.put("magic", new int[] {FrameDescriptor.MAGIC_OFFSET, FrameDescriptor.VERSION_OFFSET});
    fields.put("version", new int[] {FrameDescriptor.VERSION_OFFSET, FrameDescriptor.TYPE_OFFSET});
    fields.put("type", new int[] {FrameDescriptor.TYPE_OFFSET, FrameDescriptor.FLAGS_OFFSET});
    fields.put(
        "flags", new int[] {FrameDescriptor.FLAGS_OFFSET, FrameDescriptor.METADATA_LENGTH_OFFSET});
    fields.put(
        "metadata length",
        new int[] {FrameDescriptor.METADATA_LENGTH_OFFSET, FrameDescriptor.CORRELATION_ID_OFFSET});
    fields.put(
        "correlation id",
        new int[] {FrameDescriptor.CORRELATION_ID_OFFSET, FrameDescriptor.BODY_LENGTH_OFFSET});
    fields.put(
        "body length",
        new int[] {FrameDescriptor.BODY_LENGTH_OFFSET, FrameDescriptor.HEADER_LENGTH});
    fields.forEach(
        (name, range) ->
            assertThat(document)
                .as("header table row of %s", name)
                .containsPattern(
                    "(?m)^ +"
                        + range[0]
                        + " +"
                        + (range[1] - range[0])
                        + " +"
                        + Pattern.quote(name)
                        + " "));
    assertThat(document)
        .containsPattern("(?m)^ +" + FrameDescriptor.HEADER_LENGTH + " +M +metadata section")
        .contains("align64(" + FrameDescriptor.HEADER_LENGTH + " + M)");
  }

  @Test
  void shouldQuoteEveryFrameConstantWithItsValue() {
    Map<String, Long> constants = new LinkedHashMap<>();
    constants.put("CURRENT_VERSION", (long) FrameDescriptor.CURRENT_VERSION);
    constants.put("MAGIC_OFFSET", (long) FrameDescriptor.MAGIC_OFFSET);
    constants.put("VERSION_OFFSET", (long) FrameDescriptor.VERSION_OFFSET);
    constants.put("TYPE_OFFSET", (long) FrameDescriptor.TYPE_OFFSET);
    constants.put("FLAGS_OFFSET", (long) FrameDescriptor.FLAGS_OFFSET);
    constants.put("METADATA_LENGTH_OFFSET", (long) FrameDescriptor.METADATA_LENGTH_OFFSET);
    constants.put("CORRELATION_ID_OFFSET", (long) FrameDescriptor.CORRELATION_ID_OFFSET);
    constants.put("BODY_LENGTH_OFFSET", (long) FrameDescriptor.BODY_LENGTH_OFFSET);
    constants.put("HEADER_LENGTH", (long) FrameDescriptor.HEADER_LENGTH);
    constants.put("BODY_ALIGNMENT", (long) FrameDescriptor.BODY_ALIGNMENT);
    constants.put("FLAG_RESPONSE", (long) FrameDescriptor.FLAG_RESPONSE);
    constants.put("FLAG_ERROR", (long) FrameDescriptor.FLAG_ERROR);
    constants.put("FLAG_SHARED_BODY", (long) FrameDescriptor.FLAG_SHARED_BODY);
    constants.forEach(
        (name, value) -> assertThat(flat).contains("`" + name + "` = " + value + ","));
    assertThat(flat)
        .contains("`MAGIC` = 0x" + Integer.toHexString(FrameDescriptor.MAGIC).toUpperCase())
        .contains("`MAX_METADATA_LENGTH` = 2^32 - 1");
    assertThat(FrameDescriptor.MAX_METADATA_LENGTH).isEqualTo((1L << 32) - 1);
  }

  @Test
  void shouldShowTheHelloExampleHeaderAsTheFlyweightWritesIt() {
    byte[] frame = new byte[FrameDescriptor.HEADER_LENGTH];
    new FrameHeaderFlyweight()
        .wrap(MemorySegment.ofArray(frame))
        .writeHeader(MessageDescriptor.TYPE_HELLO, 0, 1, 3, 0);
    Matcher block =
        Pattern.compile("### 2\\.1[^`]*```\\n(.*?)```", Pattern.DOTALL).matcher(document);
    assertThat(block.find()).as("example block of section 2.1").isTrue();
    StringBuilder hex = new StringBuilder();
    for (String line : block.group(1).split("\\n")) {
      Matcher bytes = Pattern.compile("^((?:[0-9a-f]{2} +)+)").matcher(line + " ");
      if (bytes.find() && hex.length() < 2 * FrameDescriptor.HEADER_LENGTH) {
        hex.append(bytes.group(1).replace(" ", ""));
      }
    }
    assertThat(hex.substring(0, 2 * FrameDescriptor.HEADER_LENGTH))
        .isEqualTo(HexFormat.of().formatHex(frame));
  }

  @Test
  void shouldListEveryMessageTypeWithItsNumber() {
    Map<Integer, String> types = new TreeMap<>();
    for (MessageType type : ProtocolTables.all()) {
      assertThat(types.put(type.typeId(), type.name()))
          .as("type %s used twice", type.typeId())
          .isNull();
    }
    Map<Integer, String> documented = new TreeMap<>();
    for (String section : List.of("## 7.", "## 8.", "## 9.")) {
      Matcher row = TABLE_ROW.matcher(section(section));
      while (row.find()) {
        documented.put(Integer.parseInt(row.group(1)), row.group(2));
      }
    }
    assertThat(documented).isEqualTo(types);
    assertThat(flat)
        .contains("| " + MessageDescriptor.TYPE_HELLO + " | HELLO (`MessageDescriptor.TYPE_HELLO`)")
        .contains(
            "| "
                + MessageDescriptor.TYPE_SHM_ATTACH
                + " | SHM_ATTACH (`MessageDescriptor.TYPE_SHM_ATTACH`)")
        .contains(
            "| "
                + MessageDescriptor.TYPE_SHM_GRANT
                + " | SHM_GRANT (`MessageDescriptor.TYPE_SHM_GRANT`)")
        .contains(
            "| "
                + MessageDescriptor.TYPE_SHM_RELEASE
                + " | SHM_RELEASE (`MessageDescriptor.TYPE_SHM_RELEASE`)")
        .contains(
            "below "
                + MessageDescriptor.FIRST_APPLICATION_TYPE
                + " (`MessageDescriptor.FIRST_APPLICATION_TYPE`)")
        .contains("is " + MessageDescriptor.MAX_TYPE + " (`MessageDescriptor.MAX_TYPE`)");
  }

  @Test
  void shouldQuoteEveryMessageLimitWithItsValue() throws IllegalAccessException {
    for (Class<?> messages : List.of(StorageUnitProtocol.class, StoreNodeProtocol.class)) {
      for (Field field : messages.getDeclaredFields()) {
        if (isIntConstant(field) && field.getName().startsWith("MAX_")) {
          field.setAccessible(true);
          assertThat(flat)
              .as("%s.%s", messages.getSimpleName(), field.getName())
              .containsPattern(
                  "`" + field.getName() + "` = (2\\^\\d+ = )?" + field.getInt(null) + "\\b");
        }
      }
    }
    assertThat(flat)
        .contains("`ValueDescriptor.MAX_DEPTH` = " + ValueDescriptor.MAX_DEPTH)
        .contains("`ValueDescriptor.MAX_RANK` = " + ValueDescriptor.MAX_RANK)
        .contains(
            "ext " + MetaCodec.EXT_BIG_INTEGER + " (MetaCodec.EXT_BIG_INTEGER)",
            "ext " + MetaCodec.EXT_BIG_DECIMAL + " (MetaCodec.EXT_BIG_DECIMAL)")
        .contains(
            ValueDescriptor.EXT_OPAQUE + " (`EXT_OPAQUE`",
            ValueDescriptor.EXT_CALLABLE + " (`EXT_CALLABLE`)",
            "extension type " + ValueDescriptor.EXT_TENSOR + " (`EXT_TENSOR`)",
            ValueDescriptor.EXT_NESTED_TENSOR + " (`EXT_NESTED_TENSOR`)",
            ValueDescriptor.EXT_NDARRAY + " (`EXT_NDARRAY`)");
  }

  @Test
  void shouldListEveryErrorCodeWithItsNumberAndCategory() {
    Map<Integer, String> documented = rows(section("### 5.1"));
    Map<Integer, String> codes = new TreeMap<>();
    for (ErrorCode code : ErrorCode.values()) {
      codes.put(code.value(), code.name());
      assertThat(flat)
          .contains(
              "| " + code.value() + " | `" + code.name() + "` | " + code.category().name() + " |");
    }
    assertThat(documented).isEqualTo(codes);
  }

  @Test
  void shouldListEveryObjectStoreErrorCodeWithItsNumber() {
    Map<Integer, String> codes = new TreeMap<>();
    for (StoreStatus code : StoreStatus.values()) {
      codes.put(code.code(), code.name());
    }
    assertThat(rows(section("### 5.2"))).isEqualTo(codes);
  }

  @Test
  void shouldQuoteTheTransportLimitsWithTheirDefaults() throws ReflectiveOperationException {
    Field maxMessage =
        Class.forName("org.transferqueue.transport.ControlMessages")
            .getDeclaredField("MAX_ERROR_MESSAGE_CHARS");
    maxMessage.setAccessible(true);
    assertThat(flat)
        .contains(
            NetworkConfig.MAX_FRAME_BYTES_DEFAULT + " (`NetworkConfig.MAX_FRAME_BYTES_DEFAULT`)",
            NetworkConfig.MIN_FRAME_BYTES + " (`MIN_FRAME_BYTES`)",
            TransportConfig.MAX_METADATA_BYTES_DEFAULT + " (`MAX_METADATA_BYTES_DEFAULT`)",
            TransportConfig.MIN_METADATA_BYTES + "..2^32-1",
            TransportConfig.MAX_BODY_SEGMENTS_DEFAULT + " (`MAX_BODY_SEGMENTS_DEFAULT`)",
            (TransportConfig.CONNECTION_MEMORY_LIMIT_BYTES_DEFAULT >> 30)
                + " GiB (`CONNECTION_MEMORY_LIMIT_BYTES_DEFAULT`)",
            "`MAX_CONCURRENT_REQUESTS_PER_CONNECTION_DEFAULT` = "
                + TransportConfig.MAX_CONCURRENT_REQUESTS_PER_CONNECTION_DEFAULT,
            "`CONNECTIONS_PER_PEER_DEFAULT` = " + TransportConfig.CONNECTIONS_PER_PEER_DEFAULT,
            "`DEFAULT_CALL_TIMEOUT_DEFAULT` = "
                + TransportConfig.DEFAULT_CALL_TIMEOUT_DEFAULT.toSeconds()
                + " s",
            "default " + TransportConfig.SHUTDOWN_GRACE_PERIOD_DEFAULT.toSeconds() + " s",
            "default " + NetworkConfig.CONNECT_TIMEOUT_DEFAULT.toSeconds() + " s",
            maxMessage.getInt(null) + " characters (`MAX_ERROR_MESSAGE_CHARS`)",
            NetworkConfig.SHARED_MEMORY_LIMIT_BYTES_DEFAULT
                + " (`NetworkConfig.SHARED_MEMORY_LIMIT_BYTES_DEFAULT`)",
            NetworkConfig.SHARED_MEMORY_SEGMENT_BYTES_DEFAULT
                + " (`NetworkConfig.SHARED_MEMORY_SEGMENT_BYTES_DEFAULT`)",
            NetworkConfig.SHARED_MEMORY_MIN_BYTES_DEFAULT
                + " (`NetworkConfig.SHARED_MEMORY_MIN_BYTES_DEFAULT`)",
            "at least " + org.transferqueue.config.Defaults.MIN_SHARED_MEMORY_SEGMENT_BYTES);
  }

  @Test
  void shouldDescribeTheSharedMemoryWireElementsAsTheCodeWritesThem() {
    String shared = section("### 4.2").replaceAll("\\s+", " ");
    byte[] magic = {0x54, 0x51, 0x53, 0x48, 0x4D, 0x00, 0x00, 0x01};
    StringBuilder hex = new StringBuilder();
    for (byte b : magic) {
      hex.append(String.format("%02X ", b));
    }
    assertThat(shared)
        .contains(hex.toString().trim())
        .contains("`FLAG_SHARED_BODY` (" + FrameDescriptor.FLAG_SHARED_BODY + ")")
        .contains("**SHM_ATTACH** (type " + MessageDescriptor.TYPE_SHM_ATTACH + ")")
        .contains("**SHM_GRANT** (type " + MessageDescriptor.TYPE_SHM_GRANT + ")")
        .contains("**SHM_RELEASE** (type " + MessageDescriptor.TYPE_SHM_RELEASE + ")")
        .contains(
            "`FLAG_RESPONSE | FLAG_SHARED_BODY` = "
                + (FrameDescriptor.FLAG_RESPONSE | FrameDescriptor.FLAG_SHARED_BODY))
        .contains("`" + NetworkConfig.SHARED_MEMORY_PROP_NAME + ": false`")
        .contains("`" + NetworkConfig.SHARED_MEMORY_MIN_BYTES_PROP_NAME + "` (default 65536)");
  }

  @Test
  void shouldNameEveryDtypeAndColumnKindAsTheCodeDoes() {
    for (DType type : DType.values()) {
      assertThat(flat).contains("`" + type.torchName() + "`");
    }
    StringBuilder kinds = new StringBuilder();
    for (ColumnKind kind : ColumnKind.values()) {
      kinds.append(kinds.isEmpty() ? "" : ", ").append(kind.ordinal()).append(" `");
      kinds.append(kind.name()).append('`');
    }
    assertThat(flat).contains("ordinals: " + kinds + ".");
  }

  @Test
  void shouldDescribeTheKeysAndPackedBuffersOfTheKeyValueLayer() {
    EncodedValue hi = ValueEncoder.encode("hi");
    byte[] packed = new byte[Math.toIntExact(hi.packedSize())];
    hi.packInto(MemorySegment.ofArray(packed));
    String hex = HexFormat.of().formatHex(packed);
    String spaced = hex.substring(0, 8) + " " + hex.substring(8, 16) + " " + hex.substring(16, 24);

    assertThat(flat)
        .contains("`" + KvKeys.key(17, 2, "responses") + "`")
        .contains(spaced + " " + hex.substring(24))
        .contains("{\"" + MooncakeKvClient.PACKED_SIZE + "\": n}")
        .contains("\"" + MooncakeKvClient.N_CHUNKS + "\": k")
        .contains("\"" + MooncakeKvClient.CHUNK_BYTES + "\": c");
  }

  private static boolean isIntConstant(Field field) {
    int m = field.getModifiers();
    return Modifier.isStatic(m) && Modifier.isFinal(m) && field.getType() == int.class;
  }

  /**
   * The text from a heading that starts with {@code prefix} (such as {@code "## 7."}) to the next
   * heading of the same or a higher level.
   */
  private static String section(String prefix) {
    int start = document.indexOf("\n" + prefix);
    assertThat(start).as("heading %s", prefix).isNotNegative();
    int level = prefix.indexOf(' ');
    Matcher next = Pattern.compile("\\n#{1," + level + "} ").matcher(document);
    int end = next.find(start + 1) ? next.start() : document.length();
    return document.substring(start, end);
  }

  private static Map<Integer, String> rows(String text) {
    Map<Integer, String> rows = new TreeMap<>();
    Matcher row = TABLE_ROW.matcher(text);
    while (row.find()) {
      rows.put(Integer.parseInt(row.group(1)), row.group(2));
    }
    return rows;
  }
}
