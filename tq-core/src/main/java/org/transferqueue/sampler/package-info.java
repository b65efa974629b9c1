/**
 * The {@link org.transferqueue.sampler.Sampler} SPI, which decides for one fetch which ready
 * samples a task receives and which it consumes, and the built-in samplers: {@link
 * org.transferqueue.sampler.SequentialSampler} (the default), {@link
 * org.transferqueue.sampler.GrpoGroupNSampler} (whole prompt groups), {@link
 * org.transferqueue.sampler.RankAwareSampler} (one batch per data-parallel group, served to every
 * worker of the group) and {@link org.transferqueue.sampler.SeqlenBalancedSampler} (token-balanced
 * sharding of whole prompt groups across data-parallel ranks).
 *
 * <p>Requests and results are plain records. The controller builds each {@link
 * org.transferqueue.sampler.SamplingRequest} with its own partition id and task name; a client's
 * sampling configuration only contributes the data-parallel rank, the batch index and
 * sampler-specific options.
 */
package org.transferqueue.sampler;
