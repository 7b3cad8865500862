package dev.commplan.samples;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Mesh;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A mesh as the {@code --mesh} option gives it ({@code dp=2,tp=4}): named axes, outermost first, laid out
 * row-major as {@link Mesh} lays them out (the last axis varies fastest). What the samples print about
 * the layout (coordinates, groups) is computed here from the sizes alone; the communicators come from
 * {@link #build}.
 *
 * @param names the axes, outermost first
 * @param sizes each axis's size
 */
record MeshShape(List<String> names, int[] sizes) {
  MeshShape {
    names = List.copyOf(names);
    sizes = sizes.clone();
  }

  /**
   * Parses {@code dp=2,tp=4}: exactly the axes {@code axes}, each once, in any order, each a whole number
   * ≥ 1. The message of the {@link IllegalArgumentException} is one line that says what to write.
   */
  static MeshShape parse(String text, List<String> axes, String sample) {
    List<String> names = new ArrayList<>();
    List<Integer> sizes = new ArrayList<>();
    String example = String.join(",", axes.stream().map(a -> a + "=2").toList());
    for (String part : text.split(",", -1)) {
      String[] kv = part.trim().split("=", -1);
      if (kv.length != 2 || kv[0].isBlank()) {
        throw new IllegalArgumentException("--mesh '" + text + "': each axis is name=size, as in " + example);
      }
      String name = kv[0].trim();
      if (!axes.contains(name)) {
        throw new IllegalArgumentException("--mesh '" + text + "': " + sample + " has no axis '" + name + "'; its axes are "
            + String.join(", ", axes));
      }
      if (names.contains(name)) {
        throw new IllegalArgumentException("--mesh '" + text + "': axis '" + name + "' is given twice");
      }
      int size;
      try {
        size = Integer.parseInt(kv[1].trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--mesh '" + text + "': the size of " + name + " is a whole number, not '"
            + kv[1].trim() + "'");
      }
      if (size < 1) {
        throw new IllegalArgumentException("--mesh '" + text + "': the size of " + name + " must be at least 1, was "
            + size);
      }
      names.add(name);
      sizes.add(size);
    }
    List<String> missing = axes.stream().filter(a -> !names.contains(a)).toList();
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException("--mesh '" + text + "': " + sample + " needs the axes " + String.join(", ", axes)
          + ", and " + String.join(", ", missing) + (missing.size() == 1 ? " is" : " are") + " missing (for example "
          + example + ")");
    }
    return new MeshShape(names, sizes.stream().mapToInt(Integer::intValue).toArray());
  }

  /** {@return the number of ranks: the product of the sizes} */
  int ranks() {
    int n = 1;
    for (int size : sizes) {
      n *= size;
    }
    return n;
  }

  int size(String axis) {
    return sizes[index(axis)];
  }

  /** {@code rank}'s coordinate along {@code axis}. */
  int coordinate(int rank, String axis) {
    int i = index(axis);
    int stride = 1;
    for (int j = sizes.length - 1; j > i; j--) {
      stride *= sizes[j];
    }
    return (rank / stride) % sizes[i];
  }

  /** The world ranks of {@code axis}'s groups, each in its ranks' order along the axis. */
  List<List<Integer>> groups(String axis) {
    List<List<Integer>> groups = new ArrayList<>();
    int n = ranks();
    boolean[] seen = new boolean[n];
    int i = index(axis);
    int stride = 1;
    for (int j = sizes.length - 1; j > i; j--) {
      stride *= sizes[j];
    }
    for (int r = 0; r < n; r++) {
      if (seen[r]) {
        continue;
      }
      int first = r - coordinate(r, axis) * stride;
      List<Integer> group = new ArrayList<>();
      for (int k = 0; k < sizes[i]; k++) {
        group.add(first + k * stride);
        seen[first + k * stride] = true;
      }
      groups.add(group);
    }
    return groups;
  }

  /** {@code [dp=2, tp=4]}, as {@link Mesh} names itself. */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < names.size(); i++) {
      s.append(i == 0 ? "" : ", ").append(names.get(i)).append('=').append(sizes[i]);
    }
    return s.append(']').toString();
  }

  /** {@code 2x4}. */
  String product() {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < sizes.length; i++) {
      s.append(i == 0 ? "" : "x").append(sizes[i]);
    }
    return s.toString();
  }

  /** {@code dp 1, tp 3}: {@code rank}'s coordinates. */
  String coordinates(int rank) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < names.size(); i++) {
      s.append(i == 0 ? "" : ", ").append(names.get(i)).append(' ').append(coordinate(rank, names.get(i)));
    }
    return s.toString();
  }

  /** {@code rank = 4 dp + tp}, {@code rank = 4 pp + 2 dp + tp}: the row-major layout as a formula. */
  String layout() {
    StringBuilder s = new StringBuilder("rank = ");
    int stride = ranks();
    for (int i = 0; i < names.size(); i++) {
      stride /= sizes[i];
      s.append(i == 0 ? "" : " + ").append(stride == 1 ? "" : stride + " ").append(names.get(i));
    }
    return s.toString();
  }

  /** {@code [0, 1, 2, 3] [4, 5, 6, 7]}: the groups along {@code axis}, shortened past 8 groups. */
  String groupsText(String axis) {
    List<List<Integer>> groups = groups(axis);
    StringBuilder s = new StringBuilder();
    for (int g = 0; g < groups.size(); g++) {
      if (g == 8 && groups.size() > 9) {
        s.append(String.format(Locale.ROOT, " ... (%d groups)", groups.size()));
        break;
      }
      s.append(g == 0 ? "" : " ").append(groups.get(g));
    }
    return s.toString();
  }

  /** Builds this mesh over {@code world} (collective: every rank of the world calls it). */
  Mesh build(Communicator world) {
    Mesh.Builder builder = Mesh.builder(world);
    for (int i = 0; i < names.size(); i++) {
      builder.axis(names.get(i), sizes[i]);
    }
    return builder.build();
  }

  private int index(String axis) {
    int i = names.indexOf(axis);
    if (i < 0) {
      throw new IllegalArgumentException("mesh " + this + " has no axis '" + axis + "'");
    }
    return i;
  }
}
