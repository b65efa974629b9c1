package org.transferqueue.meta;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;

/**
 * The schema of one field across the samples of a batch: element type, per-sample shape, and kind
 * (regular tensor, nested/ragged tensor, non-tensor objects, or an insert placeholder).
 *
 * <p>A shape is the shape of <em>one</em> sample, without the batch dimension; the empty list is a
 * scalar. Kinds and the components they carry:
 *
 * <pre>
 *  kind          dtype     shape       nested  nonTensor  perSampleShapes
 *  regular       non-null  non-null    false   false      null
 *  nested        non-null  null        true    false      one entry per sample (entries may be null)
 *  non-tensor    null      null        false   true       null
 *  placeholder   null      null        false   false      null
 * </pre>
 *
 * <p>A nested entry's shape is always null: readers use {@link #perSampleShapes()}. Inside a {@link
 * BatchMeta} the per-sample list is positional (the i-th entry is the i-th sample's shape); an
 * entry is null where the controller has no recorded shape for that sample. Immutable and
 * thread-safe; the lists are defensive copies.
 *
 * @param dtype the element type, or null for non-tensor and placeholder fields
 * @param shape the uniform per-sample shape of a regular tensor field, otherwise null
 * @param nested whether the field is ragged (per-sample shapes differ)
 * @param nonTensor whether the field holds non-tensor objects
 * @param perSampleShapes one shape per sample for a nested field, otherwise null
 */
public record FieldSchema(
    DType dtype,
    List<Long> shape,
    boolean nested,
    boolean nonTensor,
    List<List<Long>> perSampleShapes) {

  /**
   * Validates the combination of components and copies the shapes.
   *
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when the components contradict the table
   *     in the class comment, or a dimension is negative
   */
  public FieldSchema {
    if (nonTensor && (nested || dtype != null || shape != null || perSampleShapes != null)) {
      throw invalid("a non-tensor field has no dtype, shape, nesting or per-sample shapes", dtype);
    }
    if (nested) {
      if (dtype == null) {
        throw invalid("a nested field needs a dtype", null);
      }
      if (perSampleShapes == null) {
        throw invalid("a nested field needs per-sample shapes", dtype);
      }
      shape = null;
    } else if (perSampleShapes != null) {
      throw invalid("only a nested field carries per-sample shapes", dtype);
    } else if (dtype != null && shape == null) {
      throw invalid("a regular tensor field needs a shape", dtype);
    } else if (dtype == null && shape != null) {
      throw invalid("a field with a shape needs a dtype", null);
    }
    shape = shape == null ? null : copyShape(shape);
    perSampleShapes = perSampleShapes == null ? null : copyShapes(perSampleShapes);
  }

  /**
   * A regular tensor field: every sample has the same shape.
   *
   * @param dtype the element type
   * @param shape the per-sample shape; empty for scalars
   * @return the schema
   */
  public static FieldSchema regular(DType dtype, List<Long> shape) {
    return new FieldSchema(dtype, shape, false, false, null);
  }

  /**
   * A regular tensor field with the per-sample shape given as dimensions.
   *
   * @param dtype the element type
   * @param dims the per-sample dimensions; none for scalars
   * @return the schema
   */
  public static FieldSchema regular(DType dtype, long... dims) {
    return regular(dtype, shapeOf(dims));
  }

  /**
   * A nested (ragged) tensor field.
   *
   * @param dtype the element type
   * @param perSampleShapes one shape per sample, in batch order; entries may be null when unknown
   * @return the schema
   */
  public static FieldSchema nestedOf(DType dtype, List<List<Long>> perSampleShapes) {
    return new FieldSchema(dtype, null, true, false, perSampleShapes);
  }

  /**
   * A field of non-tensor objects (strings, numbers, lists, maps).
   *
   * @return the schema
   */
  public static FieldSchema nonTensorField() {
    return new FieldSchema(null, null, false, true, null);
  }

  /**
   * A placeholder for a field whose data does not exist yet (insert mode).
   *
   * @return the schema
   */
  public static FieldSchema placeholder() {
    return new FieldSchema(null, null, false, false, null);
  }

  /**
   * The schema of one column of data.
   *
   * <p>A dense column is a regular field whose shape is the tensor's shape without the batch
   * dimension (a 1-D tensor therefore has scalar rows, shape {@code []}); a jagged column is a
   * nested field listing every row's shape; an object column is a non-tensor field. The column's
   * memory is only inspected, never copied or retained.
   *
   * @param column the column
   * @return its schema
   */
  public static FieldSchema of(Column column) {
    return switch (column) {
      case DenseColumn dense -> regular(dense.dtype(), shapeOf(dense.rowShape()));
      case JaggedColumn jagged -> {
        List<List<Long>> shapes = new ArrayList<>(jagged.rowCount());
        for (long[] shape : jagged.rowShapes()) {
          shapes.add(shapeOf(shape));
        }
        yield nestedOf(jagged.dtype(), shapes);
      }
      case ObjectColumn objects -> nonTensorField();
    };
  }

  /**
   * The schema of every field of a batch of data, in the batch's field order.
   *
   * @param batch the data; only inspected
   * @return the schema by field name; empty for a batch without rows
   */
  public static Map<String, FieldSchema> extract(Batch batch) {
    if (batch.rowCount() == 0) {
      return Map.of();
    }
    LinkedHashMap<String, FieldSchema> schema = new LinkedHashMap<>();
    batch.columns().forEach((name, column) -> schema.put(name, of(column)));
    return Collections.unmodifiableMap(schema);
  }

  /**
   * An immutable shape from dimensions.
   *
   * @param dims the dimensions; none for a scalar
   * @return the shape as an unmodifiable list
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a negative dimension
   */
  public static List<Long> shapeOf(long... dims) {
    Long[] boxed = new Long[dims.length];
    for (int i = 0; i < dims.length; i++) {
      boxed[i] = dims[i];
    }
    return copyShape(List.of(boxed));
  }

  /**
   * Whether this is a regular tensor field (uniform shape).
   *
   * @return true when the field has a dtype and is neither nested nor non-tensor
   */
  public boolean isRegular() {
    return dtype != null && !nested;
  }

  /**
   * Whether this entry is an insert placeholder (no dtype, no shape, not non-tensor).
   *
   * @return true for a placeholder
   */
  public boolean isPlaceholder() {
    return dtype == null && !nonTensor;
  }

  /**
   * The shape of one sample.
   *
   * @param position the sample's position in the batch the schema belongs to
   * @return the per-sample entry for a nested field (null when unknown), otherwise {@link #shape()}
   */
  public List<Long> shapeAt(int position) {
    return perSampleShapes != null ? perSampleShapes.get(position) : shape;
  }

  /**
   * This schema with the per-sample shapes replaced, for a batch of another size or order.
   *
   * @param shapes the new per-sample shapes (nested fields only; ignored otherwise)
   * @return the schema for the new rows
   */
  FieldSchema withPerSampleShapes(List<List<Long>> shapes) {
    return perSampleShapes == null ? this : new FieldSchema(dtype, null, true, false, shapes);
  }

  private static List<Long> copyShape(List<Long> shape) {
    for (Long d : shape) {
      if (d == null || d < 0) {
        throw new TqException(ErrorCode.INVALID_ARGUMENT, "invalid shape " + shape);
      }
    }
    return List.copyOf(shape);
  }

  private static List<List<Long>> copyShapes(List<List<Long>> shapes) {
    ArrayList<List<Long>> copy = new ArrayList<>(shapes.size());
    for (List<Long> s : shapes) {
      copy.add(s == null ? null : copyShape(s));
    }
    return Collections.unmodifiableList(copy);
  }

  private static TqException invalid(String what, DType dtype) {
    return new TqException(
        ErrorCode.INVALID_ARGUMENT, "invalid field schema: " + what + " (dtype=" + dtype + ")");
  }
}
