package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.commplan.runtime.mpi.internal.Mpi;
import dev.commplan.runtime.mpi.internal.MpiCollectives;
import dev.commplan.runtime.spi.FlightJob;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The flight records' job of one MPI world ({@link FlightJob}): its id, made by rank 0 when the world is made (the
 * launcher's id where there is one, {@link FlightJob#launcherId}, with the time and a random part, so that two runs
 * under one launcher's job differ) and broadcast to every rank over the world's new communicator, so that every
 * rank's file names the same job.
 */
final class MpiFlightJob {
  /** The longest job id, in bytes: the broadcast's count. */
  private static final int ID_BYTES = 128;

  private MpiFlightJob() {}

  /**
   * The job of the world whose new communicator is {@code comm} (collective: every rank calls it, right after
   * the communicator was made); holding the MPI lock.
   */
  static FlightJob share(long comm, int rank, int size, Path dir) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment id = arena.allocate(ID_BYTES);
      if (rank == 0) {
        String launcher = FlightJob.launcherId(System.getenv());
        byte[] made = FlightJob.newId(launcher != null ? launcher : "mpi").getBytes(StandardCharsets.UTF_8);
        MemorySegment.copy(MemorySegment.ofArray(made), 0, id, 0, Math.min(made.length, ID_BYTES - 1));
      }
      MemorySegment request = arena.allocate(Long.BYTES);
      MpiRuntime.check("MPI_Ibcast", MpiCollectives.MPI_Ibcast(id.address(), ID_BYTES, Mpi.Handles.UINT8, 0, comm,
          request.address()), "sharing the flight records' job id");
      MpiRuntime.check("MPI_Waitall", Mpi.MPI_Waitall(1, request.address(), Mpi.STATUSES_IGNORE),
          "sharing the flight records' job id");
      int length = 0;
      while (length < ID_BYTES && id.get(JAVA_BYTE, length) != 0) {
        length++;
      }
      String text = new String(id.asSlice(0, length).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
      return new FlightJob(text.isEmpty() ? FlightJob.newId("mpi") : text, "mpi", size, dir);
    }
  }
}
