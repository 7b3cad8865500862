package dev.commplan.runtime.agreement;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;

/**
 * An exchange for agreement checks that only record: it says every stream is being captured, so a
 * comparison that falls due is skipped (as it would be alike on every rank) and nothing is enqueued.
 * For tests of the records ({@link UncheckedTailTest}) and for timing the recording alone.
 */
public final class RecordOnly implements Agreement.Exchange {
  @Override
  public U64Buffer allocate(long longs) {
    throw new AssertionError("nothing to allocate");
  }

  @Override
  public void allGather(Buffer ownHeaders, Buffer headers, Buffer ownRecords, Buffer records, Stream s) {
    throw new AssertionError("nothing to enqueue");
  }

  @Override
  public Stream allGather(Buffer own, Buffer all) {
    throw new AssertionError("nothing to enqueue");
  }

  @Override
  public void allGather(Buffer own, Buffer all, Stream s) {
    throw new AssertionError("nothing to enqueue");
  }

  @Override
  public void send(Buffer message, int peer, Stream s) {
    throw new AssertionError("nothing to enqueue");
  }

  @Override
  public void recv(Buffer message, int peer, Stream s) {
    throw new AssertionError("nothing to enqueue");
  }

  @Override
  public boolean inGroup() {
    return false;
  }

  @Override
  public boolean isCapturing(Stream s) {
    return true;
  }
}
