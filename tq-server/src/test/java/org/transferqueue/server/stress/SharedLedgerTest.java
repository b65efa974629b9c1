package org.transferqueue.server.stress;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Each shared row is matched to exactly one write, at the index its put returned. */
class SharedLedgerTest {

  @Test
  void shouldAcceptEachWrittenRowOnceAtItsIndex() {
    SharedLedger ledger = new SharedLedger();
    ledger.announce(5, 100, 2);
    ledger.placed(5, 100, List.of(40L, 41L));

    assertThat(ledger.claim(5, 100, 40)).isEqualTo(SharedLedger.Claim.OK);
    assertThat(ledger.claim(5, 100, 40)).isEqualTo(SharedLedger.Claim.NOT_PENDING);
    assertThat(ledger.claim(5, 101, 7)).isEqualTo(SharedLedger.Claim.WRONG_INDEX);
    assertThat(ledger.claim(6, 100, 40)).isEqualTo(SharedLedger.Claim.NOT_PENDING);
    assertThat(ledger.unread()).isZero();
  }

  @Test
  void shouldAcceptARowReadBeforeItsPutReturnedAndNotPlaceItAfterwards() {
    SharedLedger ledger = new SharedLedger();
    ledger.announce(1, 0, 1);

    assertThat(ledger.claim(1, 0, 3)).isEqualTo(SharedLedger.Claim.OK);
    ledger.placed(1, 0, List.of(3L));
    assertThat(ledger.unread()).isZero();
  }

  @Test
  void shouldNeitherCountNorBlameRowsOfAFailedPut() {
    SharedLedger ledger = new SharedLedger();
    ledger.announce(2, 10, 2);
    ledger.failed(2, 10, 2);

    assertThat(ledger.unread()).isZero();
    assertThat(ledger.claim(2, 10, 1)).isEqualTo(SharedLedger.Claim.UNCERTAIN);
    assertThat(ledger.claim(2, 10, 1)).isEqualTo(SharedLedger.Claim.NOT_PENDING);
  }

  @Test
  void shouldListUnreadRows() {
    SharedLedger ledger = new SharedLedger();
    ledger.announce(3, 7, 1);

    assertThat(ledger.unread()).isEqualTo(1);
    assertThat(ledger.sampleUnread(5)).containsExactly("client 3 sequence 7");
  }

  @Test
  void shouldCountARowReadBackByIndexAsStrandedOnceAndOnlyAtItsIndex() {
    SharedLedger ledger = new SharedLedger();
    ledger.announce(4, 20, 2);
    ledger.placed(4, 20, List.of(8L, 9L));
    ledger.mayHaveConsumed(4);

    assertThat(ledger.pendingByIndex()).containsEntry(8L, SharedLedger.rowId(4, 20));
    assertThat(ledger.stranded(4, 20, 9)).as("at another index").isFalse();
    assertThat(ledger.stranded(4, 20, 8)).isTrue();
    assertThat(ledger.stranded(4, 20, 8)).as("twice").isFalse();
    assertThat(ledger.strandedRows()).isEqualTo(1);
    assertThat(ledger.strandedAllowance()).isEqualTo(4);
    assertThat(ledger.unread()).isEqualTo(1);
    assertThat(ledger.claim(4, 20, 8)).isEqualTo(SharedLedger.Claim.NOT_PENDING);
  }

  @Test
  void shouldTakeARowIdApartIntoWriterAndSequence() {
    long id = SharedLedger.rowId(8191, (1L << 40) - 1);

    assertThat(SharedLedger.writer(id)).isEqualTo(8191);
    assertThat(SharedLedger.sequence(id)).isEqualTo((1L << 40) - 1);
  }

  @Test
  void shouldLeaveRowsWhosePutHasNotReturnedOutOfTheIndexMap() {
    SharedLedger ledger = new SharedLedger();
    ledger.announce(1, 0, 1);

    assertThat(ledger.pendingByIndex()).isEmpty();
  }
}
