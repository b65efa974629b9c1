package org.transferqueue.tensor;

import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A range of native memory given by its start address and length, as passed to memory registration.
 *
 * @param address the first byte's address
 * @param lengthBytes the length, zero or more
 */
public record MemoryRegion(long address, long lengthBytes) {

  /**
   * Validates the region.
   *
   * @throws TqException with {@code INVALID_ARGUMENT} for a negative length or a region that runs
   *     past the end of the address space
   */
  public MemoryRegion {
    if (lengthBytes < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "region at address " + address + " has negative lengthBytes=" + lengthBytes);
    }
    if (address < 0 || address + lengthBytes < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "region address=" + address + ", lengthBytes=" + lengthBytes + " is outside memory");
    }
  }

  /**
   * One past the last byte.
   *
   * @return {@code address + lengthBytes}
   */
  public long end() {
    return address + lengthBytes;
  }
}
