/**
 * Starting a job of one rank per process: {@link dev.commplan.runtime.launch.LaunchEnvironment} reads
 * torchrun's, Slurm's or Open MPI's variables, {@link Rendezvous} is a small authenticated TCP rendezvous
 * (Java networking, length-capped frames, deadlines, HMAC-SHA256), and {@link
 * dev.commplan.runtime.nccl.NcclBackend#processCommunicator NcclBackend.processCommunicator} builds the
 * NCCL communicator from them.
 */
package dev.commplan.runtime.bootstrap;
