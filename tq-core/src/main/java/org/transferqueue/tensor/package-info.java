/**
 * The value model: {@link org.transferqueue.tensor.DType}, off-heap {@link
 * org.transferqueue.tensor.Tensor}s, the column kinds ({@link
 * org.transferqueue.tensor.DenseColumn}, {@link org.transferqueue.tensor.JaggedColumn}, {@link
 * org.transferqueue.tensor.ObjectColumn}), {@link org.transferqueue.tensor.Batch}, exact 16-bit
 * float conversions ({@link org.transferqueue.tensor.Float16}) and the tensor utilities used to
 * prepare zero-copy transfers ({@link org.transferqueue.tensor.TensorUtils}).
 *
 * <p>Depends only on {@code org.transferqueue.memory}: every tensor byte is off-heap memory from a
 * {@link org.transferqueue.memory.BufferAllocator}, or memory the caller wraps.
 */
package org.transferqueue.tensor;
