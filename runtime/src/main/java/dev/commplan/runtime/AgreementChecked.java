package dev.commplan.runtime;

/**
 * For backends: a communicator with an agreement check (docs/reliability.md, "Agreement check"), as the
 * runtime's code below its SPI reaches that check. {@link Mesh} compares the ranks' meshes through it before
 * it splits anything; plans record their executes with the check and compare their fingerprints through it.
 * The SPI's {@code AbstractCommunicator} implements it for every backend built on it (as {@link
 * DeviceMemory.Allocator} serves buffers); a communicator without it is not checked. Users do not call it.
 */
public interface AgreementChecked {
  /**
   * Compares {@code description} with every rank's: collective over this communicator (every rank calls it, at
   * the same point of its calls). Compared where the communicator's check is off too.
   *
   * @param description this rank's mesh: {@code [dp=2, tp=4]}
   * @throws DisagreementException on every rank, if the ranks' meshes differ
   * @throws CommTimeoutException naming the mesh and the ranks that did not build it in time
   */
  void compareMeshes(String description);

  /**
   * {@return this communicator's agreement check, which plans record their executes with} An object of a
   * package the runtime module does not export: opaque outside it. Made where the check is off too (it then
   * records nothing but the plans built with the execute-order check).
   */
  Object agreementCheck();
}
