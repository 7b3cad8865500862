package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.diag.ValidationReport;
import dev.commplan.processor.lang.Identifiers;
import dev.commplan.processor.model.BufferType;
import dev.commplan.model.Collective;
import dev.commplan.processor.model.ShapeText;
import dev.commplan.processor.parse.Annotations;
import dev.commplan.processor.parse.Attr;
import dev.commplan.processor.parse.FieldIndex;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import dev.commplan.processor.parse.ParsedPlan;
import dev.commplan.processor.parse.ParsedShape;
import dev.commplan.processor.shape.Monomial;
import dev.commplan.processor.shape.ShapeEntry;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.NestingKind;

/**
 * Checks a {@link ParsedPlan} against every rule of the contract's "must reject" list and returns what it
 * found as a {@link ValidationReport}. Never throws for bad input: everything wrong with a plan is an item.
 */
public final class PlanValidator {
  /** Validates one plan. */
  public ValidationReport validate(ParsedPlan plan) {
    return new Run(plan).validate();
  }

  private static final class Run {
    private final ParsedPlan plan;
    private final ValidationReport.Builder report = ValidationReport.builder();
    private final Map<String, ParsedField> fields = new LinkedHashMap<>();
    private final FieldIndex byName;
    private final Set<String> dims = new LinkedHashSet<>();
    private final Map<String, Monomial> counts = new HashMap<>();
    private final Comparator<String> order;
    private int fixedRanks;

    Run(ParsedPlan plan) {
      this.plan = plan;
      this.byName = new FieldIndex(plan.fields());
      for (ParsedField f : plan.fields()) {
        fields.put(f.name(), f);
      }
      this.order = Monomial.symbolOrder(plan.dimNames());
    }

    ValidationReport validate() {
      if (!checkTarget()) {
        return report.build();
      }
      checkRanks();
      checkDims();
      checkName();
      for (ParsedField f : plan.fields()) {
        if (f.shape() != null) {
          checkShape(f).ifPresent(m -> counts.put(f.name(), m));
        }
      }
      for (ParsedField f : plan.fields()) {
        if (f.annotated()) {
          checkField(f);
        }
      }
      List<Access> accesses = new ArrayList<>();
      Set<String> missingRecvShapeReported = new HashSet<>();
      for (ParsedField f : plan.fields()) {
        for (ParsedCollective c : f.collectives()) {
          String recv = checkCollective(f, c, missingRecvShapeReported);
          if (f.isBuffer()) {
            accesses.add(new Access(c, recv));
          }
        }
        checkDuplicates(f);
      }
      checkRaces(accesses);
      return report.build();
    }

    // ---- rule 13: the class ------------------------------------------------------------------------

    private boolean checkTarget() {
      String name = plan.simpleName();
      if (plan.kind() != ElementKind.CLASS) {
        String what = switch (plan.kind()) {
          case INTERFACE -> "an interface";
          case ENUM -> "an enum";
          case RECORD -> "a record";
          case ANNOTATION_TYPE -> "an annotation type";
          default -> "a " + plan.kind().toString().toLowerCase(java.util.Locale.ROOT);
        };
        report.add(Message.BAD_TARGET_KIND, plan.element(), plan.mirror(), null, name, what, name);
        return false;
      }
      if (plan.nesting() == NestingKind.LOCAL || plan.nesting() == NestingKind.ANONYMOUS) {
        report.add(Message.BAD_TARGET_LOCAL, plan.element(), plan.mirror(), null, name,
            plan.nesting() == NestingKind.LOCAL ? "a local" : "an anonymous");
        return false;
      }
      boolean ok = true;
      if (plan.nesting() == NestingKind.MEMBER && !plan.isStatic()) {
        report.add(Message.BAD_TARGET_INNER, plan.element(), plan.mirror(), null, name, name);
        ok = false;
      }
      if (plan.isPrivate()) {
        report.add(Message.BAD_TARGET_PRIVATE, plan.element(), plan.mirror(), null, name, name);
        ok = false;
      }
      return ok;
    }

    // ---- rule 14: dims and ranks -------------------------------------------------------------------

    private void checkRanks() {
      int ranks = plan.ranks().value();
      if (ranks < 0) {
        report.add(Message.NEGATIVE_RANKS, plan.element(), plan.mirror(), plan.ranks().source(), ranks);
      }
      fixedRanks = Math.max(ranks, 0);
    }

    /** Dims are compared as the compiler reads them: "n" and "n\u005Cu200B" are one name to javac. */
    private void checkDims() {
      Map<String, String> written = new HashMap<>();
      for (Attr<String> dim : plan.dims()) {
        String d = dim.value();
        String name = Identifiers.canonical(d);
        if (name.equals(Monomial.RANKS)) {
          report.add(Message.RESERVED_DIM, plan.element(), plan.mirror(), source(dim));
        } else if (!JavaNames.isIdentifier(d)) {
          report.add(Message.INVALID_DIM, plan.element(), plan.mirror(), source(dim), Identifiers.visible(d),
              JavaNames.sanitize(d));
        } else if (!dims.add(name)) {
          String first = written.get(name);
          if (first.equals(d)) {
            report.add(Message.DUPLICATE_DIM, plan.element(), plan.mirror(), source(dim), Identifiers.visible(d),
                Identifiers.visible(d));
          } else {
            report.add(Message.DUPLICATE_DIM_IGNORABLE, plan.element(), plan.mirror(), source(dim),
                Identifiers.visible(d), Identifiers.visible(first), Identifiers.ignorables(d + first),
                Identifiers.visible(d));
          }
        } else {
          written.put(name, d);
        }
      }
    }

    private javax.lang.model.element.AnnotationValue source(Attr<String> dim) {
      return dim.source() != null ? dim.source() : plan.dimsSource();
    }

    /** The name is compared as the compiler reads it ({@link ParsedPlan#generatedName}). */
    private void checkName() {
      String name = plan.name().value();
      if (name.isEmpty()) {
        return;
      }
      String generated = plan.generatedName();
      String shown = Identifiers.visible(name);
      if (!JavaNames.isIdentifier(name)) {
        report.add(Message.BAD_NAME, plan.element(), plan.mirror(), plan.name().source(), shown,
            plan.simpleName() + "Plan");
      } else if (generated.equals("Builder")) {
        report.add(Message.NAME_IS_BUILDER, plan.element(), plan.mirror(), plan.name().source(), shown,
            plan.simpleName());
      } else if (Identifiers.same(generated, plan.simpleNames().getFirst())) {
        String qualified = plan.packageName().isEmpty() ? generated : plan.packageName() + "." + generated;
        report.add(Message.NAME_CLASH, plan.element(), plan.mirror(), plan.name().source(), shown, qualified,
            qualified, plan.simpleName());
      }
    }

    // ---- rules 6, 7, 8, 13: each field ------------------------------------------------------------

    private void checkField(ParsedField f) {
      AnnotationMirror first = f.firstMirror();
      String firstName = simpleName(first);
      if (f.isPrivate()) {
        report.add(Message.PRIVATE_FIELD, f.element(), first, null, f.name(), firstName, f.name());
      }
      if (!f.isBuffer()) {
        report.add(Message.NOT_A_BUFFER, f.element(), first, null, f.name(), firstName, f.typeText(), f.name(),
            BufferType.list());
      }
      if (f.shape() == null && !f.collectives().isEmpty()) {
        ParsedCollective c = f.collectives().getFirst();
        report.add(Message.MISSING_SHAPE, f.element(), c.mirror(), null, f.name(), c.kind().annotation(),
            "@Shape(" + suggestSendShape(c) + ")", f.name());
      }
    }

    private Optional<Monomial> checkShape(ParsedField f) {
      ParsedShape shape = f.shape();
      if (shape.entries().isEmpty()) {
        report.add(Message.EMPTY_SHAPE, f.element(), shape.mirror(), shape.source(), f.name());
        return Optional.empty();
      }
      boolean ok = true;
      for (ParsedShape.Entry e : shape.entries()) {
        switch (e.parsed()) {
          case ShapeEntry.Invalid invalid -> {
            report.add(Message.BAD_SHAPE, f.element(), shape.mirror(), e.source(), e.text(), f.name(), invalid.reason());
            ok = false;
          }
          case ShapeEntry.Valid valid -> {
            for (String symbol : new LinkedHashSet<>(valid.symbols())) {
              if (!symbol.equals(Monomial.RANKS) && !dims.contains(symbol)) {
                String near = JavaNames.closest(symbol, dims);
                report.add(Message.UNKNOWN_DIM, f.element(), shape.mirror(), e.source(), e.text(), f.name(), symbol,
                    dims.isEmpty() ? "none" : quoted(dims), near == null ? "" : " (did you mean \"" + near + "\"?)",
                    symbol);
                ok = false;
              }
            }
          }
        }
      }
      if (!ok) {
        return Optional.empty();
      }
      Monomial count = shape.count();
      if (!count.constantFitsInLong()) {
        report.add(Message.COUNT_OVERFLOW, f.element(), shape.mirror(), shape.source(), shape.asWritten(), f.name(),
            count.constant());
        return Optional.empty();
      }
      return Optional.of(count);
    }

    // ---- rules 1-5, 9, 10: each collective --------------------------------------------------------

    /** Checks {@code c}; returns its receive buffer's field name, or null when {@code into} is wrong. */
    private String checkCollective(ParsedField f, ParsedCollective c, Set<String> missingRecvShapeReported) {
      checkRoot(f, c);
      if (c.inPlace()) {
        checkInPlaceDivisible(f, c);
        return f.name();
      }
      String into = c.into().value();
      AnnotationMirror m = c.mirror();
      if (into.equals(f.name()) || byName.find(into).map(t -> t.name().equals(f.name())).orElse(false)) {
        report.add(Message.INTO_SELF, f.element(), m, c.into().source(), c.describe(), Identifiers.visible(into));
        return null;
      }
      ParsedField target = byName.find(into).orElse(null);
      if (target == null) {
        List<String> buffers = plan.fields().stream()
            .filter(x -> x.isBuffer() && !x.name().equals(f.name()))
            .map(ParsedField::name)
            .toList();
        String near = JavaNames.closest(into, buffers);
        report.add(Message.UNKNOWN_INTO, f.element(), m, c.into().source(), c.describe(), Identifiers.visible(into),
            plan.simpleName(), Identifiers.visible(into),
            near == null ? "" : " (did you mean '" + near + "'?)",
            buffers.isEmpty() ? "it has none; declare one with @Shape" : quotedSingle(buffers));
        return null;
      }
      into = target.name();
      if (!target.isBuffer()) {
        report.add(Message.INTO_NOT_BUFFER, f.element(), m, c.into().source(), c.describe(),
            Identifiers.visible(c.into().value()), into,
            target.typeText(), into, f.isBuffer() ? f.bufferType().simpleName() : "a buffer type");
        return null;
      }
      if (target.shape() == null) {
        if (missingRecvShapeReported.add(into)) {
          report.add(Message.MISSING_RECV_SHAPE, target.element(), into, c.describe(),
              "@Shape(" + suggestRecvShape(f, c) + ")", into);
        }
      }
      if (f.isBuffer() && target.bufferType() != f.bufferType()) {
        report.add(Message.TYPE_MISMATCH, f.element(), m, c.into().source(), c.describe(), f.bufferType().simpleName(),
            c.kind().intoVerb(), into, target.bufferType().simpleName(), into, f.bufferType().simpleName(), f.name(),
            target.bufferType().simpleName());
      }
      Monomial send = counts.get(f.name());
      Monomial recv = counts.get(into);
      if (f.isBuffer() && send != null && recv != null) {
        checkSizes(f, target, c, effective(send), effective(recv));
      }
      return into;
    }

    private void checkSizes(ParsedField f, ParsedField target, ParsedCollective c, Monomial send, Monomial recv) {
      String into = target.name();
      String suffix = fixedRanks > 0 ? " with @CommPlan(ranks = " + fixedRanks + ")" : "";
      Monomial ranks = ranksFactor();
      switch (c.kind()) {
        case ALL_GATHER -> {
          Monomial required = ranks.times(send);
          if (!required.equals(recv)) {
            report.add(Message.GATHER_SIZE, f.element(), c.mirror(), c.into().source(), c.describe(), into, into, f.name(),
                format(required), suffix, into, target.shape().asWritten(), format(recv), into,
                withRanks(f.shape()), alternative(f.name(), recv.divide(ranks)));
          }
        }
        case REDUCE_SCATTER -> {
          Monomial required = ranks.times(recv);
          if (!required.equals(send)) {
            report.add(Message.SCATTER_SIZE, f.element(), c.mirror(), c.into().source(), c.describe(), into, f.name(),
                into, format(required), suffix, f.name(), f.shape().asWritten(), format(send), f.name(),
                withRanks(target.shape()), alternative(into, send.divide(ranks)));
          }
        }
        case ALL_REDUCE, BROADCAST -> {
          if (!send.equals(recv)) {
            report.add(Message.COUNT_MISMATCH, f.element(), c.mirror(), c.into().source(), c.describe(),
                c.kind().intoVerb(), into, into, f.name(), format(send), f.shape().asWritten(), into,
                target.shape().asWritten(), format(recv), into, f.shape().asWritten());
          }
        }
      }
    }

    private void checkRoot(ParsedField f, ParsedCollective c) {
      if (!c.kind().hasRoot()) {
        return;
      }
      int root = c.root().value();
      if (root < 0) {
        report.add(Message.NEGATIVE_ROOT, f.element(), c.mirror(), c.root().source(), c.describe(), root);
      } else if (fixedRanks > 0 && root >= fixedRanks) {
        report.add(Message.ROOT_OUT_OF_RANGE, f.element(), c.mirror(), c.root().source(), c.describe(), root,
            fixedRanks, fixedRanks - 1, fixedRanks);
      }
    }

    private void checkInPlaceDivisible(ParsedField f, ParsedCollective c) {
      if (c.kind() != Collective.ALL_GATHER && c.kind() != Collective.REDUCE_SCATTER) {
        return;
      }
      Monomial count = counts.get(f.name());
      if (fixedRanks == 0 || count == null || !f.isBuffer()) {
        return; // without fixed ranks (or with dims in the count) the plan checks it when built
      }
      Monomial eff = effective(count);
      BigInteger n = BigInteger.valueOf(fixedRanks);
      if (eff.isConstant() && eff.constant().mod(n).signum() != 0) {
        BigInteger perRank = eff.constant().add(n).subtract(BigInteger.ONE).divide(n);
        report.add(Message.NOT_DIVISIBLE, f.element(), c.mirror(), null, c.describe(), f.name(),
            c.kind() == Collective.ALL_GATHER ? "holds the whole gathered result" : "holds the whole input",
            f.name(), fixedRanks, f.name(), format(eff), f.shape().asWritten(), f.name(),
            ShapeText.braces(List.of(Monomial.RANKS, perRank.toString())), perRank);
      }
    }

    // ---- rules 11 and 12: steps --------------------------------------------------------------------

    private void checkDuplicates(ParsedField f) {
      Map<Integer, ParsedCollective> byStep = new HashMap<>();
      Set<Integer> used = f.collectives().stream().map(c -> c.step().value()).collect(Collectors.toSet());
      for (ParsedCollective c : f.collectives()) {
        int step = c.step().value();
        ParsedCollective first = byStep.putIfAbsent(step, c);
        if (first != null) {
          int free = step + 1;
          while (used.contains(free)) {
            free++;
          }
          report.add(Message.DUPLICATE_COLLECTIVE, f.element(), c.mirror(), c.step().source(), f.name(),
              first.kind().annotation(), c.kind().annotation(), step, c.kind().annotation(), free);
        }
      }
    }

    /**
     * Each collective against the earlier ones of its step that touch a buffer it touches (found through
     * who writes and who reads each buffer, so that a step of many collectives is checked in linear time,
     * not by comparing every pair).
     */
    private void checkRaces(List<Access> accesses) {
      Map<Integer, List<Access>> bySteps = new TreeMap<>();
      for (Access a : accesses) {
        bySteps.computeIfAbsent(a.c().step().value(), k -> new ArrayList<>()).add(a);
      }
      for (Map.Entry<Integer, List<Access>> e : bySteps.entrySet()) {
        List<Access> step = e.getValue();
        Map<String, List<Integer>> writers = new HashMap<>();
        Map<String, List<Integer>> readers = new HashMap<>();
        for (int j = 0; j < step.size(); j++) {
          Access b = step.get(j);
          SortedSet<Integer> earlier = new TreeSet<>();
          for (String w : b.writes()) {
            earlier.addAll(writers.getOrDefault(w, List.of()));
            earlier.addAll(readers.getOrDefault(w, List.of()));
          }
          for (String r : b.reads()) {
            earlier.addAll(writers.getOrDefault(r, List.of()));
          }
          for (int i : earlier) {
            Access a = step.get(i);
            if (a.c().field().equals(b.c().field())) {
              continue; // DuplicateCollective
            }
            String[] conflict = conflict(a, b);
            if (conflict != null) {
              report.add(Message.STEP_RACE, fields.get(b.c().field()).element(), b.c().mirror(), b.c().step().source(),
                  b.c().describe(), conflict[1], conflict[0], a.c().describe(), conflict[2], e.getKey(),
                  e.getKey() + 1, b.c().describe());
            }
          }
          for (String w : b.writes()) {
            writers.computeIfAbsent(w, k -> new ArrayList<>()).add(j);
          }
          for (String r : b.reads()) {
            readers.computeIfAbsent(r, k -> new ArrayList<>()).add(j);
          }
        }
      }
    }

    /** {buffer, what b does, what a does} if a and b conflict, else null. */
    private static String[] conflict(Access a, Access b) {
      for (String w : b.writes()) {
        if (a.writes().contains(w)) {
          return new String[] {w, "writes", "also writes"};
        }
      }
      for (String r : b.reads()) {
        if (a.writes().contains(r)) {
          return new String[] {r, "reads", "writes"};
        }
      }
      for (String w : b.writes()) {
        if (a.reads().contains(w)) {
          return new String[] {w, "writes", "reads"};
        }
      }
      return null;
    }

    /** What one collective reads and writes; in place it reads and writes its one buffer. */
    private record Access(ParsedCollective c, String recv) {
      Set<String> reads() {
        return Set.of(c.field());
      }

      Set<String> writes() {
        return recv == null ? Set.of() : Set.of(recv);
      }
    }

    // ---- helpers -----------------------------------------------------------------------------------

    /** {@code ranks} as a factor: the symbol, or N where the plan fixes it. */
    private Monomial ranksFactor() {
      return fixedRanks > 0 ? Monomial.constant(fixedRanks) : Monomial.symbol(Monomial.RANKS);
    }

    /** The count with {@code ranks} replaced by N where the plan fixes it. */
    private Monomial effective(Monomial m) {
      return fixedRanks > 0 ? m.substitute(Monomial.RANKS, fixedRanks) : m;
    }

    private String format(Monomial m) {
      return m.format(order);
    }

    private static String withRanks(ParsedShape shape) {
      List<String> entries = new ArrayList<>();
      entries.add(Monomial.RANKS);
      entries.addAll(shape.texts());
      return ShapeText.braces(entries);
    }

    private String alternative(String field, Optional<Monomial> shape) {
      return shape.map(m -> ", or '" + field + "' as @Shape(" + ShapeText.braces(m.factors(order)) + ")").orElse("");
    }

    /** A @Shape for the send field derived from its receive buffer where possible. */
    private String suggestSendShape(ParsedCollective c) {
      ParsedField target = c.inPlace() ? null : byName.find(c.into().value()).orElse(null);
      Monomial recv = target == null ? null : counts.get(target.name());
      if (recv == null) {
        return "{\"ranks\", \"hidden\"}";
      }
      return switch (c.kind().counts()) {
        case SAME, SAME_DIVISIBLE -> target.shape().asWritten();
        case RECV_IS_RANKS_TIMES_SEND -> effective(recv).divide(ranksFactor())
            .map(q -> ShapeText.braces(q.factors(order)))
            .orElse("{\"1024\"}");
        case SEND_IS_RANKS_TIMES_RECV -> withRanks(target.shape());
      };
    }

    /** A @Shape for the receive field of {@code c} derived from the send field where possible. */
    private String suggestRecvShape(ParsedField send, ParsedCollective c) {
      Monomial count = counts.get(send.name());
      if (count == null) {
        return "{\"ranks\", \"hidden\"}";
      }
      return switch (c.kind().counts()) {
        case SAME, SAME_DIVISIBLE -> send.shape().asWritten();
        case RECV_IS_RANKS_TIMES_SEND -> withRanks(send.shape());
        case SEND_IS_RANKS_TIMES_RECV -> effective(count).divide(ranksFactor())
            .map(q -> ShapeText.braces(q.factors(order)))
            .orElse("{\"1024\"}");
      };
    }

    private static String simpleName(AnnotationMirror m) {
      String q = Annotations.nameOf(m);
      return q.substring(q.lastIndexOf('.') + 1);
    }

    private static String quoted(Set<String> names) {
      return names.stream().map(n -> "\"" + n + "\"").collect(Collectors.joining(", "));
    }

    private static String quotedSingle(List<String> names) {
      return names.stream().map(n -> "'" + n + "'").collect(Collectors.joining(", "));
    }
  }
}
