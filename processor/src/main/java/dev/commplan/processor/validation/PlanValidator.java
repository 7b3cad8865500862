package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.diag.ValidationReport;
import dev.commplan.processor.lang.Identifiers;
import dev.commplan.processor.model.BufferType;
import dev.commplan.model.Collective;
import dev.commplan.model.InPlace;
import dev.commplan.model.Peer;
import dev.commplan.model.PeerPairing;
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
    /** Every Send and Recv whose peer parsed, in declaration order, for rule 18. */
    private final List<Transfer> transfers = new ArrayList<>();
    /** Steps with a Send or Recv that rule 18 cannot check (its peer, shape or type is wrong, and reported). */
    private final Set<Integer> uncheckedSteps = new HashSet<>();

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
      checkPairs();
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
        if (c.oneBuffer()) {
          report.add(Message.MISSING_PEER_SHAPE, f.element(), c.mirror(), null, f.name(), c.kind().annotation(),
              "@Shape(" + suggestPeerShape(f, c) + ")", f.name());
        } else {
          report.add(Message.MISSING_SHAPE, f.element(), c.mirror(), null, f.name(), c.kind().annotation(),
              "@Shape(" + suggestSendShape(c) + ")", f.name());
        }
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

    // ---- rules 1-5, 9, 10, 15-17: each collective -------------------------------------------------

    /**
     * Checks {@code c}; returns its receive buffer's field name (the field itself for Send and Recv), or
     * null when there is none ({@code into} is wrong or missing).
     */
    private String checkCollective(ParsedField f, ParsedCollective c, Set<String> missingRecvShapeReported) {
      checkRoot(f, c);
      if (c.oneBuffer()) {
        checkPeer(f, c);
        return f.name();
      }
      if (c.inPlace() && c.kind().inPlace() == InPlace.NOT_ALLOWED) {
        String type = f.isBuffer() ? f.bufferType().simpleName() : "buffer";
        String shape = f.shape() == null ? "{\"ranks\", \"1024\"}" : f.shape().asWritten();
        report.add(Message.MISSING_INTO, f.element(), c.mirror(), c.into().source(), c.describe(), c.into().value(),
            c.kind().annotation(), f.name(), type, shape);
        return null;
      }
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
      switch (c.kind().counts()) {
        case RECV_IS_RANKS_TIMES_SEND -> {
          Monomial required = ranks.times(send);
          if (!required.equals(recv)) {
            report.add(Message.GATHER_SIZE, f.element(), c.mirror(), c.into().source(), c.describe(), into, into, f.name(),
                format(required), suffix, into, target.shape().asWritten(), format(recv), into,
                withRanks(f.shape()), alternative(f.name(), recv.divide(ranks)));
          }
        }
        case SEND_IS_RANKS_TIMES_RECV -> {
          Monomial required = ranks.times(recv);
          if (!required.equals(send)) {
            report.add(Message.SCATTER_SIZE, f.element(), c.mirror(), c.into().source(), c.describe(), into, f.name(),
                into, format(required), suffix, f.name(), f.shape().asWritten(), format(send), f.name(),
                withRanks(target.shape()), alternative(into, send.divide(ranks)));
          }
        }
        case SAME -> {
          if (!send.equals(recv)) {
            report.add(Message.COUNT_MISMATCH, f.element(), c.mirror(), c.into().source(), c.describe(),
                c.kind().intoVerb(), into, into, f.name(), format(send), f.shape().asWritten(), into,
                target.shape().asWritten(), format(recv), into, f.shape().asWritten());
          }
        }
        case SAME_DIVISIBLE -> {
          if (!send.equals(recv)) {
            report.add(Message.ALL_TO_ALL_SIZE, f.element(), c.mirror(), c.into().source(), c.describe(), into, into,
                f.name(), format(send), f.shape().asWritten(), into, target.shape().asWritten(), format(recv), into,
                f.shape().asWritten());
          } else {
            provablyNotDivisible(send).ifPresent(perRank -> report.add(Message.ALL_TO_ALL_NOT_DIVISIBLE, f.element(),
                c.mirror(), c.into().source(), c.describe(), into, f.name(), fixedRanks, f.name(), format(send),
                f.shape().asWritten(), f.name(), into, ShapeText.braces(List.of(Monomial.RANKS, perRank.toString())),
                perRank));
          }
        }
      }
    }

    /**
     * Where a count is provably not divisible by the ranks (fixed ranks and a constant count), the
     * elements per rank a divisible one would have (rounded up); otherwise empty, and the plan checks it
     * when built.
     */
    private Optional<BigInteger> provablyNotDivisible(Monomial count) {
      if (fixedRanks == 0 || !count.isConstant()) {
        return Optional.empty();
      }
      BigInteger n = BigInteger.valueOf(fixedRanks);
      if (count.constant().mod(n).signum() == 0) {
        return Optional.empty();
      }
      return Optional.of(count.constant().add(n).subtract(BigInteger.ONE).divide(n));
    }

    /** Rule 17: the peer parses ({@link Peer#parse}); a parsed one is kept for rule 18. */
    private void checkPeer(ParsedField f, ParsedCollective c) {
      Peer peer;
      try {
        peer = Peer.parse(c.peer().value());
      } catch (IllegalArgumentException e) {
        report.add(Message.BAD_PEER, f.element(), c.mirror(), c.peer().source(), c.describe(), c.kind().peerAttribute(),
            c.peer().value(), e.getMessage());
        uncheckedSteps.add(c.step().value());
        return;
      }
      Monomial count = counts.get(f.name());
      if (!f.isBuffer() || count == null) {
        uncheckedSteps.add(c.step().value()); // NotABuffer, MissingShape or a bad shape says why
        return;
      }
      transfers.add(new Transfer(f, c, peer, effective(count)));
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
      if (!c.kind().inPlace().sliced()) {
        return;
      }
      Monomial count = counts.get(f.name());
      if (count == null || !f.isBuffer()) {
        return;
      }
      // without fixed ranks (or with dims in the count) the plan checks it when built
      Monomial eff = effective(count);
      provablyNotDivisible(eff).ifPresent(perRank -> report.add(Message.NOT_DIVISIBLE, f.element(), c.mirror(), null,
          c.describe(), f.name(),
          c.kind().inPlace() == InPlace.SEND_IS_RANK_SLICE_OF_RECV ? "holds the whole gathered result"
              : "holds the whole input",
          f.name(), fixedRanks, f.name(), format(eff), f.shape().asWritten(), f.name(),
          ShapeText.braces(List.of(Monomial.RANKS, perRank.toString())), perRank));
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

    /**
     * What one collective reads and writes, as the model says ({@link Collective#readsSend}, {@link
     * Collective#writesRecv}): in place it reads and writes its one buffer; Send only reads its field,
     * Recv only writes it; a write on the root only (Reduce, Gather) is a write (rule 19).
     */
    private record Access(ParsedCollective c, String recv) {
      Set<String> reads() {
        return c.kind().readsSend() ? Set.of(c.field()) : Set.of();
      }

      Set<String> writes() {
        return recv == null || !c.kind().writesRecv() ? Set.of() : Set.of(recv);
      }
    }

    // ---- rule 18: point-to-point pairs ------------------------------------------------------------

    /**
     * A Send or Recv whose peer parsed, on a buffer field with a valid shape.
     *
     * @param count its count, with {@code ranks} replaced where the plan fixes it
     */
    private record Transfer(ParsedField f, ParsedCollective c, Peer peer, Monomial count) {
      int step() {
        return c.step().value();
      }

      boolean sameData(Transfer other) {
        return f.bufferType() == other.f.bufferType() && count.equals(other.count);
      }
    }

    /**
     * Rule 18 ({@link PeerPairing}, the runtime's rule too): in each step every Send is matched one to one
     * by a Recv of the same data type and count from its inverse peer. Counts are compared as
     * CountMismatch compares them, as monomials. A step where some transfer could not be checked (its
     * error is reported) is left alone: what it lacks could be that one.
     */
    private void checkPairs() {
      List<Transfer> sends = transfers.stream().filter(t -> t.c().kind() == Collective.SEND).toList();
      List<Transfer> recvs = transfers.stream().filter(t -> t.c().kind() == Collective.RECV).toList();
      PeerPairing<Transfer> pairing = PeerPairing.of(sends, recvs, Transfer::step, Transfer::peer, Transfer::sameData);
      for (Transfer alone : pairing.unmatched()) {
        if (uncheckedSteps.contains(alone.step())) {
          continue;
        }
        ParsedCollective c = alone.c();
        Collective needed = c.kind().counterpart();
        String type = alone.f().bufferType().simpleName();
        String count = format(alone.count());
        String wanted = "@" + needed.annotation() + "(" + needed.peerAttribute() + " = \"" + alone.peer().inverse()
            + "\"" + (alone.step() != 0 ? ", step = " + alone.step() : "") + ")";
        report.add(Message.UNMATCHED_PEER, alone.f().element(), c.mirror(), c.peer().source(), c.describe(), type,
            count, c.kind().peerAttribute(), c.peer().value(), wanted, type, count, alone.step(),
            nearMiss(alone, pairing), c.kind() == Collective.SEND ? "send" : "receive",
            c.kind() == Collective.SEND ? "receive" : "send", wanted, type, alone.f().shape().asWritten(),
            c.kind().annotation());
      }
    }

    /**
     * Why the nearest candidate does not pair with {@code alone}, as " (...)", or "" if there is none: one
     * of its step with the right peer but other data, one already paired, one of another step, or one of
     * its data from another peer.
     */
    private String nearMiss(Transfer alone, PeerPairing<Transfer> pairing) {
      Collective other = alone.c().kind().counterpart();
      Peer wanted = alone.peer().inverse();
      Map<Transfer, Transfer> partner = new java.util.IdentityHashMap<>();
      for (PeerPairing.Pair<Transfer> p : pairing.pairs()) {
        partner.put(p.send(), p.recv());
        partner.put(p.recv(), p.send());
      }
      List<Transfer> candidates = transfers.stream().filter(t -> t.c().kind() == other).toList();
      for (Transfer t : candidates) {
        if (t.step() == alone.step() && t.peer().equals(wanted) && !t.sameData(alone)) {
          return " (" + t.c().describe() + " has " + t.c().kind().peerAttribute() + " = \"" + t.c().peer().value()
              + "\" but is " + t.f().bufferType().simpleName() + " with count " + format(t.count()) + ")";
        }
      }
      for (Transfer t : candidates) {
        if (t.step() == alone.step() && t.peer().equals(wanted) && partner.containsKey(t)) {
          return " (" + t.c().describe() + " would, but pairs with " + partner.get(t).c().describe() + " already)";
        }
      }
      for (Transfer t : candidates) {
        if (t.step() != alone.step() && t.peer().equals(wanted) && t.sameData(alone)) {
          return " (" + t.c().describe() + " would, but is in step " + t.step() + ")";
        }
      }
      for (Transfer t : candidates) {
        if (t.step() == alone.step() && t.sameData(alone) && !partner.containsKey(t)) {
          return " (" + t.c().describe() + " has " + t.c().kind().peerAttribute() + " = \"" + t.c().peer().value()
              + "\", which pairs with " + alone.c().kind().peerAttribute() + " = \"" + t.peer().inverse() + "\")";
        }
      }
      return "";
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

    /**
     * A @Shape for the one buffer of a Send or Recv: the shape of the transfer it would pair with (the
     * counterpart in its step whose peer is its peer's inverse), since rule 18 needs equal counts.
     */
    private String suggestPeerShape(ParsedField f, ParsedCollective c) {
      Optional<Peer> wanted = parsedPeer(c).map(Peer::inverse);
      for (ParsedField g : plan.fields()) {
        for (ParsedCollective d : g.collectives()) {
          if (g != f && g.shape() != null && wanted.isPresent() && d.kind() == c.kind().counterpart()
              && d.step().value().equals(c.step().value()) && parsedPeer(d).equals(wanted)) {
            return g.shape().asWritten();
          }
        }
      }
      return "{\"1024\"}";
    }

    private static Optional<Peer> parsedPeer(ParsedCollective c) {
      try {
        return Optional.of(Peer.parse(c.peer().value()));
      } catch (IllegalArgumentException e) {
        return Optional.empty(); // reported by rule 17
      }
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
