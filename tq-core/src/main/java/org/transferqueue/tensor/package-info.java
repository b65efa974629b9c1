/**
 * The value model: {@link org.transferqueue.tensor.DType}, off-heap tensors, column kinds (dense,
 * jagged, object), {@code Batch}, and the tensor utilities used to prepare zero-copy transfers.
 */
package org.transferqueue.tensor;
