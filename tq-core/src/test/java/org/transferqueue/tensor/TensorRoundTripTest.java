package org.transferqueue.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.testing.Seeds;

/** Seeded random round trips of every dtype through the typed accessors and factories. */
@ExtendWith(LeakCheckExtension.class)
class TensorRoundTripTest {

  private static byte[] randomElements(Random random, DType dtype, int numel) {
    byte[] bytes = new byte[numel * dtype.byteSize()];
    random.nextBytes(bytes);
    if (dtype == DType.BOOL) {
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] &= 1;
      }
    }
    return bytes;
  }

  private static long[] randomShape(Random random) {
    long[] shape = new long[random.nextInt(4)];
    for (int i = 0; i < shape.length; i++) {
      shape[i] = random.nextInt(6);
    }
    return shape;
  }

  private static boolean isNaN(Tensor t, long i) {
    return t.dtype().isFloatingPoint() && Double.isNaN(t.getDouble(i));
  }

  @ParameterizedTest
  @EnumSource(DType.class)
  void shouldRoundTripRandomElementsOfEveryDtype(DType dtype, BufferAllocator allocator) {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    String context = "dtype " + dtype + ", seed " + seed;
    for (int round = 0; round < 50; round++) {
      long[] shape = randomShape(random);
      int numel = (int) TensorUtils.numel(shape);
      try (Tensor source =
              Tensor.ofBytes(allocator, dtype, randomElements(random, dtype, numel), shape);
          Tensor viaDouble = Tensor.allocate(allocator, dtype, shape);
          Tensor viaTyped = Tensor.allocate(allocator, dtype, shape);
          Tensor copy = Tensor.copyOf(allocator, source)) {
        for (long i = 0; i < numel; i++) {
          viaDouble.setDouble(i, source.getDouble(i));
          if (dtype.isFloatingPoint() && dtype != DType.FLOAT64) {
            viaTyped.setFloat(i, source.getFloat(i));
          } else if (dtype.isFloatingPoint()) {
            viaTyped.setDouble(i, source.getDouble(i));
          } else {
            viaTyped.setLong(i, source.getLong(i));
          }
        }
        assertThat(copy).as(context).isEqualTo(source);
        assertThat(copy.hashCode()).as(context).isEqualTo(source.hashCode());
        for (long i = 0; i < numel; i++) {
          if (isNaN(source, i)) {
            assertThat(isNaN(viaDouble, i) && isNaN(viaTyped, i)).as(context).isTrue();
            viaDouble.setDouble(i, 0);
            viaTyped.setDouble(i, 0);
            source.setDouble(i, 0);
          }
        }
        if (dtype != DType.INT64) { // a double holds every other dtype's values exactly
          assertThat(viaDouble).as(context).isEqualTo(source);
        }
        assertThat(viaTyped).as(context).isEqualTo(source);
        try (Tensor rebuilt = rebuildFromArray(allocator, source)) {
          assertThat(rebuilt).as(context).isEqualTo(source);
        }
      }
    }
  }

  private static Tensor rebuildFromArray(BufferAllocator allocator, Tensor source) {
    long[] shape = source.shape();
    return switch (source.dtype()) {
      case FLOAT16, BFLOAT16, FLOAT32 ->
          Tensor.ofFloats(allocator, source.dtype(), source.toFloatArray(), shape);
      case FLOAT64 -> Tensor.ofDoubles(allocator, source.dtype(), source.toDoubleArray(), shape);
      case INT32 -> {
        long[] longs = source.toLongArray();
        int[] ints = new int[longs.length];
        for (int i = 0; i < ints.length; i++) {
          ints[i] = (int) longs[i];
        }
        yield Tensor.ofInts(allocator, source.dtype(), ints, shape);
      }
      default -> Tensor.ofLongs(allocator, source.dtype(), source.toLongArray(), shape);
    };
  }
}
