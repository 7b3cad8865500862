package dev.commplan.runtime.mpi;

import dev.commplan.runtime.MeshSuite;
import java.util.ArrayList;
import java.util.List;

/**
 * One process of the MPI mesh run ({@link MpiMultiProcessTest}, {@code mpirun -np 8}): {@link MeshSuite} on this
 * rank for a 2×4 and a 2×2×2 mesh (every collective and point-to-point pattern over each axis, and each pair of
 * axes of the 3-D mesh, against the reference, then a plan over the mesh's axes). Prints one line per rank and
 * exits 0 when this rank had no failure, 1 otherwise.
 */
public final class MpiMeshMain {
  private MpiMeshMain() {}

  public static void main(String[] args) {
    long start = System.nanoTime();
    List<MeshSuite.Shape> shapes = List.of(new MeshSuite.Shape(List.of("dp", "tp"), new int[] {2, 4}),
        new MeshSuite.Shape(List.of("pp", "dp", "tp"), new int[] {2, 2, 2}));
    List<String> failures = new ArrayList<>();
    int rank;
    try (MpiCommunicator world = MpiBackend.world()) {
      rank = world.rank();
      if (world.size() != 8) {
        throw new IllegalStateException("run with mpirun -np 8, not " + world.size());
      }
      for (MeshSuite.Shape shape : shapes) {
        // MPI rounds 16-bit floats at every hop of its reduction, as NCCL does (docs/mpi.md, "Precision")
        failures.addAll(MeshSuite.runOnRank(world, shape, dev.commplan.runtime.CollectiveReference::typeAccumulation));
      }
    }
    // one println per line: mpirun interleaves the processes' output at each write
    System.out.println(String.format(java.util.Locale.ROOT, "mpi mesh rank %d of 8: meshes %s: %s in %.1f s", rank,
        shapes, failures.isEmpty() ? "all right" : failures.size() + " wrong", (System.nanoTime() - start) / 1e9));
    for (String failure : failures.subList(0, Math.min(20, failures.size()))) {
      System.out.println("  FAIL " + failure);
    }
    System.out.flush();
    MpiBackend.finalizeMpi();
    System.exit(failures.isEmpty() ? 0 : 1);
  }
}
