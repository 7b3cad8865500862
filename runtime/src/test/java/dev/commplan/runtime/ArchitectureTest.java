package dev.commplan.runtime;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static com.tngtech.archunit.base.DescribedPredicate.describe;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.library.Architectures;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.commplan.model.Collective;
import dev.commplan.runtime.agreement.Agreement;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The runtime's architecture (docs/architecture.md), written down so that it cannot drift: the layers
 * and what each may use, no cycles between packages, backends that do not know each other, and the NCCL
 * backend's own layers.
 */
class ArchitectureTest {
  private static JavaClasses runtime;

  /**
   * The NCCL backend's exported package holds its entry points (on top of the backend) and the values every
   * layer of the backend throws or compares (its exceptions, result codes and version; users catch and
   * import them by that package's name). The values import nothing of the backend
   * ({@link #ncclValuesImportNothingOfTheBackend}), so the cycle check counts them as a package of their own.
   */
  private static final Set<String> NCCL_VALUES = Set.of("NcclException", "CudaException", "NcclResult", "CudaError",
      "NcclVersion").stream().map(n -> "dev.commplan.runtime.nccl." + n).collect(Collectors.toSet());

  private static boolean isNcclValue(JavaClass c) {
    return NCCL_VALUES.contains(c.getBaseComponentType().getName().split("\\$")[0]); // arrays and nested types too
  }

  @BeforeAll
  static void importMainClasses() {
    runtime = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.commplan.runtime");
  }

  /** Each layer depends only on those below it (bottom first: guard and launch, API, agreement, rules, plan, SPI and bootstrap, backends). */
  @Test
  void layersDependOnlyOnTheLayersBelow() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("guard").definedBy("dev.commplan.runtime.guard")
        .layer("launch").definedBy("dev.commplan.runtime.launch")
        .layer("api").definedBy("dev.commplan.runtime")
        .layer("agreement").definedBy("dev.commplan.runtime.agreement")
        .layer("rules").definedBy("dev.commplan.runtime.rules")
        .layer("plan").definedBy("dev.commplan.runtime.plan")
        .layer("spi").definedBy("dev.commplan.runtime.spi")
        .layer("bootstrap").definedBy("dev.commplan.runtime.bootstrap")
        .layer("backends").definedBy("dev.commplan.runtime.local..", "dev.commplan.runtime.nccl..",
            "dev.commplan.runtime.mpi..")
        .whereLayer("backends").mayNotBeAccessedByAnyLayer()
        .whereLayer("spi").mayOnlyBeAccessedByLayers("backends")
        .whereLayer("bootstrap").mayOnlyBeAccessedByLayers("backends")
        .whereLayer("plan").mayOnlyBeAccessedByLayers("spi", "backends")
        .whereLayer("rules").mayOnlyBeAccessedByLayers("plan", "spi")
        .whereLayer("agreement").mayOnlyBeAccessedByLayers("plan", "spi", "bootstrap")
        .whereLayer("api").mayOnlyBeAccessedByLayers("agreement", "rules", "plan", "spi", "bootstrap", "backends")
        .whereLayer("launch").mayOnlyBeAccessedByLayers("api", "bootstrap", "backends")
        .whereLayer("guard").mayOnlyBeAccessedByLayers("api", "agreement", "rules", "plan", "spi", "backends")
        .check(runtime);
  }

  @Test
  void noPackageCycles() {
    slices().assignedFrom(new SliceAssignment() {
      @Override
      public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
        if (isNcclValue(javaClass)) {
          return SliceIdentifier.of("dev.commplan.runtime.nccl (its exceptions, result codes and version)");
        }
        return SliceIdentifier.of(javaClass.getPackageName()); // each package a slice of its own
      }

      @Override
      public String getDescription() {
        return "the runtime's packages";
      }
    }).should().beFreeOfCycles().check(runtime);
  }

  @Test
  void backendsDoNotKnowEachOther() {
    noClasses().that().resideInAPackage("dev.commplan.runtime.local..")
        .should().dependOnClassesThat().resideInAnyPackage("dev.commplan.runtime.nccl..", "dev.commplan.runtime.mpi..")
        .check(runtime);
    noClasses().that().resideInAPackage("dev.commplan.runtime.nccl..")
        .should().dependOnClassesThat().resideInAnyPackage("dev.commplan.runtime.local..", "dev.commplan.runtime.mpi..")
        .check(runtime);
    noClasses().that().resideInAPackage("dev.commplan.runtime.mpi..")
        .should().dependOnClassesThat().resideInAnyPackage("dev.commplan.runtime.local..", "dev.commplan.runtime.nccl..")
        .check(runtime);
  }

  /**
   * Ranks' data is compared in one package, {@code agreement} (docs/architecture.md, "The agreement check"):
   * no other layer above the backends exchanges data between the ranks itself (a communicator's collective
   * called from the API, a plan, the SPI or the rendezvous: what the mesh and fingerprint checks once did),
   * and only the agreement package and the SPI class that serves it touch its exchange.
   */
  @Test
  void onlyTheAgreementPackageComparesRanks() {
    Set<String> collectives = Arrays.stream(Collective.values()).map(Collective::methodName).collect(Collectors.toSet());
    DescribedPredicate<JavaMethodCall> exchangeOfRanksData = DescribedPredicate.describe(
        "a communicator's collective (an exchange of the ranks' data)",
        call -> call.getTargetOwner().isAssignableTo(Communicator.class) && collectives.contains(call.getName()));
    noClasses().that().resideInAnyPackage("dev.commplan.runtime", "dev.commplan.runtime.plan",
            "dev.commplan.runtime.spi", "dev.commplan.runtime.guard", "dev.commplan.runtime.launch",
            "dev.commplan.runtime.bootstrap")
        .should().callMethodWhere(exchangeOfRanksData)
        .check(runtime);
    noClasses().that().resideOutsideOfPackages("dev.commplan.runtime.agreement", "dev.commplan.runtime.spi")
        .should().dependOnClassesThat().belongToAnyOf(Agreement.Exchange.class)
        .check(runtime);
  }

  /**
   * The NCCL backend's layers (docs/architecture.md, "Backends"), top first, each using only those below it:
   * the exported package's entry points (the communicator, its cluster, its compiled schedules, the backend),
   * captured plans' graphs, the calls (how a direct call or a plan's step reaches NCCL), streams and events, a
   * rank's lifecycle and failures, memory, the sharing of one GPU by several ranks, the binding (checked CUDA
   * and NCCL functions, the collectives' dispatch), the raw downcalls; and under all of them the exported
   * package's exceptions, result codes and version.
   */
  @Test
  void ncclLayersDependOnlyOnTheLayersBelow() {
    String[][] layers = {
        {"entry points", null},
        {"graphs", "dev.commplan.runtime.nccl.graphs"},
        {"calls", "dev.commplan.runtime.nccl.calls"},
        {"streams", "dev.commplan.runtime.nccl.streams"},
        {"rank", "dev.commplan.runtime.nccl.rank"},
        {"memory", "dev.commplan.runtime.nccl.memory"},
        {"sharing", "dev.commplan.runtime.nccl.sharing"},
        {"binding", "dev.commplan.runtime.nccl.binding"},
        {"raw downcalls", "dev.commplan.runtime.nccl.binding.raw"},
        {"values", null}};
    Architectures.LayeredArchitecture nccl = layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("entry points").definedBy(describe("the exported package's entry points",
            c -> c.getPackageName().equals("dev.commplan.runtime.nccl") && !isNcclValue(c)))
        .layer("values").definedBy(describe("the exported package's exceptions, result codes and version",
            ArchitectureTest::isNcclValue));
    for (String[] layer : layers) {
      if (layer[1] != null) {
        nccl = nccl.layer(layer[0]).definedBy(layer[1]);
      }
    }
    for (int i = 0; i < layers.length; i++) {
      String[] above = Arrays.stream(layers, 0, i).map(l -> l[0]).toArray(String[]::new);
      nccl = i == 0 ? nccl.whereLayer(layers[i][0]).mayNotBeAccessedByAnyLayer()
          : nccl.whereLayer(layers[i][0]).mayOnlyBeAccessedByLayers(above);
    }
    nccl.check(runtime);
  }

  /** The NCCL backend's exceptions, result codes and version are values: they import nothing of the backend. */
  @Test
  void ncclValuesImportNothingOfTheBackend() {
    noClasses()
        .that(describe("the NCCL backend's exceptions, result codes and version", ArchitectureTest::isNcclValue))
        .should().dependOnClassesThat(describe("other classes of the NCCL backend",
            c -> c.getPackageName().startsWith("dev.commplan.runtime.nccl") && !isNcclValue(c)))
        .check(runtime);
  }

  /** The raw bindings are the bottom of their backend: they never call up into it. */
  @Test
  void rawBindingsDoNotDependOnTheirBackend() {
    noClasses().that().resideInAPackage("dev.commplan.runtime.nccl.binding.raw")
        .should().dependOnClassesThat(describe("other classes of the NCCL backend",
            c -> c.getPackageName().startsWith("dev.commplan.runtime.nccl")
                && !c.getPackageName().equals("dev.commplan.runtime.nccl.binding.raw")))
        .check(runtime);
    noClasses().that().resideInAPackage("dev.commplan.runtime.mpi.internal")
        .should().dependOnClassesThat().resideInAPackage("dev.commplan.runtime.mpi")
        .check(runtime);
  }

  /**
   * Only the binding layer ({@code nccl.binding}: the checked CUDA and NCCL functions and the collectives'
   * dispatch) calls the raw downcalls of {@code nccl.binding.raw}: every other class of the backend goes
   * through it, so that every code is checked, or handed on raw, in one place.
   */
  @Test
  void onlyTheBindingLayerCallsTheRawDowncalls() {
    noClasses()
        .that().resideOutsideOfPackages("dev.commplan.runtime.nccl.binding", "dev.commplan.runtime.nccl.binding.raw")
        .should().dependOnClassesThat().resideInAPackage("dev.commplan.runtime.nccl.binding.raw")
        .check(runtime);
  }
}
