package dev.commplan.processor.diag;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.ModifiersTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePath;
import com.sun.source.util.Trees;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import javax.annotation.processing.ProcessingEnvironment;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
import javax.lang.model.element.Element;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.PackageElement;
import javax.lang.model.util.Elements;
import javax.tools.JavaFileObject;

/**
 * Puts diagnostics in source order, as the compiler's own are: by file (in the order the files were first
 * reported on), then by position in the file.
 *
 * <p>Where javac's {@link Trees} is at hand, the position is the offset in the file of what the diagnostic
 * points at. Elsewhere (ecj; or javac behind a wrapped processing environment, as Gradle's incremental
 * processing has) it is the element's place in the model: enclosing elements first, an element's
 * annotations before its members, members in declaration order, attributes and array entries in the
 * order written, top-level types in the order of the round's root elements (see {@link #sort}). Within a file, offsets are used only when every diagnostic of the file has one, so that
 * the order is always a total one; ties keep the order they were reported in.
 */
public final class SourceOrder {
  private final Trees trees;
  private final Elements elements;

  private SourceOrder(Trees trees, Elements elements) {
    this.trees = trees;
    this.elements = elements;
  }

  /** The order for the compiler that runs the processor. */
  public static SourceOrder forEnvironment(ProcessingEnvironment env) {
    Trees trees;
    try {
      trees = Trees.instance(env);
    } catch (IllegalArgumentException | LinkageError notJavac) {
      trees = null;
    }
    return new SourceOrder(trees, env.getElementUtils());
  }

  /** Where something is: what a diagnostic is reported on. */
  public record Site(Element element, AnnotationMirror mirror, AnnotationValue value) {}

  /**
   * {@code items} in source order of their sites (a new list; ties keep their order). {@code roots}: the
   * round's root elements, in the compiler's order, which orders the top-level types of one file where no
   * offset does. javac gives them in the order written; ecj in no particular order (a hash set), so under
   * ecj each type's diagnostics are in source order, and a file's types in the order reported.
   */
  public <T> List<T> sort(List<T> items, Function<T, Site> site, Collection<? extends Element> roots) {
    this.roots.clear();
    for (Element root : roots) {
      this.roots.putIfAbsent(root, this.roots.size());
    }
    Map<Object, List<Keyed<T>>> byFile = new LinkedHashMap<>();
    int index = 0;
    for (T item : items) {
      Keyed<T> k = key(item, site.apply(item), index++);
      byFile.computeIfAbsent(k.file(), f -> new ArrayList<>()).add(k);
    }
    List<T> out = new ArrayList<>(items.size());
    for (List<Keyed<T>> file : byFile.values()) {
      boolean offsets = file.stream().allMatch(k -> k.offset() >= 0);
      Comparator<Keyed<T>> order = offsets
          ? Comparator.<Keyed<T>>comparingLong(Keyed::offset).thenComparing(Keyed::path, SourceOrder::compare)
          : Comparator.comparing(Keyed::path, SourceOrder::compare);
      file.stream().sorted(order.thenComparingInt(Keyed::index)).forEach(k -> out.add(k.item()));
    }
    return out;
  }

  /** One item, with its file (any object equal for one file), offset in it (-1: unknown) and model path. */
  private record Keyed<T>(T item, Object file, long offset, List<Integer> path, int index) {}

  private final Map<Element, Integer> roots = new HashMap<>();

  private <T> Keyed<T> key(T item, Site site, int index) {
    Object file = null;
    long offset = -1;
    if (trees != null) {
      try {
        TreePath path = path(site);
        if (path != null) {
          CompilationUnitTree unit = path.getCompilationUnit();
          file = unit;
          offset = offset(unit, path.getLeaf(), site);
        }
      } catch (RuntimeException e) {
        // the model path below orders it
      }
    }
    if (file == null) {
      file = fileOf(site.element());
    }
    return new Keyed<>(item, file, offset, modelPath(site), index);
  }

  private TreePath path(Site site) {
    if (site.mirror() != null && site.value() != null) {
      TreePath p = trees.getPath(site.element(), site.mirror(), site.value());
      if (p != null) {
        return p;
      }
    }
    if (site.mirror() != null) {
      TreePath p = trees.getPath(site.element(), site.mirror());
      if (p != null) {
        return p;
      }
    }
    return trees.getPath(site.element());
  }

  /**
   * The offset javac shows the diagnostic at, near enough for ordering: an annotation or value where it
   * starts; a declaration (reported on the element alone) after its modifiers and annotations, where its
   * name is.
   */
  private long offset(CompilationUnitTree unit, Tree leaf, Site site) {
    SourcePositions positions = trees.getSourcePositions();
    if (site.mirror() == null) {
      Tree before = switch (leaf) {
        case VariableTree v -> v.getType() != null ? v.getType() : v.getModifiers();
        case ClassTree c -> c.getModifiers();
        case MethodTree m -> m.getModifiers();
        default -> null;
      };
      if (before != null && !(before instanceof ModifiersTree mods && mods.getFlags().isEmpty()
          && mods.getAnnotations().isEmpty())) {
        long end = positions.getEndPosition(unit, before);
        if (end >= 0) {
          return end;
        }
      }
    }
    return positions.getStartPosition(unit, leaf);
  }

  /** The element's source file, where the compiler says (ecj does), else its outermost type. */
  private Object fileOf(Element element) {
    try {
      JavaFileObject file = elements.getFileObjectOf(element);
      if (file != null) {
        return file.toUri();
      }
    } catch (RuntimeException unsupported) {
      // below
    }
    return outermost(element);
  }

  private static Element outermost(Element e) {
    while (e.getEnclosingElement() != null && !(e.getEnclosingElement() instanceof PackageElement)) {
      e = e.getEnclosingElement();
    }
    return e;
  }

  /**
   * The site's place in the model: for each element from the outermost type down, its index among its
   * enclosing element's members ({@code [1, i]}); then, on the site's element, its annotation's index
   * ({@code [0, a]}), the attribute's and, for an array entry, the entry's.
   */
  private List<Integer> modelPath(Site site) {
    List<Integer> path = new ArrayList<>();
    List<Element> chain = new ArrayList<>();
    for (Element e = site.element(); e != null && !(e instanceof PackageElement); e = e.getEnclosingElement()) {
      chain.addFirst(e);
    }
    Element root = chain.getFirst();
    path.add(roots.computeIfAbsent(root, r -> roots.size()));
    for (int i = 1; i < chain.size(); i++) {
      path.add(1);
      path.add(chain.get(i - 1).getEnclosedElements().indexOf(chain.get(i)));
    }
    if (site.mirror() != null) {
      path.add(0);
      path.add(site.element().getAnnotationMirrors().indexOf(site.mirror()));
      if (site.value() != null) {
        int attribute = 0;
        for (Map.Entry<? extends ExecutableElement, ? extends AnnotationValue> e
            : site.mirror().getElementValues().entrySet()) {
          AnnotationValue v = e.getValue();
          if (v.equals(site.value())) {
            path.add(attribute);
            break;
          }
          if (v.getValue() instanceof List<?> entries && entries.contains(site.value())) {
            path.add(attribute);
            path.add(entries.indexOf(site.value()));
            break;
          }
          attribute++;
        }
      }
    }
    return path;
  }

  /** Lexicographic; a prefix first (an element before what is inside it). */
  private static int compare(List<Integer> a, List<Integer> b) {
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      int c = Integer.compare(a.get(i), b.get(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size());
  }
}
