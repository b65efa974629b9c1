/**
 * A write-ahead journal: numbered records appended to segment files with a CRC32C each, written in
 * groups by one writer thread (group commit) and synced by a {@link
 * org.transferqueue.journal.SyncPolicy}; recovery that replays the records after a checkpoint and
 * refuses to serve damaged data; truncation of the segments a checkpoint covers; and the checkpoint
 * directories a role keeps next to its journal ({@link
 * org.transferqueue.journal.JournalCheckpoints}).
 *
 * <p>The package knows nothing of what the records mean: a role (a storage unit, a store node, the
 * controller) defines its record types and payloads. Tensor bytes are written to the file straight
 * from the caller's memory segments (gathering writes), never copied onto the heap. The file format
 * is documented in {@code docs/RELIABILITY.md}, section 5, and in {@link
 * org.transferqueue.journal.JournalDescriptor}.
 */
package org.transferqueue.journal;
