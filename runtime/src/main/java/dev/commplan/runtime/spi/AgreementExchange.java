package dev.commplan.runtime.spi;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;
import dev.commplan.runtime.agreement.Agreement;

/**
 * The agreement check's calls on one communicator ({@link Agreement.Exchange}): its memory, and its
 * all-gathers, sends and receives, each handed straight to the backend's dispatch ({@link
 * AbstractCommunicator#enqueueDirect}) without the public calls' rules, two-stream ordering or recording, since
 * they are the check's own. While one is being enqueued, {@link #issuing()} says so, and the backend labels it
 * as the check's in timeouts and flight records ({@link AbstractCommunicator#issuingAgreementCheck()}) and may
 * run it over a channel of the check's own.
 *
 * <p>The check's comparisons of windows and messages, and the finite check's exchange of findings ({@link
 * #allGather(Buffer, Buffer, Stream)}), are enqueued from inside a direct call or a plan's execute, whose thread
 * holds the communicator's gate; the comparisons made once (a plan's fingerprint, a mesh) come from a thread that
 * holds nothing, so {@link #allGather(Buffer, Buffer)} takes the gate itself.
 */
final class AgreementExchange implements Agreement.Exchange {
  private final AbstractCommunicator comm;
  /** Whether the call being enqueued now is one of the check's; touched holding the communicator's gate. */
  private boolean issuing;

  AgreementExchange(AbstractCommunicator comm) {
    this.comm = comm;
  }

  /** {@return whether the call the backend is enqueuing now is one of the agreement check's own} */
  boolean issuing() {
    return issuing;
  }

  @Override
  public U64Buffer allocate(long longs) {
    return (U64Buffer) Buffer.allocate(DataType.U64, comm, longs);
  }

  @Override
  public void allGather(Buffer ownHeaders, Buffer headers, Buffer ownRecords, Buffer records, Stream stream) {
    issuing = true;
    try {
      comm.openGroup();
      try {
        comm.enqueueDirect(Collective.ALL_GATHER, ownHeaders, headers, ownHeaders.length(), null, -1, stream);
        comm.enqueueDirect(Collective.ALL_GATHER, ownRecords, records, ownRecords.length(), null, -1, stream);
      } finally {
        comm.closeGroup();
      }
    } finally {
      issuing = false;
    }
  }

  @Override
  public Stream allGather(Buffer own, Buffer all) {
    comm.gate().enter("an agreement check's comparison (a plan's fingerprint, a mesh)");
    try {
      comm.ensureUsable();
      Stream stream = comm.stream();
      issuing = true;
      try {
        comm.enqueueDirect(Collective.ALL_GATHER, own, all, own.length(), null, -1, stream);
      } finally {
        issuing = false;
      }
      return stream;
    } finally {
      comm.gate().exit();
    }
  }

  @Override
  public void allGather(Buffer own, Buffer all, Stream stream) {
    issuing = true;
    try {
      comm.enqueueDirect(Collective.ALL_GATHER, own, all, own.length(), null, -1, stream);
    } finally {
      issuing = false;
    }
  }

  @Override
  public void send(Buffer message, int peer, Stream stream) {
    pointToPoint(Collective.SEND, message, peer, stream);
  }

  @Override
  public void recv(Buffer message, int peer, Stream stream) {
    pointToPoint(Collective.RECV, message, peer, stream);
  }

  private void pointToPoint(Collective collective, Buffer message, int peer, Stream stream) {
    issuing = true;
    try {
      comm.enqueueDirect(collective, message, message, message.length(), null, peer, stream);
    } finally {
      issuing = false;
    }
  }

  @Override
  public boolean inGroup() {
    return comm.inGroup();
  }

  @Override
  public boolean isCapturing(Stream stream) {
    return comm.isCapturing(stream);
  }

  /** {@inheritDoc} Here: what the communicator's flight recorders timed ({@link FlightGroup#addWaits}). */
  @Override
  public void addWaits(long[] countAndSum) {
    FlightGroup group = comm.flightGroup();
    if (group != null) {
      group.addWaits(countAndSum);
    }
  }
}
