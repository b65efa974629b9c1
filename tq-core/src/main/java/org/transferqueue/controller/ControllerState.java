package org.transferqueue.controller;

import java.util.List;
import java.util.Objects;

/**
 * A complete, immutable copy of the controller's state: what a checkpoint saves and restores.
 *
 * @param controllerId the controller's id
 * @param partitions every partition in creation order
 * @param allocator the global index allocator
 * @param samplerType the class name of the sampler whose state this holds
 * @param samplerState the sampler's checkpointable state, or null if it has none
 */
public record ControllerState(
    String controllerId,
    List<PartitionState> partitions,
    AllocatorState allocator,
    String samplerType,
    Object samplerState) {
  /** Validates and copies the arguments. */
  public ControllerState {
    Objects.requireNonNull(controllerId, "controllerId");
    partitions = List.copyOf(partitions);
    Objects.requireNonNull(allocator, "allocator");
    Objects.requireNonNull(samplerType, "samplerType");
  }
}
