package org.transferqueue.storage.checkpoint;

/**
 * The size and CRC32C (Castagnoli, as {@link java.util.zip.CRC32C}) of one checkpoint file.
 *
 * @param sizeBytes the file's length in bytes, at least 0
 * @param crc32c the CRC32C of the whole content, in the low 32 bits
 */
public record FileDigest(long sizeBytes, long crc32c) {
  /**
   * Validates the fields.
   *
   * @throws IllegalArgumentException for a negative size or a checksum wider than 32 bits
   */
  public FileDigest {
    if (sizeBytes < 0) {
      throw new IllegalArgumentException("sizeBytes=" + sizeBytes + " < 0");
    }
    if ((crc32c >>> 32) != 0) {
      throw new IllegalArgumentException("crc32c=" + crc32c + " is wider than 32 bits");
    }
  }

  /**
   * The checksum as 8 lower-case hex digits, as written in a manifest.
   *
   * @return the hex digits
   */
  public String crcHex() {
    return String.format("%08x", crc32c);
  }
}
