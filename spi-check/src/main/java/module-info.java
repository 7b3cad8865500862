/**
 * A backend written as a third party writes one, to prove that the runtime's SPI is enough from outside
 * its module: {@link dev.commplan.spicheck.SpiCheckBackend} ({@code "spi-check"}) is found through the
 * {@code provides} below (there is no {@code META-INF/services} file), its communicator extends {@code
 * spi.AbstractCommunicator}, its stream {@code spi.StreamBase}, and its cluster runs the ranks through
 * {@code spi.RankSupervisor}. Its ranks are threads of one JVM that run every call synchronously, on the
 * rank's own thread: every collective, sends and receives, and splits (so meshes); every data type. It passes
 * the conformance kit (its tests: {@code SpiCheckConformanceTest}). Not published.
 */
module dev.commplan.spicheck {
  // transitive: SpiCheckCommunicator, exported, is a runtime type (a Communicator); -Xlint:exports checks it
  requires transitive dev.commplan.runtime;
  // the generated plans in the tests carry @javax.annotation.processing.Generated (docs/setup.md, Notes)
  requires static java.compiler;

  exports dev.commplan.spicheck;

  provides dev.commplan.runtime.Backend with dev.commplan.spicheck.SpiCheckBackend;
}
