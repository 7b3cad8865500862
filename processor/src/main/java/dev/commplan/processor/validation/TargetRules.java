package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.lang.Identifiers;
import dev.commplan.processor.parse.ParsedPlan;
import java.util.Locale;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.NestingKind;

/** Rule 13 for the class itself (what {@code @CommPlan} may go on), and {@code @CommPlan(name)}. */
final class TargetRules {
  private final PlanContext cx;

  TargetRules(PlanContext cx) {
    this.cx = cx;
  }

  /** Whether the plan is a class the processor can read at all; when not, nothing else is checked. */
  boolean checkTarget() {
    ParsedPlan plan = cx.plan;
    String name = plan.simpleName();
    if (plan.kind() != ElementKind.CLASS) {
      String what = switch (plan.kind()) {
        case INTERFACE -> "an interface";
        case ENUM -> "an enum";
        case RECORD -> "a record";
        case ANNOTATION_TYPE -> "an annotation type";
        default -> "a " + plan.kind().toString().toLowerCase(Locale.ROOT);
      };
      cx.report.add(Message.BAD_TARGET_KIND, plan.element(), plan.mirror(), null, name, what, name);
      return false;
    }
    if (plan.nesting() == NestingKind.LOCAL || plan.nesting() == NestingKind.ANONYMOUS) {
      cx.report.add(Message.BAD_TARGET_LOCAL, plan.element(), plan.mirror(), null, name,
          plan.nesting() == NestingKind.LOCAL ? "a local" : "an anonymous");
      return false;
    }
    boolean ok = true;
    if (plan.nesting() == NestingKind.MEMBER && !plan.isStatic()) {
      cx.report.add(Message.BAD_TARGET_INNER, plan.element(), plan.mirror(), null, name, name);
      ok = false;
    }
    if (plan.isPrivate()) {
      cx.report.add(Message.BAD_TARGET_PRIVATE, plan.element(), plan.mirror(), null, name, name);
      ok = false;
    }
    return ok;
  }

  /** The name is compared as the compiler reads it ({@link ParsedPlan#generatedName}). */
  void checkName() {
    ParsedPlan plan = cx.plan;
    String name = plan.name().value();
    if (name.isEmpty()) {
      return;
    }
    String generated = plan.generatedName();
    String shown = Identifiers.visible(name);
    if (!JavaNames.isIdentifier(name)) {
      cx.report.add(Message.BAD_NAME, plan.element(), plan.mirror(), plan.name().source(), shown,
          plan.simpleName() + "Plan");
    } else if (generated.equals("Builder")) {
      cx.report.add(Message.NAME_IS_BUILDER, plan.element(), plan.mirror(), plan.name().source(), shown,
          plan.simpleName());
    } else if (generated.equals("Field") && plan.bucketed()) {
      cx.report.add(Message.NAME_IS_FIELD, plan.element(), plan.mirror(), plan.name().source(), shown,
          plan.simpleName());
    } else if (Identifiers.same(generated, plan.simpleNames().getFirst())) {
      String qualified = plan.packageName().isEmpty() ? generated : plan.packageName() + "." + generated;
      cx.report.add(Message.NAME_CLASH, plan.element(), plan.mirror(), plan.name().source(), shown, qualified,
          qualified, plan.simpleName());
    }
  }
}
