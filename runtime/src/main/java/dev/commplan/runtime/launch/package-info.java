/**
 * Where this process sits in a job of one rank per process ({@link ProcessInfo}), read from the
 * launcher's variables by {@link LaunchEnvironment}: torchrun's, Slurm's or Open MPI's. Depends on nothing
 * else of CommPlan's, so the API and every backend can use it.
 */
package dev.commplan.runtime.launch;
