package dev.commplan.runtime.launch;

/** Where a {@link ProcessInfo}'s rank and size came from. */
public enum Launcher {
  /** Given explicitly by the caller ({@link LaunchEnvironment.Overrides}). */
  EXPLICIT,
  /** torchrun (or anything setting its variables): {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK}. */
  TORCHRUN,
  /** Open MPI's {@code mpirun}: {@code OMPI_COMM_WORLD_RANK}, {@code _SIZE}, {@code _LOCAL_RANK}. */
  OPEN_MPI,
  /** Slurm's {@code srun}: {@code SLURM_PROCID}, {@code SLURM_NTASKS}, {@code SLURM_LOCALID}. */
  SLURM,
  /** No launcher variables: a single process (rank 0 of 1). */
  NONE
}
