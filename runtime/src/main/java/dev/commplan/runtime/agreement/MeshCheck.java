package dev.commplan.runtime.agreement;

import dev.commplan.runtime.AgreementChecked;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.DisagreementException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The comparison {@code Mesh.Builder.build()} makes before it splits anything: every rank's mesh (its
 * description, {@code [dp=2, tp=4]}) through {@link TextExchange}, so that ranks that would split into
 * groups that do not match (a hang, or wrong data) fail at once, every one, naming the ranks and each mesh.
 * {@code Mesh} sits in the API, below this package, and reaches it through its world's {@link
 * AgreementChecked#compareMeshes}, which the SPI's communicator base class hands to {@link
 * Agreement#compareMeshes}.
 */
final class MeshCheck {
  private MeshCheck() {}

  /**
   * Compares {@code description} with every rank's of the world; collective over the world.
   *
   * @param world the agreement check of the mesh's world
   * @param description this rank's mesh: {@code [dp=2, tp=4]}
   * @throws DisagreementException on every rank, if the ranks' meshes differ
   * @throws CommTimeoutException naming the mesh and the ranks that did not build it in time
   */
  static void compare(Agreement world, String description) {
    List<String> meshes = TextExchange.differing(world, description, null, "mesh " + description + ": building it"
        + " timed out; every rank of the world must build the same mesh", "did not");
    if (meshes != null) {
      throw disagreement(world.rank(), meshes);
    }
  }

  /** The same message on every rank: each mesh with the ranks that built it. */
  static DisagreementException disagreement(int rank, List<String> meshes) {
    Map<String, List<Integer>> byMesh = new LinkedHashMap<>();
    for (int r = 0; r < meshes.size(); r++) {
      byMesh.computeIfAbsent(meshes.get(r), m -> new ArrayList<>()).add(r);
    }
    StringBuilder m = new StringBuilder("mesh: the ranks of the world (" + meshes.size() + " ranks) built different"
        + " meshes (axes, sizes or order), so they would split into groups that do not match (a hang or wrong data);"
        + " every rank fails here instead, before splitting:");
    for (Map.Entry<String, List<Integer>> e : byMesh.entrySet()) {
      List<Integer> ranks = e.getValue();
      m.append("\n  ").append(ranks.size() == 1 ? "rank " + ranks.getFirst() : "ranks " + ranks).append(" built ")
          .append(e.getKey());
    }
    m.append("\n  fix: build the same mesh on every rank (the same axes, sizes and order)");
    String mine = meshes.get(rank);
    List<Integer> differing = new ArrayList<>();
    for (int r = 0; r < meshes.size(); r++) {
      if (!meshes.get(r).equals(mine)) {
        differing.add(r);
      }
    }
    return new DisagreementException(m.toString(), mine, meshes.get(differing.getFirst()), differing, List.of("mesh"));
  }
}
