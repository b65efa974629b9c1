package org.transferqueue.journal;

/**
 * Cumulative counters of one journal since it was opened, for metrics.
 *
 * @param appends records appended (completed successfully)
 * @param groups group commits written (each one write call sequence and, with {@link
 *     SyncPolicy#FSYNC}, one fsync)
 * @param bytes record bytes written
 * @param fsyncs {@code fsync} calls on segment files
 * @param rejected appends refused because the journal was full
 * @param diskBytes bytes of all segment files now
 * @param lastLsn the LSN of the last record appended or recovered
 */
public record JournalStatistics(
    long appends,
    long groups,
    long bytes,
    long fsyncs,
    long rejected,
    long diskBytes,
    long lastLsn) {}
