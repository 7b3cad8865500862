package dev.commplan.processor.generator;

import com.palantir.javapoet.ClassName;
import dev.commplan.model.ElementType;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The types generated code names, and the variable names it therefore must not use. */
final class GeneratedTypes {
  private GeneratedTypes() {}

  static final String RUNTIME = "dev.commplan.runtime";
  static final String RUNTIME_PLAN = "dev.commplan.runtime.plan";
  static final ClassName PLAN = ClassName.get(RUNTIME_PLAN, "Plan");
  static final ClassName PLAN_BUILDER = ClassName.get(RUNTIME_PLAN, "PlanBuilder");
  static final ClassName SCHEDULE = ClassName.get(RUNTIME_PLAN, "Schedule");
  static final ClassName COMMUNICATOR = ClassName.get(RUNTIME, "Communicator");
  /**
   * Named only where a plan has axes, and only as a parameter's type (never in an expression), so no
   * variable can obscure it and it is not in {@link #RESERVED}: plans without axes keep their names.
   */
  static final ClassName MESH = ClassName.get(RUNTIME, "Mesh");
  static final ClassName STREAM = ClassName.get(RUNTIME, "Stream");
  /**
   * Named only in a bucketed plan, and only after {@code new} (a type context, where no variable can
   * obscure it), so it is not in {@link #RESERVED}: plans keep their names.
   */
  static final ClassName ILLEGAL_ARGUMENT = ClassName.get(IllegalArgumentException.class);
  static final ClassName CAPTURED_PLAN = ClassName.get(RUNTIME, "CapturedPlan");
  static final ClassName DATA_TYPE = ClassName.get(RUNTIME, "DataType");
  static final ClassName BUFFER = ClassName.get(RUNTIME, "Buffer");
  // Named in Javadoc only, so written out in full there (see javadocName): an import that only Javadoc
  // uses is an unused import to ecj, which does not read Javadoc unless told to.
  static final ClassName PLAN_BUILD_EXCEPTION = ClassName.get(RUNTIME, "PlanBuildException");
  static final ClassName BUFFER_BINDING_EXCEPTION = ClassName.get(RUNTIME, "BufferBindingException");
  static final ClassName BUFFER_IN_FLIGHT_EXCEPTION = ClassName.get(RUNTIME, "BufferInFlightException");
  static final ClassName REDUCE_OP = ClassName.get("dev.commplan.annotations", "ReduceOp");
  static final ClassName COLLECTIVE = ClassName.get("dev.commplan.model", "Collective");
  static final ClassName GENERATED = ClassName.get("javax.annotation.processing", "Generated");
  static final ClassName OBJECTS = ClassName.get("java.util", "Objects");

  /**
   * Every type the generated code names, in code or in Javadoc (and the buffer types, added in reserved()).
   * Add a type here when the generator starts to use it: {@link #RESERVED} comes from this list.
   */
  private static final List<ClassName> TYPES = List.of(
      PLAN, PLAN_BUILDER, SCHEDULE, COMMUNICATOR, STREAM, DATA_TYPE, BUFFER, PLAN_BUILD_EXCEPTION,
      BUFFER_BINDING_EXCEPTION, BUFFER_IN_FLIGHT_EXCEPTION, REDUCE_OP, COLLECTIVE, GENERATED, OBJECTS,
      ClassName.get(String.class), ClassName.get(Boolean.class), ClassName.get(Override.class),
      ClassName.get(AutoCloseable.class));

  /**
   * Names no field, parameter or local of the generated code may have, since it would obscure a type the
   * code names in an expression ({@code DataType.F32}, {@code Objects.requireNonNull(...)}): each type's
   * simple name, and the first part of its package. The latter matters when the generated class has the
   * name of a type it uses ({@code @CommPlan(name = "DataType")}): that type is then written in full,
   * {@code dev.commplan.runtime.DataType.F32}, and a variable {@code dev} would make {@code dev.commplan}
   * a field access on it. The generated class's own name and its nested classes' (Builder, the parts)
   * are added per plan.
   */
  static final Set<String> RESERVED = reserved();

  private static Set<String> reserved() {
    Set<String> names = new HashSet<>();
    List<ClassName> all = new ArrayList<>(TYPES);
    for (ElementType t : ElementType.values()) {
      all.add(bufferClass(t));
    }
    for (ClassName type : all) {
      names.add(type.simpleName());
      String pkg = type.packageName();
      names.add(pkg.contains(".") ? pkg.substring(0, pkg.indexOf('.')) : pkg);
    }
    return Set.copyOf(names);
  }

  /** A buffer type's class: {@code F32Buffer} (a type of {@link #RESERVED}). */
  static ClassName bufferClass(ElementType type) {
    return ClassName.get(ElementType.BUFFER_PACKAGE, type.bufferSimpleName());
  }

  /**
   * A type that only Javadoc names, written out in full: {@code $T} would import it, and ecj reports an
   * import that only Javadoc uses as unused.
   */
  static String javadocName(ClassName type) {
    return type.canonicalName();
  }
}
