package dev.commplan.runtime.nccl.rank;

import dev.commplan.runtime.nccl.binding.CheckedNccl;

/**
 * Where one rank of an NCCL communicator sits, as NCCL reports it for an initialized {@code ncclComm_t}: its
 * number in the group, the group's size and the CUDA device it runs on.
 *
 * @param rank its number in its group ({@code ncclCommUserRank})
 * @param size the number of ranks of its group ({@code ncclCommCount})
 * @param device its CUDA device ({@code ncclCommCuDevice})
 */
public record Seat(int rank, int size, int device) {
  /**
   * {@return where the rank of {@code comm} sits}
   *
   * @param comm an initialized {@code ncclComm_t}
   */
  public static Seat of(long comm) {
    return new Seat(CheckedNccl.ncclCommUserRank(comm), CheckedNccl.ncclCommCount(comm),
        CheckedNccl.ncclCommCuDevice(comm));
  }
}
