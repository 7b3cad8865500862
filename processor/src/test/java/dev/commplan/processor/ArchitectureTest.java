package dev.commplan.processor;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
import javax.lang.model.element.Element;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The processor's architecture, written down so that it cannot drift: one stage per package, each using
 * only the stages before it ({@code Element} → parsed plan → validation report → plan model → JavaPoet),
 * no cycles between packages, a generator that sees only the plan model, and no main source file over
 * 500 lines.
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

  @Test
  void noPackageCycles() {
    slices().assignedFrom(new SliceAssignment() {
      @Override
      public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
        return SliceIdentifier.of(javaClass.getPackageName()); // each package a slice of its own
      }

      @Override
      public String getDescription() {
        return "the processor's packages";
      }
    }).should().beFreeOfCycles().check(processor);
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

  /** No main source file of the processor over 500 lines: a class that grows past that is doing several things. */
  @Test
  void noMainFileOverFiveHundredLines() throws IOException {
    Path main = Path.of("src/main/java"); // tests run in the processor module's directory
    assertTrue(Files.isDirectory(main), main.toAbsolutePath() + " is not a directory");
    List<String> tooLong = new ArrayList<>();
    try (Stream<Path> files = Files.walk(main)) {
      for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
        long lines;
        try (Stream<String> l = Files.lines(f)) {
          lines = l.count();
        }
        if (lines > 500) {
          tooLong.add(main.relativize(f) + " (" + lines + " lines)");
        }
      }
    }
    assertEquals(List.of(), tooLong);
  }
}
