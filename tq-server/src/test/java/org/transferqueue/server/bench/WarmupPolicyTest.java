package org.transferqueue.server.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

class WarmupPolicyTest {

  /**
   * An iteration whose processes used {@code cpu} CPU seconds, {@code compiler} of them compiling.
   */
  private static IterationResult iteration(double compiler, double cpu) {
    return new IterationResult(1, 1, 1, 1, 1, 1, 1, 0.5, 0.5, cpu, compiler);
  }

  private static List<IterationResult> repeat(int n, double compiler, double cpu) {
    List<IterationResult> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(iteration(compiler, cpu));
    }
    return out;
  }

  @Test
  void shouldRunExactlyTheGivenNumberWhenFixed() {
    WarmupPolicy policy = WarmupPolicy.parse("2");
    assertThat(policy.adaptive()).isFalse();
    assertThat(policy.done(List.of(), 0)).isFalse();
    assertThat(policy.done(repeat(1, 0, 1), 1e6)).isFalse();
    assertThat(policy.done(repeat(2, 1, 1), 0)).isTrue();
    assertThat(WarmupPolicy.parse("0").done(List.of(), 0)).isTrue();
    assertThat(policy.describe()).isEqualTo("2 warm-up");
  }

  @Test
  void shouldStopWhenCompilationSettledOverTheWindowWhenAuto() {
    WarmupPolicy auto = WarmupPolicy.parse(" AUTO ");
    assertThat(auto).isEqualTo(WarmupPolicy.AUTO);
    assertThat(auto.adaptive()).isTrue();
    // Fewer iterations than the window never count as settled.
    assertThat(auto.done(repeat(3, 0, 1), 1)).isFalse();
    assertThat(auto.done(repeat(9, 0, 1), 1)).isFalse();
    assertThat(auto.done(repeat(10, 0, 1), 1)).isTrue();
    // Over the last 10: 5% of their CPU stops, more goes on; older iterations do not count.
    List<IterationResult> ran = repeat(20, 0.9, 1);
    ran.addAll(repeat(9, 0.0, 1));
    ran.add(iteration(0.5, 1));
    assertThat(auto.done(ran, 5)).isTrue();
    ran.set(ran.size() - 1, iteration(0.51, 1));
    assertThat(auto.done(ran, 5)).isFalse();
    // The time limit or the iteration limit end it whatever the compilers do.
    assertThat(auto.done(ran, 60)).isTrue();
    assertThat(auto.done(repeat(1000, 0.9, 1), 1)).isTrue();
    assertThat(auto.done(repeat(2, 0.9, 1), 60)).isFalse();
    // A platform that does not show the compiler threads runs the minimum.
    assertThat(auto.done(repeat(10, Double.NaN, 1), 1)).isTrue();
    assertThat(auto.describe())
        .isEqualTo(
            "3-1000 warm-up (until compilation <= 5% of the CPU of the last 10, at most 60 s)");
  }

  @Test
  void shouldRejectWhatIsNeitherAutoNorACount() {
    assertThatThrownBy(() -> WarmupPolicy.parse("soon"))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("warmup='soon'");
    assertThatThrownBy(() -> WarmupPolicy.parse("-1")).hasMessageContaining("warmup=-1");
    assertThatThrownBy(() -> new WarmupPolicy(4, 3, 60, 10, 0.05))
        .hasMessageContaining("min=4, maxIterations=3");
    assertThatThrownBy(() -> new WarmupPolicy(1, 3, 60, 10, 1.5)).hasMessageContaining("1.5");
    assertThatThrownBy(() -> new WarmupPolicy(1, 3, 0, 10, 0.05))
        .hasMessageContaining("maxSeconds=0.0");
  }
}
