package org.transferqueue.cli;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * The demo's data: every value is a pure function of (step, sample id, position), so each stage can
 * check every value it reads against what the producer must have written.
 *
 * <pre>
 *   sample_id      int64   [B]            the sample's number within its step
 *   prompt_ids     int64   [B, P]         prompt(step, id, j)
 *   response_ids   int64   jagged [L(id)] response(step, id, j), L(id) in 1..seqLen
 *   messages       object  String         "step s, sample id: ..."
 *   rm_score       float32 jagged [L(id)] reward stage:    response * 0.5
 *   ref_log_prob   float32 jagged [L(id)] reference stage: -(response mod 100) / 100
 * </pre>
 */
final class DemoData {
  private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
  private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;

  private final int step;
  private final int promptLength;
  private final int seqLen;

  DemoData(int step, int promptLength, int seqLen) {
    this.step = step;
    this.promptLength = promptLength;
    this.seqLen = seqLen;
  }

  long prompt(long id, long j) {
    return (id * 1_000_003L + j * 7919L + step * 104_729L) % 50_000L;
  }

  long response(long id, long j) {
    return (id * 31L + j * 17L + step * 13L) % 50_000L;
  }

  int responseLength(long id) {
    return (int) (1 + (id * 37L + step * 11L) % seqLen);
  }

  String message(long id) {
    return "step " + step + ", sample " + id + ": explain the proof in " + (id % 7 + 1) + " steps";
  }

  static float reward(long response) {
    return response * 0.5f;
  }

  static float refLogProb(long response) {
    return -(response % 100) / 100f;
  }

  /** The rollout's output for samples {@code firstId .. firstId + rows - 1}; the caller owns it. */
  Batch rollout(BufferAllocator allocator, long firstId, int rows) {
    Tensor ids = Tensor.allocate(allocator, DType.INT64, rows);
    Tensor prompts = Tensor.allocate(allocator, DType.INT64, rows, promptLength);
    List<long[]> shapes = new ArrayList<>(rows);
    long total = 0;
    for (int r = 0; r < rows; r++) {
      int length = responseLength(firstId + r);
      shapes.add(new long[] {length});
      total += length;
    }
    Tensor responses = Tensor.allocate(allocator, DType.INT64, total);
    List<String> messages = new ArrayList<>(rows);
    MemorySegment idSeg = ids.segment();
    MemorySegment promptSeg = prompts.segment();
    MemorySegment responseSeg = responses.segment();
    long offset = 0;
    for (int r = 0; r < rows; r++) {
      long id = firstId + r;
      idSeg.setAtIndex(I64, r, id);
      for (int j = 0; j < promptLength; j++) {
        promptSeg.setAtIndex(I64, (long) r * promptLength + j, prompt(id, j));
      }
      int length = responseLength(id);
      for (int j = 0; j < length; j++) {
        responseSeg.setAtIndex(I64, offset++, response(id, j));
      }
      messages.add(message(id));
    }
    return Batch.builder()
        .rowCount(rows)
        .add("sample_id", new DenseColumn(ids))
        .add("prompt_ids", new DenseColumn(prompts))
        .add("response_ids", JaggedColumn.fromValues(responses, shapes))
        .add("messages", new ObjectColumn(messages))
        .build();
  }

  /** A float32 jagged column shaped like {@code responses}, each value {@code f(response)}. */
  static Column derive(
      BufferAllocator allocator,
      JaggedColumn responses,
      java.util.function.LongUnaryOperator id,
      boolean reward) {
    Tensor source = responses.values();
    Tensor values = Tensor.allocate(allocator, DType.FLOAT32, source.numel());
    MemorySegment in = source.segment();
    MemorySegment out = values.segment();
    for (long i = 0; i < source.numel(); i++) {
      long response = in.getAtIndex(I64, i);
      out.setAtIndex(F32, i, reward ? reward(response) : refLogProb(response));
    }
    return JaggedColumn.fromValues(values, responses.rowShapes());
  }

  /** Checks the inputs every stage reads; returns a description of the first mismatch or null. */
  String verifyResponses(Batch batch) {
    long[] ids = sampleIds(batch);
    JaggedColumn responses = (JaggedColumn) batch.column("response_ids");
    for (int r = 0; r < ids.length; r++) {
      Tensor row = responses.row(r);
      if (row.numel() != responseLength(ids[r])) {
        return "sample "
            + ids[r]
            + ": response length "
            + row.numel()
            + " != "
            + responseLength(ids[r]);
      }
      MemorySegment seg = row.segment();
      for (int j = 0; j < row.numel(); j++) {
        if (seg.getAtIndex(I64, j) != response(ids[r], j)) {
          return "sample " + ids[r] + ": response_ids[" + j + "] differs";
        }
      }
    }
    return null;
  }

  /** Checks everything the trainer reads; returns a description of the first mismatch or null. */
  String verifyAll(Batch batch) {
    String mismatch = verifyResponses(batch);
    if (mismatch != null) {
      return mismatch;
    }
    long[] ids = sampleIds(batch);
    Tensor prompts = ((DenseColumn) batch.column("prompt_ids")).tensor();
    JaggedColumn responses = (JaggedColumn) batch.column("response_ids");
    JaggedColumn scores = (JaggedColumn) batch.column("rm_score");
    JaggedColumn refs = (JaggedColumn) batch.column("ref_log_prob");
    List<Object> messages = ((ObjectColumn) batch.column("messages")).values();
    MemorySegment promptSeg = prompts.segment();
    for (int r = 0; r < ids.length; r++) {
      long id = ids[r];
      for (int j = 0; j < promptLength; j++) {
        if (promptSeg.getAtIndex(I64, (long) r * promptLength + j) != prompt(id, j)) {
          return "sample " + id + ": prompt_ids[" + j + "] differs";
        }
      }
      if (!message(id).equals(messages.get(r))) {
        return "sample " + id + ": messages differ";
      }
      MemorySegment response = responses.row(r).segment();
      MemorySegment score = scores.row(r).segment();
      MemorySegment ref = refs.row(r).segment();
      int length = responseLength(id);
      if (scores.row(r).numel() != length || refs.row(r).numel() != length) {
        return "sample " + id + ": rm_score or ref_log_prob has the wrong length";
      }
      for (int j = 0; j < length; j++) {
        long value = response.getAtIndex(I64, j);
        if (Float.compare(score.getAtIndex(F32, j), reward(value)) != 0) {
          return "sample " + id + ": rm_score[" + j + "] differs";
        }
        if (Float.compare(ref.getAtIndex(F32, j), refLogProb(value)) != 0) {
          return "sample " + id + ": ref_log_prob[" + j + "] differs";
        }
      }
    }
    return null;
  }

  static long[] sampleIds(Batch batch) {
    Tensor ids = ((DenseColumn) batch.column("sample_id")).tensor();
    long[] out = new long[batch.rowCount()];
    for (int r = 0; r < out.length; r++) {
      out[r] = ids.segment().getAtIndex(I64, r);
    }
    return out;
  }

  /** Bytes of all tensor values of a batch (object values count by their UTF-8 length). */
  static long bytes(Batch batch) {
    long total = 0;
    for (Column column : batch.columns().values()) {
      switch (column) {
        case DenseColumn dense -> total += dense.tensor().nbytes();
        case JaggedColumn jagged -> total += jagged.values().nbytes();
        case ObjectColumn objects -> {
          for (Object value : objects.values()) {
            total += String.valueOf(value).length();
          }
        }
      }
    }
    return total;
  }
}
