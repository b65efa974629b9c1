package org.transferqueue.codec;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A value this system cannot interpret but keeps verbatim: a msgpack extension of a kind that
 * carries a foreign object (upstream's pickled objects, extension type 1, and callables, type 2).
 *
 * <p>It can be stored and returned unchanged; encoding it writes the same extension type and
 * payload back. Immutable: the payload is copied in and out.
 *
 * @param extensionType the msgpack extension type, {@link ValueDescriptor#EXT_OPAQUE} or {@link
 *     ValueDescriptor#EXT_CALLABLE}
 * @param payload the extension payload
 */
public record OpaqueValue(int extensionType, byte[] payload) {
  /**
   * Validates and copies the payload.
   *
   * @throws TqException with {@code INVALID_ARGUMENT} for another extension type
   */
  public OpaqueValue {
    if (extensionType != ValueDescriptor.EXT_OPAQUE
        && extensionType != ValueDescriptor.EXT_CALLABLE) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "opaque extension type=" + extensionType + " is not 1 (object) or 2 (callable)");
    }
    payload = Objects.requireNonNull(payload, "payload").clone();
  }

  /**
   * A copy of the payload.
   *
   * @return the payload bytes
   */
  @Override
  public byte[] payload() {
    return payload.clone();
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof OpaqueValue other
        && extensionType == other.extensionType
        && Arrays.equals(payload, other.payload);
  }

  @Override
  public int hashCode() {
    return 31 * extensionType + Arrays.hashCode(payload);
  }

  @Override
  public String toString() {
    int shown = Math.min(payload.length, 16);
    return "OpaqueValue[extensionType="
        + extensionType
        + ", length="
        + payload.length
        + ", head="
        + HexFormat.of().formatHex(payload, 0, shown)
        + "]";
  }
}
