package dev.commplan.processor.model;

import dev.commplan.processor.lang.Identifiers;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The public method names of a generated plan, chosen deterministically so that any valid plan compiles
 * (the rule is documented in docs/dsl.md, "Method names"):
 *
 * <ul>
 *   <li>an accessor is the field's name unless that is one of the plan's own methods or one of {@code
 *       Object}'s ({@link #PLAN_METHODS}), or the generated class's name; then {@code Buffer} is appended
 *       until it is unique;
 *   <li>a bind method is {@code bind} + the field's name capitalized, {@code Buffer} appended while two
 *       fields would get the same one ({@code w} and {@code W});
 *   <li>a dim setter is the dim's name unless that is a Builder method ({@link #BUILDER_METHODS}), a
 *       bind method or {@code Builder}; then {@code Dim} is appended until it is unique;
 *   <li>a constant of a bucketed plan's {@code enum Field} is the field's name; only where two fields are
 *       one name to javac (ecj keeps identifier-ignorable characters) does the later get {@code _} appended.
 * </ul>
 *
 * A bucketed plan ({@code @CommPlan(bucketBytes > 0)}) has more methods ({@link #BUCKET_PLAN_METHODS},
 * {@link #BUCKET_BUILDER_METHODS}), reserved in it only, so that other plans keep their names.
 *
 * Names that need no change are kept first, so a field keeps its own name whenever it can. Names are
 * compared, and returned, as the compiler reads them ({@link Identifiers#canonical}).
 */
public final class MethodNames {
  /** The generated plan class's own methods and {@code Object}'s. */
  public static final Set<String> PLAN_METHODS = Set.of(
      "execute", "executeStep", "capture", "close", "describe", "schedule", "communicator", "builder",
      "toString", "hashCode", "equals", "getClass", "wait", "notify", "notifyAll", "clone", "finalize");

  /** The Builder's own methods and {@code Object}'s. */
  public static final Set<String> BUILDER_METHODS = Set.of(
      "build", "hostAccessGuard", "fingerprintCheck", "orderCheck", "toString", "hashCode", "equals", "getClass", "wait", "notify",
      "notifyAll", "clone", "finalize");

  /** A bucketed plan's own methods beside {@link #PLAN_METHODS}. */
  public static final Set<String> BUCKET_PLAN_METHODS = Set.of("ready", "finish", "buckets");

  /** A bucketed plan's Builder's own methods beside {@link #BUILDER_METHODS}. */
  public static final Set<String> BUCKET_BUILDER_METHODS = Set.of("commStream", "bucketBytes");

  private MethodNames() {}

  /** {@link #accessors(List, String, boolean)} of a plan without buckets. */
  public static List<String> accessors(List<String> fields, String className) {
    return accessors(fields, className, false);
  }

  /**
   * Accessor names for {@code fields}, in the same order, in the generated class {@code className}: not
   * its name either (a method may have its class's name, but ecj warns "This method has a constructor
   * name"), nor, in a bucketed plan, one of {@link #BUCKET_PLAN_METHODS}.
   */
  public static List<String> accessors(List<String> fields, String className, boolean bucketed) {
    Set<String> reserved = new HashSet<>(PLAN_METHODS);
    reserved.add(className);
    if (bucketed) {
      reserved.addAll(BUCKET_PLAN_METHODS);
    }
    return allocate(canonical(fields), reserved, "Buffer");
  }

  /** Bind method names for {@code fields}, in the same order. */
  public static List<String> bindMethods(List<String> fields) {
    List<String> wanted = new ArrayList<>();
    for (String f : canonical(fields)) {
      wanted.add("bind" + capitalize(f));
    }
    return allocate(wanted, BUILDER_METHODS, "Buffer");
  }

  /** {@link #dimSetters(List, List, boolean)} of a plan without buckets. */
  public static List<String> dimSetters(List<String> dims, List<String> bindMethods) {
    return dimSetters(dims, bindMethods, false);
  }

  /**
   * Setter names for {@code dims}, in the same order, given the Builder's bind method names; not {@code
   * Builder} either (see {@link #accessors}), nor, in a bucketed plan, one of {@link
   * #BUCKET_BUILDER_METHODS}.
   */
  public static List<String> dimSetters(List<String> dims, List<String> bindMethods, boolean bucketed) {
    Set<String> reserved = new HashSet<>(BUILDER_METHODS);
    reserved.addAll(bindMethods);
    reserved.add("Builder");
    if (bucketed) {
      reserved.addAll(BUCKET_BUILDER_METHODS);
    }
    return allocate(canonical(dims), reserved, "Dim");
  }

  /**
   * The constants of a bucketed plan's {@code enum Field} for {@code fields}, in the same order: each the
   * field's name as javac reads it. Nothing else is declared in the enum ({@code values()} and {@code
   * valueOf} are methods, and javac and ecj take constants named like their hidden members, {@code
   * $VALUES}, {@code $values}, {@code ENUM$VALUES}), so only two fields that are one name to javac clash.
   */
  public static List<String> fieldConstants(List<String> fields) {
    return allocate(canonical(fields), Set.of(), "_");
  }

  /**
   * The names as the compiler reads them: names that differ only in identifier-ignorable characters are
   * one method name in generated code ({@link Identifiers#canonical}), so they are told apart as one.
   */
  private static List<String> canonical(List<String> names) {
    return names.stream().map(Identifiers::canonical).toList();
  }

  /**
   * Each wanted name, or, where it is reserved or already taken, the name with {@code suffix} appended
   * until it is neither. First every name that is free as it is, then the others in order.
   */
  static List<String> allocate(List<String> wanted, Set<String> reserved, String suffix) {
    Map<Integer, String> chosen = new LinkedHashMap<>();
    Set<String> taken = new HashSet<>(reserved);
    for (int i = 0; i < wanted.size(); i++) {
      String w = wanted.get(i);
      if (!reserved.contains(w) && taken.add(w)) {
        chosen.put(i, w);
      }
    }
    for (int i = 0; i < wanted.size(); i++) {
      if (!chosen.containsKey(i)) {
        String name = wanted.get(i) + suffix;
        while (!taken.add(name)) {
          name += suffix;
        }
        chosen.put(i, name);
      }
    }
    List<String> out = new ArrayList<>();
    for (int i = 0; i < wanted.size(); i++) {
      out.add(chosen.get(i));
    }
    return out;
  }

  /** The name with its first character in upper case: {@code w} -> {@code W}. */
  static String capitalize(String s) {
    int first = s.codePointAt(0);
    return new StringBuilder().appendCodePoint(Character.toUpperCase(first)).append(s, Character.charCount(first), s.length())
        .toString();
  }
}
