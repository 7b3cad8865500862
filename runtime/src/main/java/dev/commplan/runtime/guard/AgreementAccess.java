package dev.commplan.runtime.guard;

import java.util.Objects;

/**
 * How the API reaches the agreement check, which sits above it (the shared-secrets pattern of {@link
 * Guards}): {@code Mesh} compares the ranks' meshes through it, so that every comparison of ranks' data
 * stays in the agreement package. That package registers here when it is loaded, which the SPI's
 * communicator base class does before any communicator exists.
 */
public final class AgreementAccess {
  /** Compares a mesh across the ranks of its world. */
  @FunctionalInterface
  public interface Meshes {
    /**
     * Collective over {@code world}: throws on every rank where the ranks' meshes differ.
     *
     * @param world the mesh's world (a {@code Communicator})
     * @param description this rank's mesh: {@code [dp=2, tp=4]}
     */
    void compare(Object world, String description);
  }

  private static volatile Meshes meshes;

  private AgreementAccess() {}

  /**
   * Called once, by the agreement package's initializer.
   *
   * @param check how meshes are compared
   */
  public static void registerMeshes(Meshes check) {
    meshes = Objects.requireNonNull(check, "check");
  }

  /**
   * Compares {@code description} across {@code world}'s ranks; nothing where no agreement check was loaded
   * (a communicator not built on the SPI, which has no check to compare through).
   *
   * @param world the mesh's world
   * @param description this rank's mesh
   */
  public static void compareMeshes(Object world, String description) {
    Meshes check = meshes;
    if (check != null) {
      check.compare(world, description);
    }
  }
}
