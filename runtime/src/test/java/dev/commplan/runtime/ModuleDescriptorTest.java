package dev.commplan.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The runtime as a module (tests run on the class path, so this checks the descriptor itself): what it
 * exports and what it keeps to itself, and that its backends are found through {@code provides} when it
 * is loaded as a module, from a module layer made of the build's own output.
 */
class ModuleDescriptorTest {
  @Test
  void exportsTheLayersAndTheBackendsEntryPointsButNotTheirInternals() throws URISyntaxException {
    ModuleDescriptor d = ModuleFinder.of(location(Backend.class)).find("dev.commplan.runtime").orElseThrow().descriptor();
    assertEquals("dev.commplan.runtime", d.name());
    Set<String> exported = d.exports().stream().map(ModuleDescriptor.Exports::source).collect(Collectors.toCollection(TreeSet::new));
    assertEquals(new TreeSet<>(List.of("dev.commplan.runtime", "dev.commplan.runtime.launch", "dev.commplan.runtime.plan",
        "dev.commplan.runtime.spi", "dev.commplan.runtime.bootstrap", "dev.commplan.runtime.local",
        "dev.commplan.runtime.nccl", "dev.commplan.runtime.mpi")), exported);
    for (String internal : List.of("dev.commplan.runtime.guard", "dev.commplan.runtime.rules",
        "dev.commplan.runtime.agreement", "dev.commplan.runtime.nccl.binding", "dev.commplan.runtime.nccl.binding.raw",
        "dev.commplan.runtime.nccl.calls", "dev.commplan.runtime.nccl.graphs", "dev.commplan.runtime.nccl.memory",
        "dev.commplan.runtime.nccl.rank", "dev.commplan.runtime.nccl.sharing", "dev.commplan.runtime.nccl.streams",
        "dev.commplan.runtime.mpi.internal")) {
      assertTrue(d.packages().contains(internal) && !exported.contains(internal), internal);
    }
    assertEquals(Set.of("dev.commplan.runtime.Backend"), d.uses());
    assertEquals(3, d.provides().iterator().next().providers().size());
  }

  @Test
  void asAModuleItFindsItsBackendsThroughProvides() throws Exception {
    ModuleFinder finder = ModuleFinder.of(location(Backend.class), location(Collective.class), location(ReduceOp.class));
    Configuration config = ModuleLayer.boot().configuration()
        .resolveAndBind(finder, ModuleFinder.of(), Set.of("dev.commplan.runtime"));
    ModuleLayer layer = ModuleLayer.boot().defineModulesWithOneLoader(config, ClassLoader.getPlatformClassLoader());
    Class<?> backends = layer.findLoader("dev.commplan.runtime").loadClass("dev.commplan.runtime.Backends");
    assertEquals(layer.findModule("dev.commplan.runtime").orElseThrow(), backends.getModule());
    assertEquals(List.of("local", "mpi", "nccl"), backends.getMethod("names").invoke(null));
  }

  private static Path location(Class<?> c) throws URISyntaxException {
    return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
  }
}
