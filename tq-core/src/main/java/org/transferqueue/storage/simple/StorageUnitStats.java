package org.transferqueue.storage.simple;

import java.util.OptionalLong;

/**
 * A snapshot of one storage unit's occupancy, for metrics and the {@code GET_METRICS} reply.
 *
 * @param unitId the unit's id
 * @param samples distinct samples held (what the capacity counts)
 * @param cells (sample, field) cells held
 * @param fields field names known to the unit
 * @param allocatedBytes native bytes leased from the unit's allocator, by block size; includes
 *     blocks kept alive by a surviving row (see {@link CellBlock})
 * @param peakBytes the highest {@code allocatedBytes} so far
 * @param capacitySamples the capacity in samples, empty when unlimited
 */
public record StorageUnitStats(
    String unitId,
    long samples,
    long cells,
    int fields,
    long allocatedBytes,
    long peakBytes,
    OptionalLong capacitySamples) {}
