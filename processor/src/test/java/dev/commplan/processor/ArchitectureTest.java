package dev.commplan.processor;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
import javax.lang.model.element.Element;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The processor's architecture, written down so that it cannot drift: one stage per package, each using
 * only the stages before it ({@code Element} → parsed plan → validation report → plan model → JavaPoet),
 * no cycles between packages, and a generator that sees only the plan model. The cap of 500 lines per
 * main source file is the runtime's {@code ArchitectureTest}, which reads every module the library ships,
 * this one included.
 */
class ArchitectureTest {
  private static final String ROOT = "dev.commplan.processor";

  private static JavaClasses processor;

  @BeforeAll
  static void importMainClasses() {
    processor = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages(ROOT);
  }

  /**
   * Bottom first: names as javac reads them ({@code lang}), shapes and their counts ({@code shape}), the
   * messages and their printing ({@code diag}), then the pipeline: {@code parse} (Element → parsed plan),
   * {@code validation} (→ report), {@code model} (the plan model, built from a clean report by the
   * processor), {@code generator} (→ JavaPoet), and the processor itself, which runs them.
   */
  @Test
  void eachStageUsesOnlyTheStagesBeforeIt() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("lang").definedBy(ROOT + ".lang")
        .layer("shape").definedBy(ROOT + ".shape")
        .layer("diag").definedBy(ROOT + ".diag")
        .layer("parse").definedBy(ROOT + ".parse")
        .layer("validation").definedBy(ROOT + ".validation")
        .layer("model").definedBy(ROOT + ".model")
        .layer("generator").definedBy(ROOT + ".generator")
        .layer("processor").definedBy(ROOT)
        .whereLayer("processor").mayNotBeAccessedByAnyLayer()
        .whereLayer("generator").mayOnlyBeAccessedByLayers("processor")
        .whereLayer("model").mayOnlyBeAccessedByLayers("generator", "processor")
        .whereLayer("validation").mayOnlyBeAccessedByLayers("processor")
        .whereLayer("parse").mayOnlyBeAccessedByLayers("validation", "processor")
        .whereLayer("diag").mayOnlyBeAccessedByLayers("validation", "processor")
        .whereLayer("shape").mayOnlyBeAccessedByLayers("parse", "validation", "model", "generator")
        .check(processor);
  }

  /** Each package a slice (the processor's root package is no slice, but nothing may use it: above). */
  @Test
  void noPackageCycles() {
    slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(processor);
  }

  /**
   * The plan model and the generator never see an {@code Element}, an annotation mirror or value, a type
   * mirror or the processing environment: everything they need is in the model (JavaPoet's {@code
   * Modifier} is the one {@code javax.lang.model} type they use).
   */
  @Test
  void theGeneratorSeesOnlyThePlanModel() {
    noClasses().that().resideInAnyPackage(ROOT + ".model", ROOT + ".generator")
        .should().dependOnClassesThat(assignableTo(Element.class)
            .or(assignableTo(AnnotationMirror.class))
            .or(assignableTo(AnnotationValue.class))
            .or(resideInAnyPackage("javax.lang.model.type..", "javax.lang.model.util..", "javax.annotation.processing..")))
        .check(processor);
  }
}
