/**
 * SimpleStorage, the default backend: N {@link org.transferqueue.storage.simple.StorageUnit}s, each
 * a 2-D store (global index x field) of off-heap cells from its own child allocator, and the {@link
 * org.transferqueue.storage.simple.SimpleStorageManager} that routes sample {@code gi} to unit
 * {@code gi mod N} and runs put, get and clear on the units in parallel.
 *
 * <pre>
 *   put(batch, meta)                               get(meta, allocator)
 *     check sizes, indexes, dtypes                   route gis to units
 *     per (partition, unit): copy rows -> blocks     per unit: retain cells (read lock)
 *     per (partition, unit): commit (write lock)     plan columns, allocate result
 *     per partition: notify controller               per unit: copy cells -> result
 * </pre>
 *
 * <p>Guarantees: a put is atomic (a failure leaves no cell of the request written; a rejected
 * notification undoes its partition's cells); a get never observes part of a put of a sample; last
 * commit wins per cell; results are independent copies whose column kinds are those the data was
 * put with. Data parsers are registered by name in a {@link
 * org.transferqueue.storage.simple.DataParserRegistry}. Units run embedded; a network server for
 * them belongs to the transport layer.
 */
package org.transferqueue.storage.simple;
