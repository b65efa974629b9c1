package org.transferqueue.meta;

import java.util.List;
import java.util.Map;
import org.transferqueue.tensor.DType;

/**
 * A read-only view of one sample of a {@link BatchMeta}.
 *
 * <p>Immutable; {@link #tags()} and {@link #fields()} are unmodifiable (modification attempts throw
 * {@link UnsupportedOperationException}).
 *
 * @param globalIndex the sample's global index
 * @param partitionId the sample's partition
 * @param produced whether the sample is produced for every field of the batch
 * @param tags the sample's custom metadata
 * @param fields each field's schema as seen by this one sample, by field name in sorted order
 */
public record SampleView(
    long globalIndex,
    String partitionId,
    boolean produced,
    Map<String, Object> tags,
    Map<String, Field> fields) {

  /**
   * One field of one sample: a nested field shows this sample's own shape.
   *
   * @param dtype the element type, null for non-tensor and placeholder fields
   * @param shape this sample's shape, null for non-tensor and placeholder fields or when unknown
   * @param nested whether the field is ragged across the batch
   * @param nonTensor whether the field holds non-tensor objects
   */
  public record Field(DType dtype, List<Long> shape, boolean nested, boolean nonTensor) {}
}
