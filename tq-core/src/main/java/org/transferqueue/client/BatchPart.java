package org.transferqueue.client;

import java.util.Objects;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;

/**
 * Rows and the metadata of exactly those rows, as the {@link StreamingLoader} hooks exchange them:
 * what a {@link StreamingLoader.FetchBatchHandler} fetched (upstream's {@code (batch, BatchMeta)})
 * and each micro-batch a {@link StreamingLoader.ProcessBatchHandler} makes.
 *
 * @param meta the samples; row {@code i} of {@code data} is sample {@code meta.globalIndex(i)}
 * @param data the rows, or null when the loader should read them itself (a fetch hook that only
 *     chose the samples); ownership passes to the loader with the part
 */
public record BatchPart(BatchMeta meta, Batch data) {
  /** Checks that the metadata is there. */
  public BatchPart {
    Objects.requireNonNull(meta, "meta");
  }

  /**
   * Samples whose rows the loader reads itself.
   *
   * @param meta the samples
   * @return the part
   */
  public static BatchPart of(BatchMeta meta) {
    return new BatchPart(meta, null);
  }

  /**
   * Nothing ready yet: the loader asks again after its poll interval.
   *
   * @return an empty part
   */
  public static BatchPart none() {
    return new BatchPart(BatchMeta.empty(), null);
  }
}
