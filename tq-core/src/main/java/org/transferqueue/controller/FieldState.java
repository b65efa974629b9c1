package org.transferqueue.controller;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.tensor.DType;

/**
 * The checkpointable state of one field of a partition.
 *
 * @param name the field name
 * @param produced the samples for which the field has been produced
 * @param kind {@code REGULAR}, {@code NESTED}, {@code NON_TENSOR}, or null when no sample has it
 * @param dtype the element type, or null
 * @param shape the uniform per-sample shape of a regular field, or null
 * @param perSampleShapes the shape of each sample of a nested field (empty otherwise)
 * @param jagged the produced samples whose cell was put as a row of a jagged column (they read back
 *     jagged whatever their shapes)
 */
public record FieldState(
    String name,
    IndexSet produced,
    String kind,
    DType dtype,
    List<Long> shape,
    Map<Long, List<Long>> perSampleShapes,
    IndexSet jagged) {
  /** Validates and copies the arguments. */
  public FieldState {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(produced, "produced");
    Objects.requireNonNull(jagged, "jagged");
    shape = shape == null ? null : List.copyOf(shape);
    perSampleShapes = Map.copyOf(perSampleShapes);
  }
}
