package org.transferqueue.journal;

/**
 * What a {@link Journal#recover recovery} found.
 *
 * @param replayed records handed to the visitor (LSN above the checkpoint's)
 * @param skipped valid records at or below the checkpoint's LSN, not replayed
 * @param lastLsn the LSN of the last valid record (0 for an empty journal); the next append gets
 *     {@code lastLsn + 1}
 * @param truncatedBytes bytes of a torn last record cut off the end of the last segment (0 when the
 *     journal ended cleanly)
 * @param segments segment files read
 */
public record Recovery(
    long replayed, long skipped, long lastLsn, long truncatedBytes, int segments) {}
