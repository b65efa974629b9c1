package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/** Error replies carry their message as it reads, even when it echoes a refused string. */
class ControlMessagesTest {
  /** The application metadata of an error section: what follows its empty body table. */
  private static TqException roundTrip(String message) {
    byte[] section = ControlMessages.errorSection(ErrorCode.INVALID_ARGUMENT, message);
    assertThat(section[0]).as("empty body table").isEqualTo((byte) 0x90);
    return ControlMessages.decodeError(Arrays.copyOfRange(section, 1, section.length), "peer");
  }

  @Test
  void shouldEscapeLoneSurrogatesWhenAnErrorMessageEchoesARefusedString() {
    TqException error = roundTrip("unknown partition 'p\uD800x' and \uD83D\uDE00");
    assertThat(error.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(error.getMessage())
        .contains("unknown partition 'p\\uD800x' and \uD83D\uDE00")
        .doesNotContain("?");
  }

  @Test
  void shouldNotSplitASurrogatePairWhenCuttingALongMessage() {
    String pairAtTheCut = "a".repeat(ControlMessages.MAX_ERROR_MESSAGE_CHARS - 1) + "\uD83D\uDE00";
    String message = roundTrip(pairAtTheCut + "tail").getMessage();
    assertThat(message).contains("a".repeat(ControlMessages.MAX_ERROR_MESSAGE_CHARS - 1) + "...");
    assertThat(message).doesNotContain("\\uD83D").doesNotContain("?");
  }
}
