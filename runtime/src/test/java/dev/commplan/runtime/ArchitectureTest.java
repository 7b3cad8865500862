package dev.commplan.runtime;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.domain.JavaClasses;
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
 * and what each may use, no cycles between packages, and backends that do not know each other.
 */
class ArchitectureTest {
  private static JavaClasses runtime;

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

  /** The raw bindings are the bottom of their backend: they never call up into it. */
  @Test
  void rawBindingsDoNotDependOnTheirBackend() {
    noClasses().that().resideInAPackage("dev.commplan.runtime.nccl.internal")
        .should().dependOnClassesThat().resideInAPackage("dev.commplan.runtime.nccl")
        .check(runtime);
    noClasses().that().resideInAPackage("dev.commplan.runtime.mpi.internal")
        .should().dependOnClassesThat().resideInAPackage("dev.commplan.runtime.mpi")
        .check(runtime);
  }
}
